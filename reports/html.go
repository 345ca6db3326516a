package reports

import (
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/mcp-conform/mcp-conform/protocol"
)

// DefaultSpecBase is where the HTML report links specification references
// by default: the public MCP site, which serves a spec page
// "specification/2026-07-28/basic/patterns/cancellation.mdx" at
// https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/cancellation.
const DefaultSpecBase = "https://modelcontextprotocol.io/"

// HTMLOptions tunes WriteHTML.
type HTMLOptions struct {
	// SpecBase is the URL or relative path specification references are
	// linked under. Empty means DefaultSpecBase. On the public site
	// (modelcontextprotocol.io) a page is linked without its ".mdx" and only
	// "specification/…" and "extensions/…" references get a link; under any
	// other base (e.g. "spec/" for a copy of the spec tree beside the
	// report) the reference is appended as it is.
	SpecBase string
	// MaxDiagramRows bounds the rows of one sequence diagram; zero means
	// DefaultMaxDiagramRows. Longer transcripts keep their beginning and
	// end, and say how many entries were left out.
	MaxDiagramRows int
}

//go:embed html.tmpl
var htmlTemplateText string

var htmlTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"lower": func(s Status) string { return strings.ToLower(string(s)) },
}).Parse(htmlTemplateText))

// WriteHTML writes r as one self-contained HTML page a person reads: no
// script, no stylesheet or image fetched from anywhere, inline CSS and
// inline SVG only. At the top, the target (name, transport, protocol
// version and era, mutant, command or URL) and the counts by status and
// level; then the checks that did not pass; then the seeds' capstone artefacts as sections, each listing the
// checks of its area (or "not run"): cancellation race per transport,
// retry-class table, idempotency record and mismatch, concurrent same-key
// transcript, restart check, bounded-buffer overload, SSE headers and idle
// policy, reconnect plan, durable task cancellation trace; then every check
// with its status, reason, the clause it enforces and links to its spec
// pages. The FAIL, WARN and ERROR checks come first, right under the
// summary, each with its transcript as a sequence diagram (client · proxy ·
// server) and as text. Everything from the
// target is escaped by html/template or by the diagram writer.
func WriteHTML(w io.Writer, r *Report, opts HTMLOptions) error {
	if r == nil {
		return errors.New("reports: nil report")
	}
	page := buildPage(r, opts)
	if err := htmlTemplate.Execute(w, page); err != nil {
		return fmt.Errorf("reports: write HTML report: %w", err)
	}
	return nil
}

// htmlPage is what the template renders.
type htmlPage struct {
	Title      string
	R          *Report
	Eras       []string
	Summary    Summary
	Levels     []levelRow
	Verdict    string
	VerdictCSS string
	Sections   []htmlSection
	// Problems are the FAIL, WARN and ERROR checks, with their evidence;
	// Checks are the others.
	Problems []htmlCheck
	Checks   []htmlCheck
	SpecBase string
}

// levelRow counts the checks of one level by status.
type levelRow struct {
	Level string
	Summary
	Total int
}

// htmlCheck is one check as the page shows it.
type htmlCheck struct {
	Check
	// SourceText says where the clause comes from, in words.
	SourceText string
	Anchor     string
	Specs      []specRef
	Duration   string
	Evidence   bool
	Diagram    template.HTML
	Omitted    int
	Entries    int
	Transcript string
}

// specRef is one specification reference and its link (empty: no link).
type specRef struct {
	Path string
	Href string
}

// htmlSection is one capstone artefact of the report.
type htmlSection struct {
	Anchor string
	Title  string
	What   string
	Checks []htmlCheckRef
	// Retry is set for the retry-class table section.
	Retry      bool
	RetryRows  []ToolClass
	NotRun     bool
	Transports []string
}

// htmlCheckRef points from a section to a check, with its diagram when the
// check passed (failing checks show theirs in the check list).
type htmlCheckRef struct {
	Check
	Anchor  string
	Diagram template.HTML
}

// capstone describes one artefact section: which checks belong to it.
type capstone struct {
	anchor, title, what string
	match               func(id string) bool
	retry               bool
}

var (
	concurrentID = regexp.MustCompile(`CONCURRENT|PARALLEL|RACE|SAME-KEY`)
	restartID    = regexp.MustCompile(`RESTART|DURAB|CRASH`)
)

// capstones are the sections the seeds ask the report for, in order.
var capstones = []capstone{
	{anchor: "art-cancel", title: "Cancellation race per transport",
		what:  "Cancelling in flight, completion winning the race, malformed and unknown cancellations; on HTTP, closing the response stream.",
		match: prefix("CANCEL-")},
	{anchor: "art-retry", title: "Retry-class table", retry: true,
		what: "For each exposed tool, how a client may retry it after losing the response: Safe (read-only: retry), Conditional (keyed mutation: retry with the same key and arguments), Unsafe (reconcile first)."},
	{anchor: "art-idem", title: "Idempotency record and mismatch",
		what: "A retried mutation with the same key returns the stored result and runs once; the same key with other arguments is rejected.",
		match: func(id string) bool {
			return strings.HasPrefix(id, "IDEM-") && !concurrentID.MatchString(id) && !restartID.MatchString(id)
		}},
	{anchor: "art-concurrent", title: "Concurrent same-key transcript",
		what: "Two connections racing one idempotency key produce one execution.",
		match: func(id string) bool {
			return strings.HasPrefix(id, "IDEM-") && concurrentID.MatchString(id) && !restartID.MatchString(id)
		}},
	{anchor: "art-restart", title: "Restart check",
		what:  "The stored result and durable state survive a restart of the server.",
		match: func(id string) bool { return restartID.MatchString(id) }},
	{anchor: "art-flow", title: "Bounded-buffer overload",
		what:  "Under a slow consumer the final response arrives; progress may be coalesced but stays monotonic; the buffer stays bounded.",
		match: prefix("FLOW-")},
	{anchor: "art-sse", title: "SSE headers and idle policy",
		what:  "Anti-buffering headers, comment keep-alives on silent streams, and the two clocks (idle and maximum) of a timeout.",
		match: func(id string) bool { return strings.HasPrefix(id, "SSE-") || strings.HasPrefix(id, "TIMEOUT-") }},
	{anchor: "art-reconnect", title: "Reconnect plan",
		what:  "After a cut stream: a new request with a new id, resumption only where the version allows it, refetch and dedupe.",
		match: prefix("RECONNECT-")},
	{anchor: "art-task", title: "Durable task cancellation trace",
		what:  "tasks/cancel moves the task to a terminal status that never changes afterwards.",
		match: prefix("TASK-")},
}

func prefix(p string) func(string) bool {
	return func(id string) bool { return strings.HasPrefix(id, p) }
}

// buildPage prepares everything the template shows.
func buildPage(r *Report, opts HTMLOptions) htmlPage {
	base := opts.SpecBase
	if base == "" {
		base = DefaultSpecBase
	}
	p := htmlPage{
		Title:    "mcp-conform report: " + orDefault(r.Target.Name, "target"),
		R:        r,
		Summary:  Summarize(r.Checks),
		SpecBase: base,
	}
	versions := strings.Split(r.Target.ProtocolVersion, ",")
	if strings.TrimSpace(r.Target.ProtocolVersion) == "" {
		// The target's version is not recorded: show those the checks ran in.
		versions = nil
		for _, c := range r.Checks {
			if c.ProtocolVersion != "" && !slices.Contains(versions, c.ProtocolVersion) {
				versions = append(versions, c.ProtocolVersion)
			}
		}
	}
	for _, v := range versions {
		if v = strings.TrimSpace(v); v != "" {
			p.Eras = append(p.Eras, v+" ("+eraOf(v)+")")
		}
	}
	p.Levels = levelCounts(r.Checks)
	counted := countedFailures(r)
	switch code := RunExitCode(r, false, false); code {
	case 0:
		p.Verdict, p.VerdictCSS = "PASS: no MUST-level check failed (exit 0)", "pass"
		if counted.Warn > 0 {
			p.Verdict = fmt.Sprintf("PASS with %d warning(s): a SHOULD was broken (exit 0; 1 with --strict)", counted.Warn)
			p.VerdictCSS = "warn"
		}
	case 1:
		p.Verdict, p.VerdictCSS = fmt.Sprintf("FAIL: %d check(s) broke a MUST (exit 1)", counted.Fail), "fail"
	default:
		p.Verdict, p.VerdictCSS = fmt.Sprintf("ERROR: the harness could not run %d check(s) (exit 2)", counted.Error), "error"
	}
	if r.Baseline != nil && r.Baseline.Expected > 0 {
		p.Verdict += fmt.Sprintf("; %d failure(s) expected by the baseline not counted", r.Baseline.Expected)
	}

	anchors := map[string]int{}
	anchorOf := make([]string, len(r.Checks))
	for i, c := range r.Checks {
		a := "check-" + anchorName(c.ID)
		if c.Transport != "" {
			a += "-" + anchorName(c.Transport)
		}
		if c.ProtocolVersion != "" {
			a += "-" + anchorName(c.ProtocolVersion)
		}
		if n := anchors[a]; n > 0 {
			a += "-" + strconv.Itoa(n+1)
		}
		anchors[a]++
		anchorOf[i] = a
	}

	for _, cs := range capstones {
		s := htmlSection{Anchor: cs.anchor, Title: cs.title, What: cs.what, Retry: cs.retry}
		if cs.retry {
			s.RetryRows = r.RetryClasses
			s.NotRun = len(r.RetryClasses) == 0
			p.Sections = append(p.Sections, s)
			continue
		}
		for i, c := range r.Checks {
			if !cs.match(c.ID) {
				continue
			}
			ref := htmlCheckRef{Check: c, Anchor: anchorOf[i]}
			if !keepsTranscript(c.Status) && c.Status != Skip && len(c.Transcript) > 0 {
				ref.Diagram = template.HTML(sequenceDiagramLanes(c.Transcript, opts.MaxDiagramRows, lanesOf(r)).SVG) // escaped by sequenceDiagram
			}
			s.Checks = append(s.Checks, ref)
			if !slices.Contains(s.Transports, c.Transport) {
				s.Transports = append(s.Transports, c.Transport)
			}
		}
		s.NotRun = len(s.Checks) == 0
		p.Sections = append(p.Sections, s)
	}

	for i, c := range r.Checks {
		hc := htmlCheck{Check: c, Anchor: anchorOf[i], Duration: strconv.FormatFloat(finite(c.DurationMs), 'f', 1, 64)}
		if c.Source != "" {
			hc.SourceText = c.Source.Describe(c.ProtocolVersion)
		}
		for _, s := range c.Spec {
			hc.Specs = append(hc.Specs, specRef{Path: s, Href: specHref(base, s)})
		}
		if keepsTranscript(c.Status) && len(c.Transcript) > 0 {
			d := sequenceDiagramLanes(c.Transcript, opts.MaxDiagramRows, lanesOf(r))
			hc.Evidence = true
			hc.Diagram = template.HTML(d.SVG) // escaped by sequenceDiagram
			hc.Omitted = d.Omitted
			hc.Entries = len(c.Transcript)
			var b strings.Builder
			FormatTranscript(&b, c.Transcript)
			hc.Transcript = b.String()
		}
		if keepsTranscript(c.Status) {
			p.Problems = append(p.Problems, hc)
		} else {
			p.Checks = append(p.Checks, hc)
		}
	}
	return p
}

// levelCounts counts checks by level and status, MUST first.
func levelCounts(checks []Check) []levelRow {
	var rows []levelRow
	for _, l := range []Level{Must, Should, ""} {
		var sub []Check
		for _, c := range checks {
			if c.Level == l || l == "" && c.Level != Must && c.Level != Should {
				sub = append(sub, c)
			}
		}
		if len(sub) == 0 {
			continue
		}
		name := string(l)
		if name == "" {
			name = "other"
		}
		rows = append(rows, levelRow{Level: name, Summary: Summarize(sub), Total: len(sub)})
	}
	return rows
}

// eraOf names the wire contract of a protocol version.
func eraOf(v string) string {
	switch {
	case !protocol.Version(v).Before(protocol.V20260728):
		return "stateless era"
	case strings.HasPrefix(v, "2025-"):
		return "stateful era"
	}
	return "unknown era"
}

// specHref links a specification reference under base, or "" when it has
// no page there.
func specHref(base, ref string) string {
	if ref == "" {
		return ""
	}
	if u, err := url.Parse(base); err == nil && u.Host == "modelcontextprotocol.io" {
		if !strings.HasPrefix(ref, "specification/") && !strings.HasPrefix(ref, "extensions/") {
			return ""
		}
		ref = strings.TrimSuffix(ref, ".mdx")
	}
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	return base + ref
}

// anchorName keeps the characters of s that are safe in a fragment.
func anchorName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
			b.WriteRune(r)
		case r >= 'A' && r <= 'Z':
			b.WriteRune(r + 'a' - 'A')
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

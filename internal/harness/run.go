package harness

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/formatter"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/protocol"
	"github.com/mcp-conform/mcp-conform/reports"
)

// RunOptions selects and displays the checks of an in-process run.
type RunOptions struct {
	// LabelFilter and Focus select checks as ginkgo's flags do.
	LabelFilter string
	Focus       []string
	// OnResult is called after each check, with the count so far and the
	// number of checks selected.
	OnResult func(done, total int, c reports.Check)
	// ToolVersion is written in the report.
	ToolVersion string
	// Budget bounds the whole run; zero means 15 minutes. Checks still
	// running when it ends are interrupted and reported as ERROR.
	Budget time.Duration
}

var registerOnce sync.Once

// Planned counts the check runs a configuration and options select: each
// selected check once per target it applies to.
func Planned(cfg *Config, opts RunOptions) (int, error) {
	checks, err := Selected(opts)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, c := range checks {
		n += len(plannedTargets(cfg, opts, c))
	}
	return n, nil
}

// Selected returns the checks the options select, in catalog order.
func Selected(opts RunOptions) ([]*Check, error) {
	filter, err := labelFilter(opts)
	if err != nil {
		return nil, err
	}
	var focus []*regexp.Regexp
	for _, f := range opts.Focus {
		re, err := regexp.Compile(f)
		if err != nil {
			return nil, fmt.Errorf("--focus %q: %w", f, err)
		}
		focus = append(focus, re)
	}
	var out []*Check
	for _, c := range catalog {
		if c.Passive {
			continue // no spec of its own: see selectsPassive
		}
		if !slices.ContainsFunc(c.Transports, func(t string) bool { return filter(c.Labels(t)) }) {
			continue
		}
		if len(focus) > 0 && !slices.ContainsFunc(focus, func(re *regexp.Regexp) bool { return focusMatches(re, c) }) {
			continue
		}
		out = append(out, c)
	}
	return out, nil
}

// focusMatches reports whether a --focus regexp selects c: it matches the
// check's id, its title, or "AREA ID TITLE" (so that an anchored
// '^SSE-HEARTBEAT$' names one check and an unanchored 'PROGRESS' or
// 'cancel' keeps selecting what it did).
func focusMatches(re *regexp.Regexp, c *Check) bool {
	return re.MatchString(c.ID) || re.MatchString(c.Title) || re.MatchString(c.Area()+" "+c.ID+" "+c.Title)
}

// focusFilter is the label filter that runs exactly the selected checks
// under Ginkgo: Ginkgo's own focus would match a regexp against its spec's
// full text (the container, a target prefix, the id and the title), where
// an anchored id never matches.
func focusFilter(labelFilter string, selected []*Check) string {
	ids := make([]string, 0, len(selected))
	for _, c := range selected {
		ids = append(ids, "id:"+c.ID)
	}
	if len(ids) == 0 {
		ids = append(ids, "id:none-selected")
	}
	f := "(" + strings.Join(ids, " || ") + ")"
	if labelFilter != "" {
		f = "(" + labelFilter + ") && " + f
	}
	return f
}

// selectsPassive reports whether the options select passive check c
// (SCHEMA-VALID), whose results are made from the other checks' runs.
func selectsPassive(opts RunOptions, c *Check) bool {
	filter, err := labelFilter(opts)
	if err != nil || !slices.ContainsFunc(c.Transports, func(t string) bool { return filter(c.Labels(t)) }) {
		return false
	}
	for _, f := range opts.Focus {
		if re, err := regexp.Compile(f); err == nil && focusMatches(re, c) {
			return true
		}
	}
	return len(opts.Focus) == 0
}

// labelFilter compiles the options' --label-filter (nil: everything).
func labelFilter(opts RunOptions) (func([]string) bool, error) {
	if opts.LabelFilter == "" {
		return func([]string) bool { return true }, nil
	}
	f, err := types.ParseLabelFilter(opts.LabelFilter)
	if err != nil {
		return nil, fmt.Errorf("--label-filter: %w", err)
	}
	return f, nil
}

// plannedTargets are the targets a selected check runs against: those it
// applies to whose transport the label filter keeps (a check on both
// transports filtered by transport:http runs on HTTP only).
func plannedTargets(cfg *Config, opts RunOptions, c *Check) []*Manifest {
	filter, err := labelFilter(opts)
	if err != nil {
		return nil
	}
	var out []*Manifest
	for _, t := range targetsFor(cfg, c) {
		if filter(c.Labels(t.Transport)) {
			out = append(out, t)
		}
	}
	return out
}

// failRecorder is the minimal testing value RunSpecs needs.
type failRecorder struct{ failed bool }

func (f *failRecorder) Fail() { f.failed = true }

// Run runs the selected checks in this process against cfg's target and
// returns the report. define declares every check's Ginkgo specs (the
// catalog's Register); it is called once per process. Run may be called
// once per process.
func Run(cfg *Config, opts RunOptions, define func()) (*reports.Report, error) {
	selected, err := Selected(opts)
	if err != nil {
		return nil, err
	}
	total, err := Planned(cfg, opts)
	if err != nil {
		return nil, err
	}
	started := time.Now()
	done := 0
	Configure(cfg, func(c reports.Check) {
		done++
		if opts.OnResult != nil {
			opts.OnResult(done, total, c)
		}
	})
	registerOnce.Do(define)
	setSchemaOn(schemaCheck != nil && selectsPassive(opts, schemaCheck))
	setContentTypeOn(contentTypeCheck != nil && selectsPassive(opts, contentTypeCheck))
	setStructuredOn(selectsStructured(opts, selected))
	setUTF8On(utf8Check != nil && selectsPassive(opts, utf8Check))

	gomega.RegisterFailHandler(ginkgo.Fail)
	suiteCfg, repCfg := ginkgo.GinkgoConfiguration()
	suiteCfg.LabelFilter = opts.LabelFilter
	if len(opts.Focus) > 0 {
		suiteCfg.LabelFilter = focusFilter(opts.LabelFilter, selected)
	}
	suiteCfg.RandomSeed = 1
	suiteCfg.GracePeriod = 5 * time.Second
	suiteCfg.Timeout = opts.Budget
	if suiteCfg.Timeout <= 0 {
		suiteCfg.Timeout = 15 * time.Minute
	}
	repCfg.NoColor = true
	repCfg.Succinct = true
	stdout := formatter.ColorableStdOut
	formatter.ColorableStdOut = io.Discard
	defer func() { formatter.ColorableStdOut = stdout }()

	var t failRecorder
	ginkgo.RunSpecs(&t, "mcp-conform", suiteCfg, repCfg)
	signal.Reset(os.Interrupt)
	recordUnrun(config(), opts, selected, suiteCfg.Timeout)

	return BuildReport(cfg, opts.ToolVersion, started), nil
}

// recordUnrun reports the selected checks that never ran (Ginkgo skips the
// rest of the suite once its timeout ends it or a signal interrupts it) as
// ERROR, so that the report lists every selected check.
func recordUnrun(cfg *Config, opts RunOptions, selected []*Check, budget time.Duration) {
	ran := map[string]int{}
	for _, r := range Results() {
		ran[r.ID+"/"+r.Transport]++
	}
	for _, c := range selected {
		for _, t := range plannedTargets(cfg, opts, c) {
			if ran[c.ID+"/"+t.Transport] > 0 {
				ran[c.ID+"/"+t.Transport]--
				continue
			}
			res := reports.Check{ID: c.ID, Title: c.Title, Level: reports.Must, Status: reports.Error, Transport: t.Transport, ProtocolVersion: t.Spec, Clauses: slices.Clone(c.Clauses),
				Reason: fmt.Sprintf("not run: the run ended before this check started (--budget %s ran out, or the run was interrupted)", budget)}
			if vs := c.VersionsOn(t.Transport); len(vs) > 0 {
				r, _ := c.RuleOn(t.Transport, vs[0])
				res.Level, res.Spec, res.Clause, res.Source = r.Level, r.Pages(), r.Clause, r.SourceOf()
			}
			cfgMu.Lock()
			results = append(results, res)
			cfgMu.Unlock()
		}
	}
}

// BuildReport assembles the report of the checks recorded so far in this
// process, in catalog order.
func BuildReport(cfg *Config, toolVersion string, started time.Time) *reports.Report {
	res := Results()
	schemaMu.Lock()
	runs := slices.Clone(schemaRuns)
	schemaMu.Unlock()
	foldStructured(res, runs) // TOOLS-OUTPUT-SCHEMA, TOOLS-STRUCTURED-TEXT (structured.go)
	res = append(res, schemaResultsOf(runs)...)
	if schemaIsOn() {
		res = append(res, schemaGaps(res)...)
		schemaCutShort(res)
	}
	if contentTypeIsOn() {
		res = append(res, contentTypeResults()...)
		res = append(res, contentTypeGaps(res)...)
		passiveCutShort(contentTypeCheck, res)
	}
	if utf8IsOn() {
		res = append(res, utf8ResultsOf(runs)...)
		res = append(res, utf8Gaps(config(), res)...)
		passiveCutShort(utf8Check, res)
	}
	r := buildReport(cfg, toolVersion, started, res, NegotiatedVersion())
	cfgMu.Lock()
	tools := map[string][]map[string]any{}
	for m, p := range probed {
		if p != nil && p.tools != nil && tools[classKey(m)] == nil {
			tools[classKey(m)] = p.tools
		}
	}
	ev := evidence
	cfgMu.Unlock()
	r.RetryClasses = retryClasses(cfg, tools, ev, r.Checks)
	return r
}

// BuildReportFromGinkgo assembles the report from a Ginkgo suite report, as
// ReportAfterSuite receives it: under ginkgo -p it holds the specs of every
// parallel process.
func BuildReportFromGinkgo(cfg *Config, toolVersion string, gr ginkgo.Report) (*reports.Report, error) {
	var res []reports.Check
	var runs []schemaRun
	version := ""
	for _, sr := range gr.SpecReports {
		for _, e := range sr.ReportEntries {
			if e.Name != resultEntry {
				continue
			}
			ce, err := readCheckEntry(e.Value)
			if err != nil {
				return nil, fmt.Errorf("read result of %s: %w", sr.FullText(), err)
			}
			res = append(res, ce.Check)
			if ce.Schema != nil {
				runs = append(runs, *ce.Schema)
			}
			if ce.Version != "" {
				version = ce.Version
			}
		}
	}
	foldStructured(res, runs)
	res = append(res, schemaResultsOf(runs)...)
	res = append(res, contentTypeResultsOf(runs)...)
	res = append(res, utf8ResultsOf(runs)...)
	return buildReport(cfg, toolVersion, gr.StartTime, res, version), nil
}

// transportOrder sorts stdio before http.
func transportOrder(t string) string {
	if t == string(protocol.TransportStdio) {
		return "0"
	}
	return "1" + t
}

// readCheckEntry reads a result entry: the value itself in the process that
// ran the spec, JSON decoded into a map when it crossed from another one.
func readCheckEntry(v types.ReportEntryValue) (checkEntry, error) {
	if ce, ok := v.GetRawValue().(checkEntry); ok {
		return ce, nil
	}
	raw := []byte(v.AsJSON)
	if len(raw) == 0 {
		var err error
		if raw, err = json.Marshal(v.GetRawValue()); err != nil {
			return checkEntry{}, err
		}
	}
	var ce checkEntry
	err := json.Unmarshal(raw, &ce)
	return ce, err
}

func buildReport(cfg *Config, toolVersion string, started time.Time, res []reports.Check, version string) *reports.Report {
	cfg = cfg.WithDefaults()
	order := map[string]int{}
	for i, c := range catalog {
		order[c.ID] = i
	}
	slices.SortStableFunc(res, func(a, b reports.Check) int {
		if a.Transport != b.Transport {
			return strings.Compare(transportOrder(a.Transport), transportOrder(b.Transport))
		}
		if a.ProtocolVersion != b.ProtocolVersion {
			return strings.Compare(b.ProtocolVersion, a.ProtocolVersion)
		}
		return order[a.ID] - order[b.ID]
	})
	m := cfg.Targets[0]
	// A run whose negotiated version was not recorded (e.g. only HTTP
	// checks ran) names the versions its checks ran in instead.
	if cfg.Spec == AllVersions || version == "" {
		var vs []string
		for _, c := range res {
			if c.ProtocolVersion != "" && !slices.Contains(vs, c.ProtocolVersion) {
				vs = append(vs, c.ProtocolVersion)
			}
		}
		slices.Sort(vs)
		slices.Reverse(vs)
		version = strings.Join(vs, ",")
	}
	r := &reports.Report{
		Schema:    reports.SchemaV1,
		Tool:      reports.Tool{Name: "mcp-conform", Version: toolVersion},
		StartedAt: started.UTC(),
		Duration:  float64(time.Since(started).Microseconds()) / 1000,
		Target: reports.Target{
			Name: cfg.Name(), Transport: cfg.Transports(), ProtocolVersion: version,
			URL: m.URL, Mutant: cfg.Mutant,
		},
		Checks: res,
	}
	if len(m.Command) > 0 && len(cfg.Targets) == 1 {
		r.Target.Command = fmt.Sprint(m.Command)
	}
	if len(cfg.Targets) > 1 {
		r.Target.URL = ""
	}
	r.Summary = reports.Summarize(res)
	return r
}

// MergeReports joins the reports of runs that each checked a part of cfg
// (mcp-conform runs one process per protocol version under --spec all):
// every check in report order, the retry-class rows without repeats, the
// totals recomputed.
func MergeReports(cfg *Config, toolVersion string, started time.Time, parts []*reports.Report) *reports.Report {
	var res []reports.Check
	var rows []reports.ToolClass
	seen := map[string]bool{}
	for _, p := range parts {
		res = append(res, p.Checks...)
		for _, tc := range p.RetryClasses {
			k := tc.Target + "\x00" + tc.Tool + "\x00" + string(tc.Class)
			if !seen[k] {
				seen[k] = true
				rows = append(rows, tc)
			}
		}
	}
	r := buildReport(cfg, toolVersion, started, res, "")
	r.RetryClasses = rows
	return r
}

// schemaGaps makes the SCHEMA-VALID result of every transport whose checks
// were recorded but left no connection to validate (the target never
// started, or every check ended before one): ERROR, naming the first
// other ERROR, when no check there reached a verdict; otherwise SKIP. Without it the passive
// check would be missing from the report of a target that never started.
func schemaGaps(res []reports.Check) []reports.Check {
	return passiveGaps(schemaCheck, res, "no check received a message from the server on this transport: nothing to validate",
		"no message from the server to validate")
}

// contentTypeGaps is schemaGaps for HTTP-RESPONSE-CONTENT-TYPE.
func contentTypeGaps(res []reports.Check) []reports.Check {
	return passiveGaps(contentTypeCheck, res, "no check sent a request on this transport: no answer to judge",
		"no answer to judge")
}

// passiveGaps makes passive check c's result of every transport whose
// checks were recorded but left it nothing to judge: skip is the SKIP's
// reason, errPrefix the ERROR's (schemaGaps).
func passiveGaps(c *Check, res []reports.Check, skip, errPrefix string) []reports.Check {
	return passiveGapsIn(config(), c, res, skip, errPrefix)
}

// passiveGapsIn is passiveGaps for a run of configuration cfg: outside the
// versions c has rules for, a run of one target (not a part of a larger
// one) gets c's row "not in VERSION", as an active check's (targetsFor).
func passiveGapsIn(cfg *Config, c *Check, res []reports.Check, skip, errPrefix string) []reports.Check {
	if c == nil {
		return nil
	}
	has := map[string]bool{}
	for _, r := range res {
		if r.ID == c.ID {
			has[r.Transport] = true
		}
	}
	var order []string
	verdict := map[string]bool{}           // a check there reached a verdict
	firstErr := map[string]reports.Check{} // the first ERROR there
	version := map[string]string{}
	for _, r := range res {
		if r.ID == c.ID || has[r.Transport] {
			continue
		}
		if _, seen := version[r.Transport]; !seen {
			order = append(order, r.Transport)
			version[r.Transport] = ""
		}
		switch r.Status {
		case reports.Pass, reports.Fail, reports.Warn:
			verdict[r.Transport] = true
		case reports.Error:
			if _, ok := firstErr[r.Transport]; !ok {
				firstErr[r.Transport] = r
			}
		}
		if version[r.Transport] == "" {
			version[r.Transport] = r.ProtocolVersion
		}
	}
	var out []reports.Check
	for _, tr := range order {
		if !slices.Contains(c.Transports, tr) {
			continue // not a transport the check judges
		}
		v := version[tr]
		rule, ok := c.RuleOn(tr, v)
		reason := skip
		if !ok {
			vs := c.VersionsOn(tr)
			if len(vs) == 0 {
				continue
			}
			rule, _ = c.RuleOn(tr, vs[0])
			if v != "" {
				// A check of some versions only (HTTP-UTF8) outside
				// them: as an active check there, a row "not in" when
				// the run has one target (targetsFor), none otherwise.
				if cfg == nil || len(cfg.Targets) != 1 || cfg.Part {
					continue
				}
				reason = fmt.Sprintf("not in %s on %s (applies there to %s)", v, tr, strings.Join(vs, ", "))
			}
		}
		res := reports.Check{ID: c.ID, Title: c.Title, Level: rule.Level, Spec: rule.Pages(), Clause: rule.Clause,
			Source: rule.SourceOf(), Clauses: slices.Clone(c.Clauses), Transport: tr, ProtocolVersion: v, Status: reports.Skip,
			Reason: reason}
		if e, ok := firstErr[tr]; ok && !verdict[tr] && reason == skip {
			res.Status = reports.Error
			res.Reason = fmt.Sprintf("%s: no check on this transport reached it (%s: %s)", errPrefix, e.ID, e.Reason)
		}
		out = append(out, res)
	}
	return out
}

// schemaCutShort turns a SCHEMA-VALID PASS into an ERROR when the run was
// cut short (a check interrupted, or never run): the messages it judged are
// only those of the checks that ran, so "valid" is not its verdict. A
// violation it found stays a FAIL (a message it saw broke the schema).
func schemaCutShort(res []reports.Check) { passiveCutShort(schemaCheck, res) }

// passiveCutShort is schemaCutShort for passive check c.
func passiveCutShort(c *Check, res []reports.Check) {
	if c == nil {
		return
	}
	cut := false
	for _, r := range res {
		if r.ID != c.ID && r.Status == reports.Error && (strings.HasPrefix(r.Reason, "interrupted") || strings.HasPrefix(r.Reason, "not run")) {
			cut = true
			break
		}
	}
	if !cut {
		return
	}
	for i := range res {
		if res[i].ID == c.ID && res[i].Status == reports.Pass {
			res[i].Status = reports.Error
			res[i].Reason = "not run to its end: the run was cut short before every check ran (" + res[i].Reason + " so far)"
		}
	}
}

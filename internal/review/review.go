// Package review builds the reliability review of each tool a target
// exposes (`mcp-conform review`): the transport and how a call is cancelled
// on it, the timeout policy, the retry class (internal/retryclass, the same
// rule set as the run's table), the idempotency boundary, the flow-control
// checks and failure modes that apply, and the checks that exercise the
// tool — with their verdicts when a previous run's report is given.
package review

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/internal/retryclass"
	"github.com/mcp-conform/mcp-conform/protocol"
	"github.com/mcp-conform/mcp-conform/reports"
	"github.com/mcp-conform/mcp-conform/suites"
)

// Row is the reliability review of one tool on one target.
type Row struct {
	Target          string             `json:"target"`
	Transport       string             `json:"transport"`
	ProtocolVersion string             `json:"protocolVersion"`
	Tool            string             `json:"tool"`
	Title           string             `json:"title,omitempty"`
	Cancellation    string             `json:"cancellation"`
	Timeout         string             `json:"timeout"`
	Class           reports.RetryClass `json:"retryClass"`
	Evidence        []string           `json:"evidence"`
	Idempotency     string             `json:"idempotency"`
	Roles           []string           `json:"roles,omitempty"`
	FlowControl     []string           `json:"flowControl,omitempty"`
	FailureModes    []string           `json:"failureModes"`
	Checks          []Check            `json:"checks,omitempty"`
}

// Check is a check that exercises a tool, with its verdict when a report
// was given.
type Check struct {
	ID     string         `json:"id"`
	Status reports.Status `json:"status,omitempty"`
	Reason string         `json:"reason,omitempty"`
}

// Options are the review's settings.
type Options struct {
	// Idle and Max are a call's two clocks: idle (reset by progress) and
	// maximum (never reset).
	Idle, Max time.Duration
	// Report, when set, is a previous run's report: its verdicts are cited
	// and its retry-class rows (which saw the run's IDEM evidence) used.
	Report *reports.Report
}

// Targets reviews every tool of each target: it starts the target (or
// connects to its URL), negotiates as a run would and lists its tools.
func Targets(ctx context.Context, cfg *suites.Config, o Options) ([]Row, error) {
	var rows []Row
	for _, t := range cfg.Targets {
		tools, version, err := suites.TargetTools(ctx, cfg, t)
		if err != nil {
			return nil, fmt.Errorf("review %s (%s): %w", t.Name, t.Transport, err)
		}
		for _, tool := range tools {
			rows = append(rows, Tool(t, version, tool, o))
		}
	}
	return rows, nil
}

// Tool reviews one tool of target t, negotiated at version.
func Tool(t *suites.Manifest, version string, tool suites.ToolInfo, o Options) Row {
	row := Row{Target: t.Name, Transport: t.Transport, ProtocolVersion: version, Tool: tool.Name, Title: tool.Title}
	var roleNames []string
	for name, r := range t.Roles {
		if r.Tool == tool.Name {
			roleNames = append(roleNames, name)
		}
	}
	sort.Strings(roleNames)
	row.Roles = roleNames
	mut := t.Roles["mutation"]
	row.Class, row.Evidence = classify(t, tool, o.Report)
	keyed := ""
	if slices.Contains(roleNames, "mutation") {
		keyed = mut.Key
	}

	modern := clients.EraOf(version) == clients.EraModern
	switch {
	case t.Transport == string(protocol.TransportHTTP) && modern:
		row.Cancellation = "close the request's response stream (in " + version + " the disconnect is the cancellation)"
	case t.Transport == string(protocol.TransportHTTP):
		row.Cancellation = "send notifications/cancelled (in " + orDash(version) + " a disconnect is not a cancellation)"
	default:
		row.Cancellation = "send notifications/cancelled"
	}
	resets := "notifications/progress only"
	if t.Transport == string(protocol.TransportHTTP) {
		resets += " (not SSE comment keep-alives)"
	}
	row.Timeout = fmt.Sprintf("idle %s, reset by %s; max %s, never reset; on expiry cancel and ignore a late response",
		o.Idle, resets, o.Max)

	switch row.Class {
	case reports.Safe:
		row.Idempotency = "none needed: read-only; retry with a new JSON-RPC id"
	case reports.Conditional:
		if keyed != "" {
			row.Idempotency = fmt.Sprintf("argument %q: a retry keeps the key and the arguments, gets a new JSON-RPC id; the same key with other arguments must be rejected", keyed)
		} else {
			row.Idempotency = "the arguments: the run confirmed identical calls have one effect; a retry keeps them, gets a new JSON-RPC id"
		}
	default:
		row.Idempotency = "none: no idempotency key; do not retry automatically, reconcile first"
	}

	// The checks that exercise this tool are those needing a role it plays.
	seen := map[string]bool{}
	for _, c := range suites.Catalog() {
		if !slices.Contains(c.Transports, t.Transport) {
			continue
		}
		uses := slices.ContainsFunc(c.Roles, func(r string) bool { return slices.Contains(roleNames, r) })
		if !uses || seen[c.ID] {
			continue
		}
		seen[c.ID] = true
		rc := Check{ID: c.ID}
		if o.Report != nil {
			rc.Status, rc.Reason = verdictOf(o.Report, c.ID, t.Transport)
		}
		row.Checks = append(row.Checks, rc)
		if a := c.Area(); a == "FLOW" || a == "SSE" || a == "PROGRESS" {
			row.FlowControl = append(row.FlowControl, c.ID)
		}
	}
	row.FailureModes = failureModes(t.Transport, modern, roleNames, row.Class)
	return row
}

// classify is retryclass.Classify from the manifest and the annotations;
// when the report's retry-class table has a row for the tool on this
// target and transport, that row (decided by the same rules with the run's
// IDEM evidence) is used instead.
func classify(t *suites.Manifest, tool suites.ToolInfo, rep *reports.Report) (reports.RetryClass, []string) {
	if rep != nil {
		label := retryclass.TargetLabel(t.Name, t.Transport)
		for _, tc := range rep.RetryClasses {
			if tc.Tool == tool.Name && tc.Target == label {
				return tc.Class, append([]string{"from the report's retry-class table (the run's IDEM evidence)"}, tc.Evidence...)
			}
		}
	}
	mut, hasMut := t.Roles["mutation"]
	look, hasLook := t.Roles["lookup"]
	f := retryclass.Facts{Lookup: hasLook && look.Tool == tool.Name}
	if hasMut && mut.Tool == tool.Name {
		f.Mutation, f.Key = true, mut.Key
	}
	rt := retryclass.Tool{Name: tool.Name}
	if a := tool.Annotations; a != nil {
		rt.ReadOnly, rt.Destructive, rt.Idempotent = a.ReadOnlyHint, a.DestructiveHint, a.IdempotentHint
	}
	return retryclass.Classify(rt, f)
}

// failureModes lists what can go wrong for a call of this tool on this
// transport, and what a client does about it.
func failureModes(transport string, modern bool, roles []string, class reports.RetryClass) []string {
	var m []string
	switch class {
	case reports.Safe:
		m = append(m, "lost response: retry with a new JSON-RPC id")
	case reports.Conditional:
		m = append(m, "lost response: retry with the same key; the stored result comes back, the effect runs once",
			"duplicate delivery or two clients racing one key: one execution")
	default:
		m = append(m, "lost response: the effect may have run; reconcile (look it up) before any retry")
	}
	m = append(m, "late cancellation after completion: ignored, no reply")
	if slices.Contains(roles, "slow") {
		m = append(m, "progress after the final response or after cancellation (must not happen)",
			"timeout: idle clock reset by progress, maximum clock not")
	}
	if transport == string(protocol.TransportHTTP) {
		m = append(m, "buffering reverse proxy: needs Content-Type: text/event-stream, Cache-Control: no-cache, X-Accel-Buffering: no",
			"idle stream closed by an intermediary: SSE comment keep-alives")
		if modern {
			m = append(m, "broken response stream: the call is lost; re-issue it as a new request with a new id")
		} else {
			m = append(m, "broken response stream: resume with GET and Last-Event-ID where the server supports it, else re-issue")
		}
	}
	if slices.Contains(roles, "task") {
		m = append(m, "task cancelled while its worker finishes a step: the terminal status must not change")
	}
	return m
}

// verdictOf finds a check's verdict on a transport in a report.
func verdictOf(rep *reports.Report, id, transport string) (reports.Status, string) {
	for _, c := range rep.Checks {
		if c.ID == id && (c.Transport == "" || c.Transport == transport) {
			return c.Status, c.Reason
		}
	}
	return "", "not in the report"
}

// WriteJSON writes the rows as {"tools": [...]}.
func WriteJSON(w io.Writer, rows []Row) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Rows []Row `json:"tools"`
	}{rows})
}

// WriteText prints the review as text, one block per tool; withReport adds
// each check's verdict.
func WriteText(w io.Writer, rows []Row, withReport bool) error {
	var b strings.Builder
	target := ""
	for _, r := range rows {
		if t := r.Target + " (" + r.Transport + ", protocol " + orDash(r.ProtocolVersion) + ")"; t != target {
			target = t
			fmt.Fprintf(&b, "review of %s\n\n", t)
		}
		title := ""
		if r.Title != "" {
			title = "  (" + r.Title + ")"
		}
		fmt.Fprintf(&b, "tool %s%s\n", r.Tool, title)
		line := func(k, v string) { fmt.Fprintf(&b, "  %-15s %s\n", k, v) }
		line("transport", r.Transport)
		line("cancellation", r.Cancellation)
		line("timeout policy", r.Timeout)
		line("retry class", string(r.Class)+" ("+strings.Join(r.Evidence, "; ")+")")
		line("idempotency", r.Idempotency)
		line("roles", orDash(strings.Join(r.Roles, ", ")))
		line("flow control", orDash(strings.Join(r.FlowControl, ", ")))
		for i, m := range r.FailureModes {
			k := ""
			if i == 0 {
				k = "failure modes"
			}
			line(k, "- "+m)
		}
		if len(r.Checks) == 0 {
			line("checks", "none exercise this tool (declare it in a manifest role)")
		}
		for i, c := range r.Checks {
			k := ""
			if i == 0 {
				k = "checks"
			}
			v := c.ID
			if withReport {
				v += " " + orDash(string(c.Status))
				if c.Status != reports.Pass && c.Reason != "" {
					v += ": " + firstLine(c.Reason, 120)
				}
			}
			line(k, v)
		}
		b.WriteByte('\n')
	}
	if len(rows) == 0 {
		b.WriteString("the target exposes no tools\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// firstLine is the first line of s, cut to n bytes.
func firstLine(s string, n int) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

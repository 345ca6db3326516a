package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcp-conform/mcp-conform/fixtures"
	"github.com/mcp-conform/mcp-conform/reports"
	"github.com/mcp-conform/mcp-conform/suites"
)

type reviewFlags struct {
	stdio, url, manifest, mutant string
	spec, report, format         string
	idle, maxTimeout             time.Duration
	startTimeout, opTimeout      time.Duration
}

func newReviewCmd() *cobra.Command {
	var f reviewFlags
	cmd := &cobra.Command{
		Use:   "review",
		Short: "Print the reliability review of each tool a target exposes",
		Long: `Connect to the target, list its tools and print, for each one, the reliability
review of the seeds: transport and how a call is cancelled on it, the timeout
policy (idle clock reset by progress, maximum never reset), the retry class
(Safe: read-only, retry with a new id; Conditional: a keyed mutation, retry with
the same key and arguments; Unsafe: reconcile before any retry), the idempotency
boundary (the key argument), the flow-control checks and the failure modes that
apply, and the checks that exercise the tool. With --report, each row cites the
verdicts of a previous run's JSON report.

The retry class follows the manifest first (the application contract: a
"mutation" role with a key is Conditional, without one Unsafe), then the tool's
annotations (readOnlyHint: true is Safe; anything else may mutate: Unsafe).
Annotations are hints from the server, untrusted by the specification.

With no target, the built-in reference server is reviewed on both transports.`,
		Example: `  mcp-conform review
  mcp-conform review --manifest fixtures/targets/server-everything.yaml
  mcp-conform run --json report.json && mcp-conform review --report report.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runReview(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.stdio, "stdio", "", "command line of a stdio MCP server to review")
	fl.StringVar(&f.url, "url", "", "URL of a running Streamable HTTP MCP server")
	fl.StringVar(&f.manifest, "manifest", "", "target manifest (YAML): its roles decide retry classes and idempotency keys")
	fl.StringVar(&f.mutant, "mutant", "", "built-in target with this mutant switched on")
	fl.StringVar(&f.spec, "spec", "", "force a protocol version (default: the newest the server accepts)")
	fl.StringVar(&f.report, "report", "", "JSON report of a previous run (mcp-conform run --json): cite its verdicts")
	fl.StringVar(&f.format, "format", "text", "output: text or json")
	fl.DurationVar(&f.idle, "idle-timeout", 10*time.Second, "idle clock of a call: how long without progress before it is cancelled")
	fl.DurationVar(&f.maxTimeout, "call-timeout", 30*time.Second, "maximum clock of a call (never reset), as run --call-timeout")
	fl.DurationVar(&f.startTimeout, "start-timeout", 15*time.Second, "bound on starting the target and negotiating a version")
	fl.DurationVar(&f.opTimeout, "op-timeout", 5*time.Second, "bound on tools/list")
	return cmd
}

// ReviewRow is the reliability review of one tool on one target.
type ReviewRow struct {
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
	Checks          []ReviewCheck      `json:"checks,omitempty"`
}

// ReviewCheck is a check that exercises a tool, with its verdict when a
// report was given.
type ReviewCheck struct {
	ID     string         `json:"id"`
	Status reports.Status `json:"status,omitempty"`
	Reason string         `json:"reason,omitempty"`
}

func runReview(cmd *cobra.Command, f reviewFlags) error {
	targets := 0
	for _, s := range []string{f.stdio, f.url, f.manifest} {
		if s != "" {
			targets++
		}
	}
	switch {
	case targets > 1:
		return usageError{errors.New("give at most one of --stdio, --url and --manifest")}
	case f.mutant != "" && targets > 0:
		return usageError{errors.New("--mutant applies to the built-in target only")}
	case f.mutant != "" && !fixtures.ValidMutant(f.mutant):
		return usageError{fmt.Errorf("unknown mutant %q (see 'mcp-conform fixture --list')", f.mutant)}
	case f.spec != "" && !isKnownVersion(f.spec):
		return usageError{fmt.Errorf("--spec %q: known versions are 2026-07-28, 2025-11-25, 2025-06-18", f.spec)}
	case f.format != "text" && f.format != "json":
		return usageError{fmt.Errorf("--format %q: text or json", f.format)}
	}
	ts, err := suites.TargetFlags{Stdio: f.stdio, URL: f.url, Manifest: f.manifest, Mutant: f.mutant}.Targets()
	if err != nil {
		return usageError{err}
	}
	for _, t := range ts {
		if err := checkProgram(t); err != nil {
			return usageError{err}
		}
	}
	var rep *reports.Report
	if f.report != "" {
		fh, err := os.Open(f.report)
		if err != nil {
			return usageError{fmt.Errorf("--report: %w", err)}
		}
		rep, err = reports.ReadJSON(fh)
		fh.Close()
		if err != nil {
			return usageError{fmt.Errorf("--report %s: %w", f.report, err)}
		}
	}
	cfg := &suites.Config{Targets: ts, Spec: f.spec, StartTimeout: f.startTimeout, OpTimeout: f.opTimeout, CallTimeout: f.maxTimeout}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	var rows []ReviewRow
	for _, t := range ts {
		tools, version, err := suites.TargetTools(ctx, cfg, t)
		if err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "mcp-conform: review %s (%s): %v\n", t.Name, t.Transport, err)
			return exitError{2}
		}
		for _, tool := range tools {
			rows = append(rows, reviewTool(t, version, tool, f, rep))
		}
	}
	out := cmd.OutOrStdout()
	if f.format == "json" {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Rows []ReviewRow `json:"tools"`
		}{rows})
	}
	return writeReview(out, rows, rep != nil)
}

// reviewTool reviews one tool of target t.
func reviewTool(t *suites.Manifest, version string, tool suites.ToolInfo, f reviewFlags, rep *reports.Report) ReviewRow {
	row := ReviewRow{Target: t.Name, Transport: t.Transport, ProtocolVersion: version, Tool: tool.Name, Title: tool.Title}
	var roleNames []string
	var keyed string
	mutation := false
	for name, r := range t.Roles {
		if r.Tool != tool.Name {
			continue
		}
		roleNames = append(roleNames, name)
		if name == "mutation" {
			mutation = true
			keyed = r.Key
		}
		if name == "lookup" {
			row.Evidence = append(row.Evidence, "manifest role lookup: reconciles by key")
		}
	}
	sort.Strings(roleNames)
	row.Roles = roleNames
	row.Class, row.Evidence = classify(tool, mutation, keyed, row.Evidence)
	if rep != nil {
		for _, tc := range rep.RetryClasses {
			if tc.Tool == tool.Name && (tc.Target == "" || tc.Target == t.Name) {
				row.Evidence = append(row.Evidence, fmt.Sprintf("the run classed it %s (%s)", tc.Class, strings.Join(tc.Evidence, "; ")))
			}
		}
	}

	modern := version >= "2026-07-28"
	switch {
	case t.Transport == "http" && modern:
		row.Cancellation = "close the request's response stream (in " + version + " the disconnect is the cancellation)"
	case t.Transport == "http":
		row.Cancellation = "send notifications/cancelled (in " + orDash(version) + " a disconnect is not a cancellation)"
	default:
		row.Cancellation = "send notifications/cancelled"
	}
	resets := "notifications/progress only"
	if t.Transport == "http" {
		resets += " (not SSE comment keep-alives)"
	}
	row.Timeout = fmt.Sprintf("idle %s, reset by %s; max %s, never reset; on expiry cancel and ignore a late response",
		f.idle, resets, f.maxTimeout)

	switch row.Class {
	case reports.Safe:
		row.Idempotency = "none needed: read-only; retry with a new JSON-RPC id"
	case reports.Conditional:
		row.Idempotency = fmt.Sprintf("argument %q: a retry keeps the key and the arguments, gets a new JSON-RPC id; the same key with other arguments must be rejected", keyed)
	default:
		row.Idempotency = "none: no idempotency key; do not retry automatically, reconcile first"
	}

	// The checks that exercise this tool are those needing a role it plays.
	seen := map[string]bool{}
	for _, c := range suites.Catalog() {
		if !slices.Contains(c.Transports, t.Transport) {
			continue
		}
		uses := false
		for _, r := range c.Roles {
			if slices.Contains(roleNames, r) {
				uses = true
			}
		}
		if !uses || seen[c.ID] {
			continue
		}
		seen[c.ID] = true
		rc := ReviewCheck{ID: c.ID}
		if rep != nil {
			rc.Status, rc.Reason = verdictOf(rep, c.ID, t.Transport)
		}
		row.Checks = append(row.Checks, rc)
		if a := c.Area(); a == "FLOW" || a == "SSE" || a == "PROGRESS" {
			row.FlowControl = append(row.FlowControl, c.ID)
		}
	}
	row.FailureModes = failureModes(t.Transport, modern, roleNames, row.Class)
	return row
}

// classify decides the retry class of a tool: the manifest's mutation role
// first (the application contract), then readOnlyHint.
func classify(tool suites.ToolInfo, mutation bool, key string, evidence []string) (reports.RetryClass, []string) {
	a := tool.Annotations
	var ro, idem *bool
	if a != nil {
		ro, idem = a.ReadOnlyHint, a.IdempotentHint
	}
	switch {
	case mutation && key != "":
		evidence = append(evidence, fmt.Sprintf("manifest role mutation, key %q", key))
		if ro != nil && *ro {
			evidence = append(evidence, "readOnlyHint: true contradicts the manifest's mutation role")
		}
		return reports.Conditional, evidence
	case mutation:
		return reports.Unsafe, append(evidence, "manifest role mutation without a key")
	case ro != nil && *ro:
		return reports.Safe, append(evidence, "readOnlyHint: true, a hint (untrusted unless the server is)")
	}
	if ro == nil {
		evidence = append(evidence, "readOnlyHint absent (default false): may mutate")
	} else {
		evidence = append(evidence, "readOnlyHint: false: may mutate")
	}
	if a != nil && a.DestructiveHint != nil && !*a.DestructiveHint {
		evidence = append(evidence, "destructiveHint: false")
	} else {
		evidence = append(evidence, "destructiveHint default true")
	}
	if idem != nil && *idem {
		evidence = append(evidence, "idempotentHint: true, but no key in the manifest: a hint, not a contract")
	}
	return reports.Unsafe, evidence
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
	if transport == "http" {
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

// writeReview prints the review as text, one block per tool.
func writeReview(w io.Writer, rows []ReviewRow, withReport bool) error {
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

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/internal/review"
	"github.com/mcp-conform/mcp-conform/reports"
)

// review runs the built CLI's review command and returns its exit code,
// stdout and stderr.
func reviewCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	r := mustRunBin(t, binary, runLimit, nil, append([]string{"review"}, args...)...)
	return r.code, r.stdout, r.stderr
}

func reviewRows(t *testing.T, args ...string) []review.Row {
	t.Helper()
	code, out, errs := reviewCLI(t, append(args, "--format", "json")...)
	if code != 0 {
		t.Fatalf("review exit %d\n%s\n%s", code, out, errs)
	}
	var doc struct {
		Rows []review.Row `json:"tools"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("review JSON: %v\n%s", err, out)
	}
	return doc.Rows
}

func findRow(t *testing.T, rows []review.Row, transport, tool string) review.Row {
	t.Helper()
	for _, r := range rows {
		if r.Transport == transport && r.Tool == tool {
			return r
		}
	}
	t.Fatalf("no row for %s on %s in %+v", tool, transport, rows)
	return review.Row{}
}

// TestReviewReference reviews the built-in reference server: every tool it
// lists on each transport, its retry class with the evidence (read-only
// tools Safe from readOnlyHint, the keyed mutation Conditional from the
// manifest's mutation role, append_note Unsafe), the transport's own
// cancellation, and the checks that exercise the slow tool.
func TestReviewReference(t *testing.T) {
	limitParallel(t)
	rows := reviewRows(t)
	classes := map[string]struct {
		class    reports.RetryClass
		evidence string
	}{
		"create_support_ticket": {reports.Conditional, `manifest role mutation, key "operation_key"`},
		"append_note":           {reports.Unsafe, "readOnlyHint: false"},
		// change_tools (the listChanged role) changes the tool list: not
		// read-only, not idempotent (each call toggles the tool extra).
		"change_tools": {reports.Unsafe, "readOnlyHint: false"},
		// open_cart mints a state handle (the handle role): each call opens
		// another cart.
		"open_cart": {reports.Unsafe, "readOnlyHint: false"},
	}
	var got []string
	for _, r := range rows {
		got = append(got, r.Transport+"/"+r.Tool)
		want, ok := classes[r.Tool]
		if !ok {
			want.class, want.evidence = reports.Safe, "readOnlyHint: true"
		}
		if r.Class != want.class || !strings.Contains(strings.Join(r.Evidence, ";"), want.evidence) {
			t.Errorf("%s/%s: %s %v, want %s from %q", r.Transport, r.Tool, r.Class, r.Evidence, want.class, want.evidence)
		}
		if r.ProtocolVersion != "2026-07-28" {
			t.Errorf("%s/%s: version %q", r.Transport, r.Tool, r.ProtocolVersion)
		}
	}
	tools := []string{"slow", "echo", "research", "flood", "create_support_ticket", "ticket_stats", "lookup_ticket", "append_note", "change_tools", "open_cart", "view_cart"}
	var want []string
	for _, tr := range []string{"stdio", "http"} {
		for _, tool := range tools {
			want = append(want, tr+"/"+tool)
			if tr == "http" && tool == "flood" {
				want = append(want, "http/probe") // the HTTP server's probe tool
			}
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("rows %v, want %v", got, want)
	}
	slow := findRow(t, rows, "stdio", "slow")
	if !strings.Contains(slow.Cancellation, "notifications/cancelled") || !slices.ContainsFunc(slow.Checks, func(c review.Check) bool { return c.ID == "CANCEL-STDIO-SUPPRESS" }) {
		t.Errorf("stdio slow: %+v", slow)
	}
	if h := findRow(t, rows, "http", "slow"); !strings.Contains(h.Cancellation, "close the request's response stream") ||
		!slices.Contains(h.FlowControl, "SSE-HEADERS") || !strings.Contains(strings.Join(h.FailureModes, ";"), "X-Accel-Buffering") {
		t.Errorf("http slow: %+v", h)
	}
	// echo plays the log role only: its checks are the LOGGING ones that
	// need the role.
	if e := findRow(t, rows, "stdio", "echo"); !strings.Contains(e.Idempotency, "read-only") || !slices.Equal(e.Roles, []string{"log"}) ||
		len(e.Checks) == 0 || slices.ContainsFunc(e.Checks, func(c review.Check) bool { return !strings.HasPrefix(c.ID, "LOGGING-") }) {
		t.Errorf("stdio echo: %+v", e)
	}
}

// TestReviewWithReport: after a run against a mutant, each row cites the
// verdicts of the checks that exercise the tool, the failing one with its
// reason.
func TestReviewWithReport(t *testing.T) {
	limitParallel(t)
	r := runCLI(t, runLimit, "run", "-q", "--mutant", "respond-after-cancel", "--focus", "CANCEL-STDIO-SUPPRESS|CANCEL-HTTP-CLOSE")
	if r.code != 1 {
		t.Fatalf("run exit %d\n%s", r.code, r.stdout)
	}
	path := filepath.Join(t.TempDir(), "report.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := reports.WriteJSON(f, r.report); err != nil {
		t.Fatal(err)
	}
	f.Close()

	rows := reviewRows(t, "--report", path)
	cited := map[string]review.Check{}
	for _, c := range findRow(t, rows, "stdio", "slow").Checks {
		cited[c.ID] = c
	}
	if c := cited["CANCEL-STDIO-SUPPRESS"]; c.Status != reports.Fail || !strings.Contains(c.Reason, "answered request") {
		t.Errorf("CANCEL-STDIO-SUPPRESS cited as %+v", c)
	}
	if c := cited["PROGRESS-INCREASING"]; c.Status != "" || c.Reason != "not in the report" {
		t.Errorf("a check the run did not select is cited as %+v", c)
	}
	for _, c := range findRow(t, rows, "http", "slow").Checks {
		if c.ID == "CANCEL-HTTP-CLOSE" && c.Status != reports.Pass {
			t.Errorf("CANCEL-HTTP-CLOSE on http cited as %+v", c)
		}
	}
	_, text, _ := reviewCLI(t, "--report", path)
	if !strings.Contains(text, "CANCEL-STDIO-SUPPRESS FAIL: the server answered request") {
		t.Errorf("text review does not cite the failure:\n%s", text)
	}
}

// TestReviewManifestRoles: the manifest is the application contract: a
// mutation role with a key makes the tool Conditional, with that key as its
// idempotency boundary, whatever its annotations say.
func TestReviewManifestRoles(t *testing.T) {
	limitParallel(t)
	dir := t.TempDir()
	manifest := filepath.Join(dir, "target.yaml")
	if err := os.WriteFile(manifest, []byte(`name: keyed
transport: stdio
command: [mcp-conform, fixture]
roles:
  slow: {tool: slow}
  mutation: {tool: echo, key: text, probe: {tool: ticket_stats, field: executions}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	rows := reviewRows(t, "--manifest", manifest, "--spec", "2025-11-25")
	e := findRow(t, rows, "stdio", "echo")
	if e.Class != reports.Conditional || !strings.Contains(e.Idempotency, `"text"`) || e.ProtocolVersion != "2025-11-25" {
		t.Errorf("echo: %+v", e)
	}
	if !strings.Contains(strings.Join(e.Evidence, ";"), "contradicts") {
		t.Errorf("the contradiction with readOnlyHint is not said: %v", e.Evidence)
	}
	if s := findRow(t, rows, "stdio", "slow"); s.Class != reports.Safe {
		t.Errorf("slow: %+v", s)
	}
}

func TestReviewUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--stdio", "x", "--url", "http://127.0.0.1:1/mcp"},
		{"--format", "yaml"},
		{"--report", filepath.Join(t.TempDir(), "missing.json")},
		{"--spec", "1999-01-01"},
	} {
		if code, _, _ := reviewCLI(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

package reports

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseBaseline(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, err string
		n               int
	}{
		{name: "list", yaml: "- id: A-B\n  reason: r\n- id: C-D\n  reason: r2\n  transport: http\n  spec: 2025-11-25\n  target: srv\n", n: 2},
		{name: "empty", yaml: "", n: 0},
		{name: "no id", yaml: "- reason: r\n", err: "no id"},
		{name: "no reason", yaml: "- id: A-B\n", err: "no reason"},
		{name: "unknown field", yaml: "- id: A-B\n  reason: r\n  why: x\n", err: "field why not found"},
		{name: "bad transport", yaml: "- id: A-B\n  reason: r\n  transport: ws2\n", err: "stdio, http or websocket"},
		{name: "websocket", yaml: "- id: A-B\n  reason: r\n  transport: websocket\n", n: 1},
		{name: "duplicate", yaml: "- id: A-B\n  reason: r\n- id: A-B\n  reason: other\n", err: "listed twice"},
		{name: "not a list", yaml: "id: A-B\n", err: "want a YAML list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := ParseBaseline(strings.NewReader(tc.yaml))
			switch {
			case tc.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
			case err != nil:
				t.Fatal(err)
			case len(b.Entries) != tc.n:
				t.Fatalf("%d entries, want %d", len(b.Entries), tc.n)
			}
		})
	}
}

// baselineRun is a run with one check of each interesting kind.
func baselineRun() *Report {
	return &Report{
		Target: Target{Name: "srv", Mutant: "m1"},
		Checks: []Check{
			{ID: "CANCEL-A", Status: Fail, Level: Must, Transport: "stdio", ProtocolVersion: "2026-07-28"},
			{ID: "CANCEL-A", Status: Fail, Level: Must, Transport: "http", ProtocolVersion: "2026-07-28"},
			{ID: "SSE-B", Status: Warn, Level: Should, Transport: "http", ProtocolVersion: "2025-11-25"},
			{ID: "PROGRESS-C", Status: Pass, Level: Must, Transport: "stdio"},
			{ID: "TASK-D", Status: Skip, Level: Must, Transport: "stdio"},
			{ID: "ROBUST-E", Status: Error, Level: Must, Transport: "stdio"},
		},
	}
}

func TestBaselineApply(t *testing.T) {
	e := func(id string, q ...string) BaselineEntry {
		be := BaselineEntry{ID: id, Reason: "because"}
		if len(q) > 0 {
			be.Transport = q[0]
		}
		if len(q) > 1 {
			be.Spec = q[1]
		}
		if len(q) > 2 {
			be.Target = q[2]
		}
		return be
	}
	for _, tc := range []struct {
		name           string
		entries        []BaselineEntry
		expected       int
		stale, unused  int
		code, strictBL int
	}{
		{name: "none listed", code: 2, strictBL: 2},
		{name: "listed failure on both transports", entries: []BaselineEntry{e("CANCEL-A"), e("ROBUST-E")}, expected: 2, code: 2, strictBL: 2},
		{name: "error is never expected", entries: []BaselineEntry{e("CANCEL-A"), e("SSE-B"), e("ROBUST-E")}, expected: 3, code: 2, strictBL: 2},
		{name: "transport qualifier", entries: []BaselineEntry{e("CANCEL-A", "http")}, expected: 1, code: 2, strictBL: 2},
		{name: "spec qualifier that does not match", entries: []BaselineEntry{e("SSE-B", "", "2026-07-28")}, unused: 1, code: 2, strictBL: 2},
		{name: "target qualifier by mutant", entries: []BaselineEntry{e("SSE-B", "", "", "m1")}, expected: 1, code: 2, strictBL: 2},
		{name: "target qualifier elsewhere", entries: []BaselineEntry{e("SSE-B", "", "", "other")}, unused: 1, code: 2, strictBL: 2},
		{name: "stale", entries: []BaselineEntry{e("PROGRESS-C")}, stale: 1, code: 2, strictBL: 2},
		{name: "skip is not stale", entries: []BaselineEntry{e("TASK-D")}, unused: 1, code: 2, strictBL: 2},
		{name: "case-insensitive id", entries: []BaselineEntry{e("cancel-a")}, expected: 2, code: 2, strictBL: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := baselineRun()
			(&Baseline{File: "b.yaml", Entries: tc.entries}).Apply(r)
			res := r.Baseline
			if res.Expected != tc.expected || len(res.Stale) != tc.stale || len(res.Unmatched) != tc.unused {
				t.Errorf("expected %d stale %d unused %d, want %d %d %d", res.Expected, len(res.Stale), len(res.Unmatched), tc.expected, tc.stale, tc.unused)
			}
			if got := RunExitCode(r, false, false); got != tc.code {
				t.Errorf("exit %d, want %d", got, tc.code)
			}
			if got := RunExitCode(r, false, true); got != tc.strictBL {
				t.Errorf("strict-baseline exit %d, want %d", got, tc.strictBL)
			}
		})
	}
}

// TestBaselineExitCodes follows the three cases of a baseline on a run
// with no ERROR: listed, unlisted, stale.
func TestBaselineExitCodes(t *testing.T) {
	run := func() *Report {
		r := baselineRun()
		r.Checks = r.Checks[:5] // no ERROR
		return r
	}
	all := []BaselineEntry{{ID: "CANCEL-A", Reason: "bug 1"}, {ID: "SSE-B", Reason: "bug 2"}}

	r := run()
	(&Baseline{Entries: all}).Apply(r)
	if got := RunExitCode(r, true, true); got != 0 {
		t.Errorf("every failure listed: exit %d, want 0", got)
	}
	for _, c := range r.Checks {
		if (c.Status == Fail || c.Status == Warn) && c.Expected == "" {
			t.Errorf("%s [%s] not marked expected", c.ID, c.Transport)
		}
	}

	r = run()
	(&Baseline{Entries: all[:1]}).Apply(r)
	if got, strict := RunExitCode(r, false, false), RunExitCode(r, true, false); got != 0 || strict != 1 {
		t.Errorf("unlisted WARN: exit %d (strict %d), want 0 (1)", got, strict)
	}
	r = run()
	(&Baseline{Entries: all[1:]}).Apply(r)
	if got := RunExitCode(r, false, false); got != 1 {
		t.Errorf("unlisted FAIL: exit %d, want 1", got)
	}

	r = run()
	(&Baseline{Entries: append(all, BaselineEntry{ID: "PROGRESS-C", Reason: "was flaky"})}).Apply(r)
	if got, strict := RunExitCode(r, false, false), RunExitCode(r, false, true); got != 0 || strict != 1 {
		t.Errorf("stale: exit %d (strict-baseline %d), want 0 (1)", got, strict)
	}
	var b bytes.Buffer
	if err := WriteConsole(&b, r, ConsoleOptions{StrictBaseline: true}); err != nil {
		t.Fatal(err)
	}
	wantContains(t, "console", b.String(),
		"expected by the baseline: bug 1",
		"baseline: 3 expected failures, 1 stale",
		"stale    PROGRESS-C: listed as expected to fail but passed (fails the run under --strict-baseline)",
		"verdict: FAIL (exit 1; strict baseline: stale entries fail; 3 expected by the baseline)",
	)
	b.Reset()
	if err := WriteHTML(&b, r, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	wantContains(t, "HTML", b.String(), `id="baseline"`, "expected by the baseline: bug 1", "<b>PROGRESS-C</b>: listed as expected to fail, but passed", "3 failure(s) expected by the baseline not counted")
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBaseline runs the CLI with --baseline against the reference server and
// the respond-after-cancel mutant (which breaks CANCEL-STDIO-SUPPRESS): a
// listed failure does not fail the exit code, an unlisted one does, a listed
// check that passes is stale (exit 0, or 1 with --strict-baseline), and a
// qualifier that does not match leaves the failure counted.
func TestBaseline(t *testing.T) {
	const focus = "CANCEL-STDIO-SUPPRESS|PROGRESS-INCREASING"
	listed := "- id: CANCEL-STDIO-SUPPRESS\n  reason: known bug, fix tracked in issue 42\n"
	for _, tc := range []struct {
		name       string
		baseline   string
		mutant     string
		strict     bool
		code       int
		stdout     []string
		expected   int
		stale      []string
		markedWith string
	}{
		{name: "listed", baseline: listed, mutant: "respond-after-cancel", code: 0, expected: 1,
			markedWith: "known bug, fix tracked in issue 42",
			stdout:     []string{"expected FAIL CANCEL-STDIO-SUPPRESS [stdio]: known bug", "verdict: PASS (exit 0; 1 expected by the baseline)"}},
		{name: "listed, strict baseline", baseline: listed, mutant: "respond-after-cancel", strict: true, code: 0, expected: 1},
		{name: "unlisted", baseline: "- id: PROGRESS-INCREASING\n  reason: flaky upstream\n", mutant: "respond-after-cancel", code: 1,
			stale: []string{"PROGRESS-INCREASING"}, stdout: []string{"verdict: FAIL (exit 1)"}},
		{name: "qualifier does not match", baseline: "- id: CANCEL-STDIO-SUPPRESS\n  reason: only on http\n  transport: http\n", mutant: "respond-after-cancel", code: 1,
			stdout: []string{"unused   CANCEL-STDIO-SUPPRESS [http]"}},
		{name: "qualifier matches the mutant", baseline: "- id: CANCEL-STDIO-SUPPRESS\n  reason: this mutant\n  target: respond-after-cancel\n  spec: 2026-07-28\n", mutant: "respond-after-cancel", code: 0, expected: 1},
		{name: "stale", baseline: listed, code: 0, stale: []string{"CANCEL-STDIO-SUPPRESS"},
			stdout: []string{"stale    CANCEL-STDIO-SUPPRESS: listed as expected to fail but passed (remove it)"}},
		{name: "stale, strict baseline", baseline: listed, strict: true, code: 1, stale: []string{"CANCEL-STDIO-SUPPRESS"},
			stdout: []string{"verdict: FAIL (exit 1; strict baseline: stale entries fail)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			limitParallel(t)
			path := filepath.Join(t.TempDir(), "baseline.yaml")
			if err := os.WriteFile(path, []byte(tc.baseline), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"run", "-q", "--focus", focus, "--baseline", path}
			if tc.mutant != "" {
				args = append(args, "--mutant", tc.mutant)
			}
			if tc.strict {
				args = append(args, "--strict-baseline")
			}
			r := runCLI(t, runLimit, args...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", r.code, tc.code, r.stdout, r.stderr)
			}
			for _, want := range tc.stdout {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
				}
			}
			bl := r.report.Baseline
			if bl == nil {
				t.Fatal("no baseline in the JSON report")
			}
			if bl.File != path || bl.Expected != tc.expected || len(bl.Stale) != len(tc.stale) {
				t.Errorf("JSON baseline %+v, want %d expected and stale %v", bl, tc.expected, tc.stale)
			}
			for i, id := range tc.stale {
				if i < len(bl.Stale) && bl.Stale[i].ID != id {
					t.Errorf("stale[%d] = %s, want %s", i, bl.Stale[i].ID, id)
				}
			}
			if tc.markedWith != "" {
				if c := r.check(t, "CANCEL-STDIO-SUPPRESS"); c.Expected != tc.markedWith || c.Status != "FAIL" {
					t.Errorf("check %s expected %q, want FAIL expected %q", c.Status, c.Expected, tc.markedWith)
				}
			}
		})
	}
}

// TestBaselineUsage: a broken baseline file or --strict-baseline alone is
// bad usage (exit 2), before anything runs.
func TestBaselineUsage(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("- id: CANCEL-STDIO-SUPPRESS\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"run", "--baseline", bad},
		{"run", "--baseline", filepath.Join(dir, "missing.yaml")},
		{"run", "--strict-baseline"},
	} {
		r := runCLI(t, runLimit, args...)
		if r.code != 2 || r.report != nil {
			t.Errorf("%v: exit %d (report written: %v), want 2 and no run\n%s", args, r.code, r.report != nil, r.stderr)
		}
	}
}

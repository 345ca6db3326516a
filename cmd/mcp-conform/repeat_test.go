package main

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/reports"
)

// TestRepeatRunsEachCheckNTimes: --repeat 3 runs each selected check
// three times, reports each once with its three runs, and the seed given
// is the report's (JSON, console header, JUnit).
func TestRepeatRunsEachCheckNTimes(t *testing.T) {
	limitParallel(t)
	dir := t.TempDir()
	r := runCLI(t, 2*time.Minute, "run", "--repeat", "3", "--seed", "4242", "--label-filter", "transport:stdio",
		"--spec", "2025-11-25", "--focus", "CANCEL-STDIO-SUPPRESS|PROGRESS-TOKEN-ECHO", "--junit", dir+"/j.xml")
	if r.code != 0 || r.report == nil {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	rep := r.report
	if rep.Seed != 4242 || rep.Repeat != 3 || len(rep.Checks) != 2 {
		t.Fatalf("seed %d, repeat %d, %d checks; want 4242, 3, 2", rep.Seed, rep.Repeat, len(rep.Checks))
	}
	for _, c := range rep.Checks {
		if len(c.Runs) != 3 || c.Flaky || c.Status != reports.Pass {
			t.Errorf("%s: %s, flaky %v, %d runs; want PASS in 3 runs", c.ID, c.Status, c.Flaky, len(c.Runs))
		}
	}
	if !strings.Contains(r.stdout, "seed 4242") || !strings.Contains(r.stdout, "each check run 3 times") {
		t.Errorf("console header lacks the seed or the repeat:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, "[6/6]") {
		t.Errorf("progress does not count every run:\n%s", r.stderr)
	}
	if r.code != 0 {
		t.Errorf("exit %d", r.code)
	}
}

// TestSeedChosenAndPrinted: with no --seed a seed is chosen, printed in
// the console header and the JSON report, and the same for every part of
// a run split by target (each child is given it).
func TestSeedChosenAndPrinted(t *testing.T) {
	limitParallel(t)
	r := runCLI(t, 2*time.Minute, "run", "--focus", "SECURITY-ORIGIN|CANCEL-STDIO-SUPPRESS", "--spec", "2025-11-25")
	if r.report == nil || r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	s := r.report.Seed
	if s == 0 || s > reports.MaxSeed || len(r.report.Seeds) != 0 {
		t.Fatalf("seed %d (seeds %v): want one chosen seed for the whole run", s, r.report.Seeds)
	}
	if want := "seed " + itoa(s); !strings.Contains(r.stdout, want) || !strings.Contains(r.stderr, "(seed "+itoa(s)+")") {
		t.Errorf("the seed %d is not printed:\nstdout:\n%s\nstderr:\n%s", s, r.stdout, r.stderr)
	}
	if r := runCLI(t, 30*time.Second, "run", "--seed", "9007199254740993"); r.code != 2 {
		t.Errorf("--seed above 2^53-1: exit %d, want 2", r.code)
	}
	if r := runCLI(t, 30*time.Second, "run", "--repeat", "0"); r.code != 2 {
		t.Errorf("--repeat 0: exit %d, want 2", r.code)
	}
}

func itoa(u uint64) string { return strconv.FormatUint(u, 10) }

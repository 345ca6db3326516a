package main

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/reports"
)

// checkRuns lists a report's check runs with their verdicts, in order.
func checkRuns(t *testing.T, r result) []string {
	t.Helper()
	if r.report == nil {
		t.Fatalf("no report\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	var out []string
	for _, c := range r.report.Checks {
		out = append(out, fmt.Sprintf("%s %s %s %s", c.ID, c.Transport, c.ProtocolVersion, c.Status))
	}
	return out
}

// TestShardsMergeToTheWholeRun: the --shard slices of a run are disjoint,
// each runs only its part, and `report merge` of their JSON reports gives
// the whole run's report: the same check runs and verdicts in the same
// order, the same target (versions accepted included), retry classes and
// exit code. The mutant makes one check FAIL, so the merge's exit code is
// checked too.
func TestShardsMergeToTheWholeRun(t *testing.T) {
	limitParallel(t)
	focus := []string{"run", "-q", "--mutant", "respond-after-cancel", "--spec", "all",
		"--focus", "CANCEL-STDIO-SUPPRESS|SESSION-REQUIRED|CANCEL-HTTP-CLOSE|ROBUST-PARSE-ERROR|PROGRESS-INCREASING"}
	whole := runCLI(t, 3*time.Minute, focus...)
	want := checkRuns(t, whole)
	const n = 3
	dir := t.TempDir()
	var paths []string
	seen := map[string]int{}
	for i := 1; i <= n; i++ {
		r := runCLI(t, 3*time.Minute, append(focus, "--shard", fmt.Sprintf("%d/%d", i, n))...)
		part := checkRuns(t, r)
		if len(part) == 0 || len(part) == len(want) {
			t.Errorf("shard %d/%d ran %d of the %d check runs: %q", i, n, len(part), len(want), part)
		}
		for _, c := range r.report.Checks {
			seen[c.ID] |= 1 << i
		}
		p := filepath.Join(dir, fmt.Sprintf("part%d.json", i))
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := reports.WriteJSON(f, r.report); err != nil {
			t.Fatal(err)
		}
		f.Close()
		paths = append(paths, p)
	}
	for id, shards := range seen {
		if shards&(shards-1) != 0 {
			t.Errorf("%s ran in more than one shard (mask %b): a check's runs belong to one", id, shards)
		}
	}
	// The parts in another order: the merge sorts.
	slices.Reverse(paths)
	merged := runCLI(t, time.Minute, append([]string{"report", "merge"}, paths...)...)
	if got := checkRuns(t, merged); !slices.Equal(got, want) {
		t.Errorf("merged shards differ from the whole run:\nmerged: %q\nwhole:  %q", got, want)
	}
	if !reflect.DeepEqual(merged.report.Target, whole.report.Target) {
		t.Errorf("target of the merge %+v, of the whole run %+v", merged.report.Target, whole.report.Target)
	}
	if !reflect.DeepEqual(merged.report.RetryClasses, whole.report.RetryClasses) {
		t.Errorf("retry classes differ:\nmerged: %+v\nwhole:  %+v", merged.report.RetryClasses, whole.report.RetryClasses)
	}
	if merged.code != whole.code || whole.code != 1 {
		t.Errorf("exit codes: merge %d, whole run %d; want 1 (the mutant fails CANCEL-STDIO-SUPPRESS)", merged.code, whole.code)
	}
	if !strings.Contains(merged.stdout, "verdict: FAIL (exit 1)") {
		t.Errorf("merge prints no summary:\n%s", merged.stdout)
	}
	// The same part twice is refused.
	if r := runCLI(t, time.Minute, "report", "merge", paths[0], paths[0]); r.code != 2 || !strings.Contains(r.stderr, "merged twice") {
		t.Errorf("merging a part twice: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestShardUsage: a bad --shard is a usage error; a slice with no check in
// it (more slices than checks) writes an empty report and passes, so that a
// CI matrix wider than the run does not fail.
func TestShardUsage(t *testing.T) {
	for _, s := range []string{"0/2", "3/2", "x", "1/0"} {
		if r := runCLI(t, 30*time.Second, "run", "-q", "--shard", s); r.code != 2 || r.report != nil || !strings.Contains(r.stderr, "--shard") {
			t.Errorf("--shard %s: exit %d, stderr %q; want 2, no report", s, r.code, r.stderr)
		}
	}
	limitParallel(t)
	r := runCLI(t, time.Minute, "run", "-q", "--spec", "2026-07-28", "--focus", "CANCEL-STDIO-SUPPRESS", "--shard", "2/2")
	if r.code != 0 || r.report == nil || len(r.report.Checks) != 0 {
		t.Errorf("empty shard: exit %d, report %+v\n%s", r.code, r.report, r.stderr)
	}
}

package runner

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/reports"
)

func check(id, transport, version string, st reports.Status) reports.Check {
	return reports.Check{ID: id, Transport: transport, ProtocolVersion: version, Status: st}
}

func runsOf(r *reports.Report) []string {
	var out []string
	for _, c := range r.Checks {
		out = append(out, strings.TrimSpace(c.Target+" "+c.ID+" "+c.Transport+" "+c.ProtocolVersion+" "+string(c.Status)))
	}
	return out
}

// TestMerge covers what Merge does to the parts of a whole: the checks in
// report order whatever the order of the parts, the target facts combined,
// the versions joined, the totals recomputed, the retry-class rows without
// repeats, the span of the runs; parts of different targets are marked;
// the same run twice is refused.
func TestMerge(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	stdio := reports.Target{Name: "ref", Transport: "stdio", ProtocolVersion: "2025-11-25", Command: "[ref]", Mutant: "m",
		Versions: []reports.TargetVersion{{Transport: "stdio", ProtocolVersion: "2025-06-18", Status: reports.Refused, Reason: "chose 2025-11-25"}}}
	http := reports.Target{Name: "ref", Transport: "http", ProtocolVersion: "2026-07-28", URL: "http://127.0.0.1:1/mcp", Command: "[ref --http]", Mutant: "m",
		Versions: []reports.TargetVersion{{Transport: "http", ProtocolVersion: "2026-07-28", Status: reports.Accepted}}}
	row := reports.ToolClass{Target: "ref (stdio)", Tool: "t", Class: reports.Safe}
	a := &reports.Report{Schema: reports.SchemaV1, Target: http, StartedAt: t0.Add(time.Second), Duration: 2000,
		Checks: []reports.Check{check("ROBUST-PARSE-ERROR", "http", "2026-07-28", reports.Pass), check("CANCEL-HTTP-CLOSE", "http", "2026-07-28", reports.Fail)}}
	b := &reports.Report{Schema: reports.SchemaV1, Target: stdio, StartedAt: t0, Duration: 1000, RetryClasses: []reports.ToolClass{row},
		Checks: []reports.Check{check("ROBUST-PARSE-ERROR", "stdio", "2025-11-25", reports.Warn), check("CANCEL-STDIO-SUPPRESS", "stdio", "2025-11-25", reports.Skip)}}
	c := &reports.Report{Schema: reports.SchemaV1, Target: stdio, StartedAt: t0, Duration: 500, RetryClasses: []reports.ToolClass{row},
		Checks: []reports.Check{check("CANCEL-STDIO-SUPPRESS", "stdio", "2026-07-28", reports.Pass)}}

	got, err := Merge([]*reports.Report{a, b, c})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"CANCEL-STDIO-SUPPRESS stdio 2026-07-28 PASS",
		"CANCEL-STDIO-SUPPRESS stdio 2025-11-25 SKIP",
		"ROBUST-PARSE-ERROR stdio 2025-11-25 WARN",
		"CANCEL-HTTP-CLOSE http 2026-07-28 FAIL",
		"ROBUST-PARSE-ERROR http 2026-07-28 PASS",
	}
	if r := runsOf(got); !slices.Equal(r, want) {
		t.Errorf("checks\n%q\nwant\n%q", r, want)
	}
	wantTarget := reports.Target{Name: "ref", Transport: "stdio,http", ProtocolVersion: "2026-07-28,2025-11-25", Mutant: "m",
		Versions: []reports.TargetVersion{stdio.Versions[0], http.Versions[0]}}
	if !reflect.DeepEqual(got.Target, wantTarget) {
		t.Errorf("target\n%+v\nwant\n%+v", got.Target, wantTarget)
	}
	if got.Summary != (reports.Summary{Pass: 2, Fail: 1, Warn: 1, Skip: 1}) {
		t.Errorf("summary %+v", got.Summary)
	}
	if len(got.RetryClasses) != 1 {
		t.Errorf("retry classes %+v, want the one row once", got.RetryClasses)
	}
	if !got.StartedAt.Equal(t0) || got.Duration != 3000 {
		t.Errorf("span %s + %vms, want %s + 3000ms", got.StartedAt, got.Duration, t0)
	}
	// The order of the parts does not matter.
	again, err := Merge([]*reports.Report{c, b, a})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(runsOf(again), runsOf(got)) || !reflect.DeepEqual(again.Target, got.Target) {
		t.Errorf("merge depends on the order of its parts:\n%q\n%q", runsOf(again), runsOf(got))
	}
	// A merged report merges again to itself.
	if twice, err := Merge([]*reports.Report{got}); err != nil || !slices.Equal(runsOf(twice), runsOf(got)) || !reflect.DeepEqual(twice.Target, got.Target) {
		t.Errorf("merge of a merged report: %v %+v", err, twice)
	}

	if _, err := Merge([]*reports.Report{b, b}); err == nil || !strings.Contains(err.Error(), "merged twice") {
		t.Errorf("the same part twice: %v, want an error", err)
	}
	if _, err := Merge(nil); err == nil {
		t.Error("no part: no error")
	}

	// Parts of different targets: each check and version says whose.
	other := &reports.Report{Schema: reports.SchemaV1, Target: reports.Target{Name: "other", Transport: "stdio", Command: "[o]"},
		Checks: []reports.Check{check("CANCEL-STDIO-SUPPRESS", "stdio", "2025-11-25", reports.Fail)}}
	fleet, err := Merge([]*reports.Report{b, other})
	if err != nil {
		t.Fatal(err)
	}
	wantFleet := []string{"ref CANCEL-STDIO-SUPPRESS stdio 2025-11-25 SKIP", "ref ROBUST-PARSE-ERROR stdio 2025-11-25 WARN", "other CANCEL-STDIO-SUPPRESS stdio 2025-11-25 FAIL"}
	if r := runsOf(fleet); !slices.Equal(r, wantFleet) {
		t.Errorf("fleet checks %q, want %q", r, wantFleet)
	}
	if fleet.Target.Name != "ref + other" || fleet.Target.Command != "" || fleet.Target.Mutant != "" || fleet.Target.Versions[0].Target != "ref" {
		t.Errorf("fleet target %+v", fleet.Target)
	}
}

// TestMergeBaselines: the expected failures are counted again, an entry is
// unmatched only when no part matched it, stale when stale in a part and
// expected in none.
func TestMergeBaselines(t *testing.T) {
	e1 := reports.BaselineEntry{ID: "A-B", Reason: "r1"}
	e2 := reports.BaselineEntry{ID: "C-D", Reason: "r2"}
	e3 := reports.BaselineEntry{ID: "E-F", Reason: "r3"}
	x := check("A-B", "stdio", "2025-11-25", reports.Fail)
	x.Expected = "r1"
	p1 := &reports.Report{Target: reports.Target{Name: "s"}, Checks: []reports.Check{x},
		Baseline: &reports.BaselineResult{File: "b.yaml", Expected: 1, Unmatched: []reports.BaselineEntry{e2, e3}}}
	p2 := &reports.Report{Target: reports.Target{Name: "s"}, Checks: []reports.Check{check("A-B", "http", "2025-11-25", reports.Pass), check("C-D", "http", "2025-11-25", reports.Pass)},
		Baseline: &reports.BaselineResult{File: "b.yaml", Stale: []reports.BaselineEntry{e1, e2}, Unmatched: []reports.BaselineEntry{e3}}}
	got, err := Merge([]*reports.Report{p1, p2})
	if err != nil {
		t.Fatal(err)
	}
	want := &reports.BaselineResult{File: "b.yaml", Expected: 1, Stale: []reports.BaselineEntry{e2}, Unmatched: []reports.BaselineEntry{e3}}
	if !reflect.DeepEqual(got.Baseline, want) {
		t.Errorf("baseline %+v, want %+v", got.Baseline, want)
	}
}

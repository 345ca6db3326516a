package runner

import (
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/reports"
)

// TestRepeated: each check once with every run; a changed verdict is
// flaky and takes its worst run's status, reason and transcript; a steady
// one keeps its verdict.
func TestRepeated(t *testing.T) {
	run := func(a, b reports.Status, why string) *reports.Report {
		return &reports.Report{Schema: reports.SchemaV1, Seed: 7, Checks: []reports.Check{
			{ID: "A", Transport: "stdio", Status: a, Reason: why, DurationMs: 1,
				Transcript: []reports.Entry{{Kind: "note", Text: why}}},
			{ID: "B", Transport: "http", Status: b, DurationMs: 2},
		}}
	}
	rep := Repeated([]*reports.Report{
		run(reports.Pass, reports.Pass, ""),
		run(reports.Fail, reports.Pass, "answered after cancel"),
		run(reports.Pass, reports.Pass, ""),
	})
	if rep.Repeat != 3 || rep.Seed != 7 || len(rep.Checks) != 2 {
		t.Fatalf("repeat %d seed %d, %d checks", rep.Repeat, rep.Seed, len(rep.Checks))
	}
	a, b := rep.Checks[0], rep.Checks[1]
	if !a.Flaky || a.Status != reports.Fail || len(a.Runs) != 3 || a.Runs[1].Status != reports.Fail || a.Runs[0].Status != reports.Pass {
		t.Errorf("A = %+v, want a flaky FAIL with 3 runs", a)
	}
	if !strings.HasPrefix(a.Reason, "flaky: PASS, FAIL, PASS in 3 runs; run 2: answered after cancel") {
		t.Errorf("A reason %q", a.Reason)
	}
	if len(a.Transcript) != 1 || a.Transcript[0].Text != "answered after cancel" {
		t.Errorf("A transcript %+v, want the failing run's", a.Transcript)
	}
	if a.DurationMs != 3 {
		t.Errorf("A duration %v, want the 3 runs' sum", a.DurationMs)
	}
	if b.Flaky || b.Status != reports.Pass || len(b.Runs) != 3 {
		t.Errorf("B = %+v, want a steady PASS", b)
	}
	if s := rep.Summary; s.Fail != 1 || s.Pass != 1 || s.Flaky != 1 {
		t.Errorf("summary %+v", s)
	}
	// SKIP then ERROR: ERROR is worse.
	r2 := Repeated([]*reports.Report{run(reports.Skip, reports.Pass, "no role"), run(reports.Error, reports.Pass, "crashed")})
	if c := r2.Checks[0]; c.Status != reports.Error || !c.Flaky {
		t.Errorf("%+v", c)
	}
}

// TestMergeSeeds: parts of one seed keep it; different seeds are listed.
func TestMergeSeeds(t *testing.T) {
	p := func(seed uint64, id string) *reports.Report {
		return &reports.Report{Schema: reports.SchemaV1, Seed: seed, Target: reports.Target{Name: "t"}, Checks: []reports.Check{{ID: id, Status: reports.Pass}}}
	}
	m, err := Merge([]*reports.Report{p(5, "A"), p(5, "B")})
	if err != nil || m.Seed != 5 || m.Seeds != nil {
		t.Fatalf("same seed: %v %v %v", m.Seed, m.Seeds, err)
	}
	m, err = Merge([]*reports.Report{p(5, "A"), p(6, "B")})
	if err != nil || m.Seed != 0 || len(m.Seeds) != 2 {
		t.Fatalf("different seeds: %v %v %v", m.Seed, m.Seeds, err)
	}
}

package main

import (
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/reports"
)

// BenchmarkFullReferenceRun times `mcp-conform run` with no target — the
// built-in reference on stdio and HTTP in every version it accepts, the
// default --jobs — as a user runs it (issue 17: within 10 s of wall time
// on 2 cores). One op is one whole run of the binary built without the
// race detector; it reports the check runs per op and fails on any
// verdict but PASS (or the modern-only checks' SKIP). A benchmark, not a timed test: the machine's load
// decides the wall time, so a regression is read from ns/op against a
// run of the parent commit, not asserted.
//
//	go test -run '^$' -bench FullReferenceRun -benchtime 3x ./cmd/mcp-conform/
func BenchmarkFullReferenceRun(b *testing.B) {
	runs := 0
	for b.Loop() {
		// --jobs=0 is the default, which runBin would otherwise replace
		// with the tests' own bound (withTestJobs).
		r, err := execCLI(fastBinary, b.TempDir(), 3*time.Minute, "run", "-q", "--jobs=0")
		if err != nil {
			b.Fatal(err)
		}
		if r.code != 0 || r.report == nil {
			b.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		for _, c := range r.report.Checks {
			if c.Status != reports.Pass && !skipsAsDualEra(c) { // the modern-only checks SKIP on the dual-era reference
				b.Errorf("%s [%s %s]: %s %s", c.ID, c.Transport, c.ProtocolVersion, c.Status, c.Reason)
			}
		}
		runs = len(r.report.Checks)
	}
	b.ReportMetric(float64(runs), "checkruns/op")
}

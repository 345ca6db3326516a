package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/reports"
)

// modernOnlyChecks are the checks of clauses that bind a server supporting
// 2026-07-28 only, with what their SKIP reason says on the dual-era
// reference (and its other variants): they PASS in TestModernOnlyVariant.
var modernOnlyChecks = map[string]string{
	"HTTP-MODERN-ONLY-405": "the clause binds a server that supports only 2026-07-28",
}

// skipsAsDualEra reports whether c is a modern-only check SKIPped, as it
// must be, on a dual-era server.
func skipsAsDualEra(c reports.Check) bool {
	why := modernOnlyChecks[c.ID]
	return why != "" && c.Status == reports.Skip && strings.Contains(c.Reason, why)
}

// TestModernOnlyVariant runs the 2026-07-28 catalog over Streamable HTTP
// against the modern-only variant of the reference
// (testdata/variant-modern-only-http.yaml: 2026-07-28 only, its
// server/discover lists only it, GET and DELETE get 405): no check may
// FAIL, WARN or ERROR on it, and HTTP-MODERN-ONLY-405, which needs such a
// server (it SKIPs on the dual-era reference), must PASS.
func TestModernOnlyVariant(t *testing.T) {
	limitFast(t) // verdicts: the binary without -race
	r := fastRun(t, runLimit, "run", "-q", "--spec", "2026-07-28", "--manifest", filepath.Join("testdata", "variant-modern-only-http.yaml"))
	if r.code != 0 {
		t.Errorf("exit %d\n%s", r.code, r.stdout)
	}
	modernOnly := false
	for _, c := range r.report.Checks {
		if c.Status != reports.Pass && c.Status != reports.Skip {
			t.Errorf("%s [%s %s]: %s %s", c.ID, c.Transport, c.ProtocolVersion, c.Status, c.Reason)
		}
		if c.ID == "HTTP-MODERN-ONLY-405" {
			modernOnly = c.Status == reports.Pass
		}
	}
	if !modernOnly {
		t.Errorf("HTTP-MODERN-ONLY-405 did not PASS")
	}
}

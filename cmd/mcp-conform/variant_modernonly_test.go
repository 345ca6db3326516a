package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/reports"
	"github.com/mcp-conform/mcp-conform/suites"
)

// modernOnlyChecks are the checks of clauses that bind a server supporting
// 2026-07-28 only, with what their SKIP reason says on the dual-era
// reference (and its other variants): they PASS in TestModernOnlyVariant.
var modernOnlyChecks = map[string]string{
	"HTTP-MODERN-ONLY-405":                "the clause binds a server that supports only 2026-07-28",
	"VERSION-MODERN-ONLY-NAMED":           "the clause binds a server that supports only 2026-07-28",
	"HTTP-MODERN-ONLY-SESSION-IGNORED":    "the clause binds a server that supports only 2026-07-28",
	"HTTP-MODERN-ONLY-LAST-EVENT-IGNORED": "the clause binds a server that supports only 2026-07-28",
}

// skipsAsDualEra reports whether c is a modern-only check SKIPped, as it
// must be, on a dual-era server.
func skipsAsDualEra(c reports.Check) bool {
	why := modernOnlyChecks[c.ID]
	return why != "" && c.Status == reports.Skip && strings.Contains(c.Reason, why)
}

// TestModernOnlyVariant runs the 2026-07-28 catalog on stdio and over
// Streamable HTTP against the modern-only variant of the reference
// (testdata/variant-modern-only-*.yaml: 2026-07-28 only, its
// server/discover lists only it, initialize refused with an error naming
// it, GET and DELETE get 405): no check may FAIL, WARN or ERROR on it, and
// each of modernOnlyChecks, which need such a server (they SKIP on the
// dual-era reference), must PASS where it runs.
func TestModernOnlyVariant(t *testing.T) {
	for _, tc := range []struct{ file, transport string }{
		{"variant-modern-only-stdio.yaml", "stdio"},
		{"variant-modern-only-http.yaml", "http"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			limitFast(t) // verdicts: the binary without -race
			r := fastRun(t, runLimit, "run", "-q", "--spec", "2026-07-28", "--manifest", filepath.Join("testdata", tc.file))
			if r.code != 0 {
				t.Errorf("exit %d\n%s", r.code, r.stdout)
			}
			passed := map[string]bool{}
			for _, c := range r.report.Checks {
				if c.Status != reports.Pass && c.Status != reports.Skip {
					t.Errorf("%s [%s %s]: %s %s", c.ID, c.Transport, c.ProtocolVersion, c.Status, c.Reason)
				}
				passed[c.ID] = c.Status == reports.Pass
			}
			for _, def := range suites.Catalog() {
				if modernOnlyChecks[def.ID] == "" || !contains(def.Transports, tc.transport) {
					continue
				}
				if id := def.ID; !passed[id] {
					t.Errorf("%s did not PASS on %s", id, tc.transport)
				}
			}
		})
	}
}

package main

import (
	"path/filepath"
	"testing"

	"github.com/mcp-conform/mcp-conform/reports"
)

// TestNoTasksVariant runs the whole catalog, in every version, against the
// no-tasks variant of the reference (testdata/variant-no-tasks-*.yaml: in
// 2025-11-25 no tasks capability, task-augmented calls processed as normal
// ones): no check may FAIL, WARN or ERROR on it (the TASK checks that need
// a declared tasks capability SKIP), and TASK-UNDECLARED-NORMAL, which needs
// a server without one, must PASS in 2025-11-25.
func TestNoTasksVariant(t *testing.T) {
	for _, file := range []string{"variant-no-tasks-stdio.yaml", "variant-no-tasks-http.yaml"} {
		t.Run(file, func(t *testing.T) {
			limitFast(t) // verdicts: the binary without -race
			r := fastRun(t, runLimit, "run", "-q", "--spec", "all", "--manifest", filepath.Join("testdata", file))
			if r.code != 0 {
				t.Errorf("exit %d\n%s", r.code, r.stdout)
			}
			normal := false
			for _, c := range r.report.Checks {
				if c.Status != reports.Pass && c.Status != reports.Skip {
					t.Errorf("%s [%s %s]: %s %s", c.ID, c.Transport, c.ProtocolVersion, c.Status, c.Reason)
				}
				if c.ID == "TASK-UNDECLARED-NORMAL" && c.ProtocolVersion == "2025-11-25" {
					normal = c.Status == reports.Pass
				}
			}
			if !normal {
				t.Errorf("TASK-UNDECLARED-NORMAL did not PASS in 2025-11-25")
			}
		})
	}
}

package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/reports"
)

// TestServerEverything runs the whole stdio suite against the real public
// server @modelcontextprotocol/server-everything, installed from the npm
// registry by scripts/install-targets.sh. Its verdicts are its own; the test
// asserts that the run completes with a written report and no ERROR.
func TestServerEverything(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	entry := filepath.Join(root, ".targets/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	if _, err := os.Stat(entry); err != nil {
		if os.Getenv("MCP_CONFORM_REQUIRE_TARGETS") != "" {
			t.Fatalf("server-everything is not installed (run scripts/install-targets.sh): %v", err)
		}
		t.Skip("server-everything is not installed; scripts/install-targets.sh installs it (scripts/test.sh does)")
	}
	limitParallel(t)
	r := runCLI(t, 3*time.Minute, "run", "-q", "--manifest", filepath.Join(root, "fixtures/targets/server-everything.yaml"))
	if r.report == nil {
		t.Fatalf("no report (exit %d)\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r.report.Target.Name != "server-everything" || r.report.Target.ProtocolVersion == "" {
		t.Errorf("target %+v", r.report.Target)
	}
	if r.report.Summary.Error > 0 || r.code == 2 {
		t.Errorf("the harness could not run some checks (exit %d):\n%s", r.code, r.stdout)
	}
	for _, c := range r.report.Checks {
		t.Logf("%-5s %s %s", c.Status, c.ID, c.Reason)
		if c.Status == reports.Fail || c.Status == reports.Warn {
			if len(c.Transcript) == 0 {
				t.Errorf("%s: %s without a transcript", c.ID, c.Status)
			}
		}
	}
	t.Logf("server-everything: %+v in %s (exit %d)", r.report.Summary, r.elapsed.Round(time.Millisecond), r.code)
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/reports"
)

// TestRealTargets runs the suites against real public servers installed by
// scripts/install-targets.sh: @modelcontextprotocol/server-everything (npm)
// over stdio and Streamable HTTP, and a small server built on the official
// Go SDK over both. Their verdicts are their own; the test asserts that each
// run completes with a written report and no ERROR, and that every failing
// check carries its transcript.
func TestRealTargets(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ manifest, needs string }{
		{"server-everything.yaml", ".targets/node_modules/@modelcontextprotocol/server-everything/dist/index.js"},
		{"server-everything-http.yaml", ".targets/node_modules/@modelcontextprotocol/server-everything/dist/index.js"},
		{"gosdk-stdio.yaml", ".targets/bin/gosdk-server"},
		{"gosdk-http.yaml", ".targets/bin/gosdk-server"},
	} {
		t.Run(tc.manifest, func(t *testing.T) {
			if _, err := os.Stat(filepath.Join(root, tc.needs)); err != nil {
				if os.Getenv("MCP_CONFORM_REQUIRE_TARGETS") != "" {
					t.Fatalf("%s is not installed (run scripts/install-targets.sh): %v", tc.needs, err)
				}
				t.Skip(tc.needs + " is not installed; scripts/install-targets.sh installs it (scripts/test.sh does)")
			}
			limitParallel(t)
			r := runCLI(t, 4*time.Minute, "run", "-q", "--manifest", filepath.Join(root, "fixtures/targets", tc.manifest))
			if r.report == nil {
				t.Fatalf("no report (exit %d)\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			if r.report.Target.ProtocolVersion == "" {
				t.Errorf("no protocol version negotiated: %+v", r.report.Target)
			}
			if r.report.Summary.Error > 0 || r.code == 2 {
				t.Errorf("the harness could not run some checks (exit %d):\n%s", r.code, r.stdout)
			}
			for _, c := range r.report.Checks {
				if c.Status != reports.Skip {
					t.Logf("%-5s %s %s", c.Status, c.ID, c.Reason)
				}
				if (c.Status == reports.Fail || c.Status == reports.Warn) && len(c.Transcript) == 0 {
					t.Errorf("%s: %s without a transcript", c.ID, c.Status)
				}
			}
			for id, want := range realTargetExpect[tc.manifest] {
				c := r.checkOn(t, id, "")
				if c.Status != want.status || !strings.Contains(c.Reason, want.reason) {
					t.Errorf("%s: %s %q, want %s with %q (fixtures/targets/server-everything.md)", id, c.Status, c.Reason, want.status, want.reason)
				}
			}
			t.Logf("%s: %+v in %s (exit %d)", tc.manifest, r.report.Summary, r.elapsed.Round(time.Millisecond), r.code)
		})
	}
}

// expectation is what a check reports on a real target: its status and a
// piece of its reason.
type expectation struct {
	status reports.Status
	reason string
}

// realTargetExpect records, per manifest, what checks report on the real
// targets (observed and explained in fixtures/targets/server-everything.md).
// server-everything declares tasks (2025-11-25; it speaks no 2026-07-28)
// and its simulate-research-query keeps the task contract; the go-sdk
// server has no task tool, so its manifests declare no task role.
var realTargetExpect = map[string]map[string]expectation{
	"server-everything.yaml": {
		"TASK-CANCEL-TERMINAL":       {reports.Pass, "tasks/get right after it agreed"},
		"TASK-TERMINAL-FINAL":        {reports.Pass, "cancelled task: cancelled"},
		"TASK-CANCEL-TERMINAL-ERROR": {reports.Pass, "-32602"},
		"TASK-SURVIVES-DISCONNECT":   {reports.Skip, "not on the stdio transport"},
		"TASK-TTL-REPORTED":          {reports.Pass, "ttl 300000, pollInterval 1s"},
		"TASK-PROGRESS-STOPS":        {reports.Skip, "sent no progress for its token"},
	},
	"server-everything-http.yaml": {
		"TASK-CANCEL-TERMINAL":       {reports.Pass, "tasks/get right after it agreed"},
		"TASK-TERMINAL-FINAL":        {reports.Pass, "cancelled task: cancelled"},
		"TASK-CANCEL-TERMINAL-ERROR": {reports.Pass, "-32602"},
		"TASK-SURVIVES-DISCONNECT":   {reports.Pass, "working → completed"},
		"TASK-TTL-REPORTED":          {reports.Pass, "ttl 300000, pollInterval 1s"},
	},
	"gosdk-stdio.yaml": {
		"TASK-CANCEL-TERMINAL": {reports.Skip, `declares no "task" role`},
		"TASK-TTL-REPORTED":    {reports.Skip, `declares no "task" role`},
	},
	"gosdk-http.yaml": {
		"TASK-CANCEL-TERMINAL":     {reports.Skip, `declares no "task" role`},
		"TASK-SURVIVES-DISCONNECT": {reports.Skip, `declares no "task" role`},
	},
}

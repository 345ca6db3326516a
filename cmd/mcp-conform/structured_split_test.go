package main

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/reports"
)

// passiveCount is the "passively, N … in M check runs" part of a mixed
// check's reason (internal/harness/structured.go).
var passiveCount = regexp.MustCompile(`passively, \d+ [^;]*? in \d+ check runs`)

// TestStructuredFoldSliced: TOOLS-OUTPUT-SCHEMA and TOOLS-STRUCTURED-TEXT
// judge every check's tools/call results; a run whose checks are sliced
// over child processes judges the same calls as one process does (each
// slice walks its checks' transcripts, the parent folds them once), and
// TOOLS-EMBEDDED-RESOURCES's call of ticket_stats counts beside the check's
// own.
func TestStructuredFoldSliced(t *testing.T) {
	limitParallel(t)
	args := []string{"run", "-q", "--mutant", "structured-off-schema", "--spec", "2025-11-25", "--label-filter", "transport:stdio",
		"--focus", "^(TOOLS-OUTPUT-SCHEMA|TOOLS-STRUCTURED-TEXT|TOOLS-EMBEDDED-RESOURCES|ROBUST-UNKNOWN-METHOD|SCHEMA-VALID)$"}
	split, err := execCLIEnv(binary, t.TempDir(), 3*time.Minute, []string{"MCP_CONFORM_SLICE_RUNS=2"}, args...)
	if err != nil {
		t.Fatal(err)
	}
	whole := runCLI(t, 3*time.Minute, append(args, "--jobs", "1")...)
	for _, id := range []string{"TOOLS-OUTPUT-SCHEMA", "TOOLS-STRUCTURED-TEXT"} {
		s, w := split.checkOn(t, id, "stdio"), whole.checkOn(t, id, "stdio")
		if s.Status != w.Status {
			t.Errorf("%s: split %s %q, whole %s %q", id, s.Status, s.Reason, w.Status, w.Reason)
		}
		sc, wc := passiveCount.FindString(s.Reason), passiveCount.FindString(w.Reason)
		if sc == "" || sc != wc {
			t.Errorf("%s judged other calls split (%q) than whole (%q)", id, sc, wc)
		}
		if strings.Count(s.Reason, "passively,") != 1 {
			t.Errorf("%s folded %d times in the split run: %q", id, strings.Count(s.Reason, "passively,"), s.Reason)
		}
	}
	os := whole.checkOn(t, "TOOLS-OUTPUT-SCHEMA", "stdio")
	if os.Status != reports.Fail || !strings.Contains(os.Reason, "in TOOLS-EMBEDDED-RESOURCES") {
		t.Errorf("TOOLS-OUTPUT-SCHEMA: %s %q; want FAIL naming TOOLS-EMBEDDED-RESOURCES's call of ticket_stats", os.Status, os.Reason)
	}
}

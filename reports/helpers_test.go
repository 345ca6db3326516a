package reports

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// wantContains fails the test for each of wants that out (named what in
// the message) lacks.
func wantContains(t *testing.T, what, out string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("%s lacks %q:\n%s", what, want, out)
		}
	}
}

// golden compares got with testdata/name, or rewrites the file under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./reports -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden file (run with -update if intended)\n--- got ---\n%s\n--- want ---\n%s", name, got, want)
	}
}

// sampleReport is a run with one check of every status. Its schema and
// summary are deliberately wrong: the writers must fix them.
func sampleReport() *Report {
	return &Report{
		Schema:    "stale",
		Tool:      Tool{Name: "mcp-conform", Version: "0.1.0"},
		Target:    Target{Name: "reference", Transport: "stdio", ProtocolVersion: "2025-11-25", Command: "mcp-conform fixture --mutant no-cancel", Mutant: "no-cancel"},
		StartedAt: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
		Duration:  4321.5,
		Summary:   Summary{Pass: 99},
		Checks: []Check{
			{
				ID: "CANCEL-STDIO-SUPPRESS", Title: "Server sends no response after cancellation", Level: Must, Status: Pass,
				Spec:       []string{"specification/2025-11-25/basic/utilities/cancellation.mdx"},
				DurationMs: 412.3,
				Transcript: []Entry{{AtMs: 1, Kind: "message", Dir: "c2s", Raw: json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)}},
			},
			{
				ID: "IDEM-SAME-KEY", Title: "Same key runs the effect once", Level: Must, Status: Fail,
				Reason:     "effect ran 2 times for one key\nprobe ticket_stats.executions=2",
				Spec:       []string{"seeds/idempotency.md"},
				Clause:     "A retried mutation with the same key MUST NOT run twice.",
				DurationMs: 1250,
				Transcript: []Entry{
					{AtMs: 0.4, Kind: "message", Dir: "c2s", Raw: json.RawMessage(`{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "open_ticket", "arguments": {"operation_key": "k1"}}}`)},
					{AtMs: 12.25, Kind: "fault", Dir: "s2c", Rule: "drop-first-reply", Fault: "drop"},
					{AtMs: 13, Kind: "stderr", Text: "ticket opened <k1> & \"quoted\""},
					{AtMs: 1012.5, Kind: "note", Text: "retrying with the same key"},
					{AtMs: 1013, Kind: "message", Dir: "s2c", Raw: json.RawMessage(`{"jsonrpc":"2.0","id":7,"result":{}}`)},
				},
			},
			{
				ID: "SSE-HEARTBEAT", Title: "Idle stream carries keep-alives", Level: Should, Status: Warn,
				Reason:     "no comment line within 30s of idle",
				Spec:       []string{"specification/2025-11-25/basic/transports.mdx"},
				DurationMs: 30002,
				Transcript: []Entry{{AtMs: 30001, Kind: "note", Text: "stream idle for 30s"}},
			},
			{
				ID: "TASK-CANCEL", Title: "Cancelling a task stops its worker", Level: Must, Status: Skip,
				Reason: MissingRoleReason("task"),
			},
			{
				ID: "RECONNECT-REFETCH", Title: "Reconnect refetches the missed result", Level: Must, Status: Error,
				Reason:     "target never started: exec: \"node\": not found",
				DurationMs: 3.2,
				Transcript: []Entry{{AtMs: 2.5, Kind: "process", Text: "start failed"}},
			},
			{ID: "PROGRESS-MONOTONIC", Title: "Progress increases", Level: Must, Status: Pass, DurationMs: 88},
		},
	}
}

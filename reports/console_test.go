package reports

import (
	"bytes"
	"strings"
	"testing"
)

func TestWriteConsoleGolden(t *testing.T) {
	tests := []struct {
		file string
		opts ConsoleOptions
	}{
		{"console.golden", ConsoleOptions{}},
		{"console_verbose.golden", ConsoleOptions{Verbose: true}},
		{"console_color.golden", ConsoleOptions{Color: true}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteConsole(&buf, sampleReport(), tt.opts); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.file, buf.Bytes())
			if !tt.opts.Color && strings.Contains(buf.String(), "\x1b") {
				t.Error("escape sequence in uncoloured output")
			}
			if tt.opts.Color && !strings.Contains(buf.String(), "\x1b[32mPASS") {
				t.Error("no colour in coloured output")
			}
		})
	}
}

func TestWriteConsoleVerdict(t *testing.T) {
	tests := []struct {
		name     string
		statuses []Status
		strict   bool
		want     string
	}{
		{"pass", []Status{Pass, Skip}, false, "verdict: PASS (exit 0)"},
		{"warn", []Status{Pass, Warn}, false, "verdict: PASS with 1 warning (exit 0)"},
		{"warns", []Status{Warn, Warn}, false, "verdict: PASS with 2 warnings (exit 0)"},
		{"warn strict", []Status{Pass, Warn}, true, "verdict: FAIL (exit 1; strict: warnings fail)"},
		{"fail", []Status{Pass, Fail, Warn}, false, "verdict: FAIL (exit 1)"},
		{"error", []Status{Fail, Error}, false, "verdict: ERROR (exit 2)"},
		{"none", nil, false, "verdict: PASS (exit 0; no checks ran)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Report{Target: Target{Name: "x"}}
			for _, s := range tt.statuses {
				r.Checks = append(r.Checks, Check{ID: "A-B", Status: s, Reason: "why"})
			}
			var buf bytes.Buffer
			if err := WriteConsole(&buf, r, ConsoleOptions{Strict: tt.strict}); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
			// The verdict line comes just before the closing role line.
			if got := lines[len(lines)-2]; got != tt.want {
				t.Errorf("verdict line = %q, want %q", got, tt.want)
			}
			s := Summarize(r.Checks)
			if ExitCode(s, tt.strict) != exitCodeOf(t, tt.want) {
				t.Errorf("verdict disagrees with ExitCode")
			}
		})
	}
}

// TestWriteConsoleRoleLine: the console ends with how many checks gave a
// verdict and how many skipped for lack of a role, counting only the SKIPs
// whose reason is the harness's missing-role reason (or that carry
// MissingRole), and points at init only when there is one.
func TestWriteConsoleRoleLine(t *testing.T) {
	for _, tt := range []struct {
		name   string
		checks []Check
		want   string
	}{
		{"none", nil, "0 checks gave a verdict, 0 skipped for lack of a role"},
		{"one verdict", []Check{{Status: Pass}}, "1 check gave a verdict, 0 skipped for lack of a role"},
		{"mixed", []Check{
			{Status: Pass}, {Status: Fail}, {Status: Warn}, {Status: Error, Reason: MissingRoleReason("slow")},
			{Status: Skip, Reason: MissingRoleReason("slow")},
			{Status: Skip, Reason: MissingRoleReason("mutation")},
			{Status: Skip, MissingRole: "task", Reason: "worded otherwise"},
			{Status: Skip, Reason: "not on the stdio transport (applies to http)"},
			{Status: Skip, Reason: "the target sent no progress notifications (progress is optional; nothing to check)"},
			{Status: Skip, Reason: "the slow role declares no probe (probe: {tool, tag}): whether the server's work stopped is not observable from outside"},
		}, "3 checks gave a verdict, 3 skipped for lack of a role (mcp-conform init drafts one)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteConsole(&buf, &Report{Checks: tt.checks}, ConsoleOptions{}); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
			if got := lines[len(lines)-1]; got != tt.want {
				t.Errorf("last line = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestMissingRoleOf(t *testing.T) {
	for _, tt := range []struct {
		c    Check
		want string
	}{
		{Check{Status: Skip, Reason: MissingRoleReason("slow")}, "slow"},
		{Check{Status: Skip, Reason: `the target manifest declares no "slow" role`}, "slow"},
		{Check{Status: Skip, Reason: MissingRoleReason(`we"ird`)}, `we"ird`},
		{Check{Status: Skip, MissingRole: "flood"}, "flood"},
		{Check{Status: Pass, MissingRole: "flood", Reason: MissingRoleReason("flood")}, ""},
		{Check{Status: Error, Reason: MissingRoleReason("slow")}, ""},
		{Check{Status: Skip, Reason: MissingRoleReason("slow") + "; and more"}, ""},
		{Check{Status: Skip, Reason: "the target manifest declares no sessionTTL: when its sessions expire is unknown"}, ""},
		{Check{Status: Skip, Reason: "the manifest declares no task role"}, ""},
	} {
		if got := MissingRoleOf(tt.c); got != tt.want {
			t.Errorf("MissingRoleOf(%s %q, field %q) = %q, want %q", tt.c.Status, tt.c.Reason, tt.c.MissingRole, got, tt.want)
		}
	}
}

// exitCodeOf reads the exit code back from a verdict line.
func exitCodeOf(t *testing.T, verdict string) int {
	t.Helper()
	i := strings.Index(verdict, "(exit ")
	if i < 0 {
		t.Fatalf("no exit code in %q", verdict)
	}
	return int(verdict[i+len("(exit ")] - '0')
}

func TestWriteConsoleShape(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteConsole(&buf, sampleReport(), ConsoleOptions{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	wantContains(t, "console output", out,
		"target reference (stdio, protocol 2025-11-25, mutant no-cancel)",
		"\nPASS 2  FAIL 1  WARN 1  SKIP 1  ERROR 1\n",
		"\nFAIL   IDEM-SAME-KEY          Same key runs the effect once\n       effect ran 2 times for one key\n       probe ticket_stats.executions=2\n",
	)
	// Not the shape a test runner's closing line has.
	if strings.Contains(out, " passed, ") {
		t.Errorf("totals look like a test runner's line:\n%s", out)
	}
	// Titles start in one column.
	col := -1
	for _, l := range strings.Split(out, "\n") {
		if i := strings.Index(l, "  Same key"); i >= 0 {
			col = i
		}
	}
	if i := strings.Index(out, "\nPASS   PROGRESS-MONOTONIC     Progress increases"); i < 0 || col < 0 {
		t.Errorf("columns not aligned:\n%s", out)
	}
}

func TestWriteConsoleEscapesTarget(t *testing.T) {
	r := &Report{
		Target: Target{Name: "evil\x1b]0;title\x07"},
		Checks: []Check{{ID: "ROBUST-X", Title: "t", Status: Fail, Reason: "line1\r\x1b[2Jline2\xff",
			Transcript: []Entry{{Kind: "stderr", Text: "\x1b[31mred"}}}},
	}
	for _, color := range []bool{false, true} {
		var buf bytes.Buffer
		if err := WriteConsole(&buf, r, ConsoleOptions{Verbose: true, Color: color}); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		for _, bad := range []string{"\x1b]", "\x1b[2J", "\x1b[31mred", "\r", "\x07", "\xff"} {
			if strings.Contains(out, bad) {
				t.Errorf("color=%v: output carries raw %q:\n%q", color, bad, out)
			}
		}
		if !strings.Contains(out, `\x1b[31mred`) {
			t.Errorf("escaped stderr missing:\n%s", out)
		}
	}
}

func TestWriteProgress(t *testing.T) {
	tests := []struct {
		done, total int
		c           Check
		color       bool
		want        string
	}{
		{3, 14, Check{ID: "CANCEL-STDIO-SUPPRESS", Status: Pass, DurationMs: 412.4}, false,
			"[ 3/14] PASS   CANCEL-STDIO-SUPPRESS (412ms)\n"},
		{14, 14, Check{ID: "RECONNECT-REFETCH", Status: Error, DurationMs: 1500, Reason: "target never started\nmore"}, false,
			"[14/14] ERROR  RECONNECT-REFETCH (1.50s): target never started\n"},
		{1, 2, Check{ID: "TASK-CANCEL", Status: Skip, Reason: "no task role"}, false,
			"[1/2] SKIP   TASK-CANCEL (0ms): no task role\n"},
		{1, 2, Check{ID: "SSE-HEARTBEAT", Status: Warn, DurationMs: 30002}, true,
			"[1/2] \x1b[33mWARN \x1b[0m  SSE-HEARTBEAT (30.0s)\n"},
		{7, 120, Check{ID: "FLOW-X", Status: Fail, DurationMs: 0.4, Reason: strings.Repeat("r", 200)}, false,
			"[  7/120] FAIL   FLOW-X (0ms): " + strings.Repeat("r", 160) + "… (200 bytes)\n"},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		if err := WriteProgress(&buf, tt.done, tt.total, tt.c, tt.color); err != nil {
			t.Fatal(err)
		}
		if got := buf.String(); got != tt.want {
			t.Errorf("WriteProgress(%d, %d, %s) = %q, want %q", tt.done, tt.total, tt.c.ID, got, tt.want)
		}
	}
}

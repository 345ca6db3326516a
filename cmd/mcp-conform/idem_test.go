package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/reports"
)

// TestBadIdempotencyManifests: a mutation role naming a tool the target
// does not list, a key that is not in the tool's input schema, or a probe
// that answers no number stops the run before any check, with exit 2 and
// a message that says what is wrong.
func TestBadIdempotencyManifests(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"idem-unknown-tool.yaml", `tool "open_ticket" is not in tools/list`},
		{"idem-bad-key.yaml", `key argument "idempotency_key" is not a property of create_support_ticket's inputSchema`},
		{"idem-bad-probe.yaml", `probe lookup_ticket does not return a number in "found"`},
	} {
		t.Run(tc.file, func(t *testing.T) {
			limitParallel(t)
			r := runCLI(t, 30*time.Second, "run", "-q", "--manifest", filepath.Join("testdata", tc.file))
			if r.code != 2 {
				t.Fatalf("exit %d, want 2\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("stderr lacks %q:\n%s", tc.want, r.stderr)
			}
			if r.report != nil {
				t.Errorf("a report was written (%d checks): no check may run on a bad manifest", len(r.report.Checks))
			}
		})
	}
}

// TestCheckThenActCaughtEveryTime: the proxy's barrier makes the race of
// IDEM-CONCURRENT deterministic — the check-then-act mutant fails it on
// both transports on every run, not once in a while.
func TestCheckThenActCaughtEveryTime(t *testing.T) {
	limitParallel(t)
	for i := 0; i < 5; i++ {
		r := runCLI(t, runLimit, "run", "-q", "--mutant", "check-then-act", "--focus", "IDEM-CONCURRENT")
		for _, tr := range []string{"stdio", "http"} {
			c := r.checkOn(t, "IDEM-CONCURRENT", tr)
			if c.Status != reports.Fail || !strings.Contains(c.Reason, "ran the effect 2 times") {
				t.Fatalf("run %d, %s: %s %s", i+1, tr, c.Status, c.Reason)
			}
		}
		if r.code != 1 {
			t.Fatalf("run %d: exit %d, want 1", i+1, r.code)
		}
	}
}

// TestFixtureLedgerFlag: two `mcp-conform fixture --ledger FILE` processes,
// one after the other, share the ledger: the second finds the ticket the
// first created and runs nothing again.
func TestFixtureLedgerFlag(t *testing.T) {
	ledger := filepath.Join(t.TempDir(), "ledger.db")
	call := func(id int, tool string, args string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args)
	}
	const create = `{"operation_key":"op-login-ticket-0001","title":"Cannot sign in"}`
	// serve sends each line and waits for its answer before the next, then
	// closes stdin (the server ends at EOF, cancelling calls in flight).
	serve := func(lines ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		cmd, in, out, _ := startPiped(t, ctx, "fixture", "--ledger", ledger)
		br := bufio.NewReader(out)
		var got strings.Builder
		for _, l := range lines {
			if _, err := io.WriteString(in, l+"\n"); err != nil {
				t.Fatal(err)
			}
			answer, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("no answer to %s: %v", l, err)
			}
			got.WriteString(answer)
		}
		_ = in.Close()
		if err := cmd.Wait(); err != nil {
			t.Fatalf("fixture: %v", err)
		}
		return got.String()
	}
	first := serve(call(1, "create_support_ticket", create))
	second := serve(call(1, "create_support_ticket", create), call(2, "ticket_stats", `{"operation_key":"op-login-ticket-0001"}`))
	if !strings.Contains(first, `"ticket_id":"T-0001"`) || !strings.Contains(second, `"ticket_id":"T-0001"`) {
		t.Fatalf("first:\n%s\nsecond:\n%s", first, second)
	}
	if !strings.Contains(second, `"executions":1`) {
		t.Fatalf("the second server ran the effect again:\n%s", second)
	}
}

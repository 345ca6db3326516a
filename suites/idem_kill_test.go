package suites

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/internal/harness"
)

// TestKillBetweenCommitAndResponse SIGKILLs the reference server at the
// worst moment — its response to create_support_ticket has left it (so the
// ledger committed) but not reached the client — starts it again on the
// same ledger file, and reconciles: the lookup by key finds the operation,
// a retry with the same key returns the lost response's result, and the
// effect ran exactly once (the probe and the file itself agree): nothing
// lost, nothing duplicated.
func TestKillBetweenCommitAndResponse(t *testing.T) {
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			ledger := filepath.Join(t.TempDir(), "ledger.db")
			m := ReferenceManifest("")
			if transport == "http" {
				m = ReferenceHTTPManifest("")
			}
			m.Env[fixtureLedgerEnv] = ledger
			cfg := (&Config{}).WithDefaults()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			connect := func(rules ...faultproxy.Rule) *endpoint {
				t.Helper()
				if transport == "http" {
					c, err := harness.DialHTTP(ctx, cfg, m, rules...)
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(c.Close)
					return httpEndpoint(ctx, c, c.W)
				}
				c, err := harness.Dial(ctx, cfg, m, rules...)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(c.Close)
				return stdioEndpoint(c)
			}
			role := m.Roles["mutation"]
			key := newKey("kill")

			e1 := connect(faultproxy.Rule{Name: "kill", Match: faultproxy.Match{Dir: faultproxy.ServerToClient, ID: idFirst}, Fault: faultproxy.Crash{}})
			w, err := e1.StartTool(ctx, idFirst, role.Tool, role.MutationArgs(key))
			if err != nil {
				t.Fatal(err)
			}
			lost, err := faultedMessage(ctx, e1.Tr, "kill", "crash")
			if err != nil || lost.Failed() || len(lost.Structured) == 0 {
				t.Fatalf("no committed response reached the proxy before the kill: %v %s", err, lost.Msg.Raw)
			}
			select {
			case <-e1.Exited:
			case <-time.After(5 * time.Second):
				t.Fatal("the server did not die")
			}
			wctx, wcancel := context.WithTimeout(ctx, 2*time.Second)
			if m, err := w.Wait(wctx); err == nil && m.Env.Kind.IsReply() {
				t.Fatalf("the client got the response the kill should have lost: %s", m.Raw)
			}
			wcancel()

			e2 := connect() // the restarted server, on the same ledger
			look, err := e2.CallTool(ctx, cfg.CallTimeout, e2.NewID(), "lookup_ticket", map[string]any{"operation_key": key})
			if err != nil {
				t.Fatal(err)
			}
			var found struct {
				Found    bool
				State    string
				Tickets  int
				TicketID string `json:"ticket_id"`
			}
			if err := json.Unmarshal(look.Structured, &found); err != nil || !found.Found || found.Tickets != 1 || found.State != "verified" {
				t.Fatalf("reconciliation by key after the kill: %s", look.Msg.Raw)
			}
			retry, err := e2.CallTool(ctx, cfg.CallTimeout, e2.NewID(), role.Tool, role.MutationArgs(key))
			if err != nil || retry.Failed() {
				t.Fatalf("retry after restart: %v %s", err, retry.Msg.Raw)
			}
			if !bytes.Equal(retry.Structured, lost.Structured) {
				t.Fatalf("retry returned %s, the lost response carried %s", retry.Structured, lost.Structured)
			}
			if n, _, err := e2.Count(ctx, cfg.CallTimeout, role, key); err != nil || n != 1 {
				t.Fatalf("probe: %v executions (%v), want 1", n, err)
			}

			db, err := sql.Open("sqlite", "file:"+ledger+"?mode=ro&_pragma=busy_timeout(5000)")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var tickets, executions int
			if err := db.QueryRow(`SELECT COUNT(*) FROM tickets WHERE operation_key = ?`, key).Scan(&tickets); err != nil {
				t.Fatal(err)
			}
			if err := db.QueryRow(`SELECT n FROM executions WHERE operation_key = ?`, key).Scan(&executions); err != nil {
				t.Fatal(err)
			}
			if tickets != 1 || executions != 1 {
				t.Fatalf("the ledger file holds %d tickets and %d executions for the key, want 1 and 1", tickets, executions)
			}
			if found.TicketID == "" || !bytes.Contains(lost.Structured, []byte(found.TicketID)) {
				t.Fatalf("lookup found %s, the lost response named another ticket: %s", found.TicketID, lost.Structured)
			}
		})
	}
}

package harness

import (
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/reports"
)

// TestUTF8Walk: the walk judges the bytes of every message the server sent
// over Streamable HTTP (a JSON body, an SSE event's data) and leaves alone
// the client's messages, the proxy's own, stdio, WebSocket, a priming event
// and a plain-text body of an error status.
func TestUTF8Walk(t *testing.T) {
	run := &schemaRun{Check: "X", Transport: "http", Version: "2025-11-25", UTF8: true, NoSchema: true}
	w := newSchemaWalk(nil, 1, run)
	see := func(e faultproxy.Entry) {
		if e.Kind == "" {
			e.Kind = faultproxy.EntryMessage
		}
		if e.Kind != faultproxy.EntryMessage {
			w.seeOther(e)
			return
		}
		raw := messageBytes(e)
		w.seeUTF8(e, ReportEntry(e), raw)
	}
	s2c, c2s := faultproxy.ServerToClient, faultproxy.ClientToServer
	good := `{"jsonrpc":"2.0","id":1,"result":{"name":"caf` + "\u00e9" + `"}}`
	bad := `{"jsonrpc":"2.0","id":2,"result":{"name":"x` + "\xff" + `"}}`
	see(faultproxy.Entry{Dir: c2s, Stream: "POST#1", Raw: []byte(bad)})                   // the client's: not judged
	see(faultproxy.Entry{Dir: s2c, Stream: "POST#1", Raw: []byte(good)})                  // judged, UTF-8
	see(faultproxy.Entry{Dir: s2c, Stream: "POST#2", Raw: []byte("id: a-0\ndata: \n\n")}) // priming: no message
	see(faultproxy.Entry{Dir: s2c, Stream: "POST#2", Raw: []byte("id: a-1\ndata: " + bad + "\n\n")})
	see(faultproxy.Entry{Dir: s2c, Stream: "POST#3", Raw: []byte(bad), Outcome: faultproxy.OutcomeInjected})
	see(faultproxy.Entry{Dir: s2c, Stream: "", Raw: []byte(bad)})
	see(faultproxy.Entry{Dir: s2c, Stream: "WS#1", Raw: []byte(bad)})
	see(faultproxy.Entry{Kind: faultproxy.EntryHTTP, Dir: s2c, Stream: "POST#4", HTTP: &faultproxy.HTTPInfo{Status: 400}})
	see(faultproxy.Entry{Dir: s2c, Stream: "POST#4", Raw: []byte("bad request \xff")}) // no JSON-RPC message
	see(faultproxy.Entry{Kind: faultproxy.EntryHTTP, Dir: s2c, Stream: "POST#5", HTTP: &faultproxy.HTTPInfo{Status: 400}})
	see(faultproxy.Entry{Dir: s2c, Stream: "POST#5", Raw: []byte(`{"jsonrpc":"2.0","error":{"code":-32600,"message":"` + "\xc3(" + `"}}`)})
	if run.U8Messages != 3 {
		t.Errorf("U8Messages = %d, want 3 (POST#1, POST#2's message, POST#5)", run.U8Messages)
	}
	if len(run.U8Findings) != 2 || run.U8Findings[0].Stream != "POST#2" || run.U8Findings[1].Stream != "POST#5" {
		t.Fatalf("U8Findings = %+v, want POST#2 and POST#5", run.U8Findings)
	}
	if f := run.U8Findings[0]; f.At != strings.Index(bad, "\xff") {
		t.Errorf("offset = %d, want %d", f.At, strings.Index(bad, "\xff"))
	}
	old := utf8Check
	utf8Check = &Check{ID: "U8", Passive: true, Transports: []string{"http"},
		Rules: map[string]Rule{"2025-11-25": {Level: reports.Must}}}
	defer func() { utf8Check = old }()
	res := utf8ResultsOf([]schemaRun{*run})
	if len(res) != 1 || res[0].Status != reports.Fail || !strings.Contains(res[0].Reason, "2 of 3 messages") {
		t.Fatalf("results = %+v, want one FAIL, 2 of 3 messages", res)
	}
	clean := schemaRun{Check: "Y", Transport: "http", Version: "2025-11-25", UTF8: true, U8Messages: 3}
	if res := utf8ResultsOf([]schemaRun{clean}); len(res) != 1 || res[0].Status != reports.Pass {
		t.Fatalf("results of a clean walk = %+v, want one PASS", res)
	}
	if res := utf8ResultsOf([]schemaRun{{Check: "Z", Transport: "http", Version: "2025-11-25", UTF8: true}}); len(res) != 1 || res[0].Status != reports.Skip {
		t.Fatalf("results of a walk with no message = %+v, want one SKIP", res)
	}
}

// TestUTF8GapOutsideItsVersions: in a version the check has no rule for,
// its gap row SKIPs as an active check there would ("not in ...") when the
// run has one target, and is left out when it has several (--spec all).
func TestUTF8GapOutsideItsVersions(t *testing.T) {
	old := utf8Check
	utf8Check = &Check{ID: "U8", Passive: true, Transports: []string{"http"},
		Rules: map[string]Rule{"2025-11-25": {Level: reports.Must}, "2025-06-18": {Level: reports.Must}}}
	cfgMu.Lock()
	oldCfg := current
	current = &Config{Targets: []*Manifest{{Transport: "http", Spec: "2026-07-28"}}}
	cfgMu.Unlock()
	defer func() {
		utf8Check = old
		cfgMu.Lock()
		current = oldCfg
		cfgMu.Unlock()
	}()
	other := reports.Check{ID: "OTHER", Transport: "http", ProtocolVersion: "2026-07-28", Status: reports.Pass}
	gaps := utf8Gaps(config(), []reports.Check{other})
	if len(gaps) != 1 || gaps[0].Status != reports.Skip || !strings.HasPrefix(gaps[0].Reason, "not in 2026-07-28 on http (applies there to 2025-") {
		t.Fatalf("gaps = %+v, want one SKIP not in 2026-07-28", gaps)
	}
	cfgMu.Lock()
	current = &Config{Targets: []*Manifest{{Transport: "http", Spec: "2026-07-28"}, {Transport: "http", Spec: "2025-11-25"}}}
	cfgMu.Unlock()
	if gaps := utf8Gaps(config(), []reports.Check{other}); len(gaps) != 0 {
		t.Fatalf("gaps of a run of several targets = %+v, want none outside the check's versions", gaps)
	}
	other.ProtocolVersion = "2025-11-25"
	if gaps := utf8Gaps(config(), []reports.Check{other}); len(gaps) != 1 || !strings.Contains(gaps[0].Reason, "nothing to judge") {
		t.Fatalf("gaps in its version = %+v, want the nothing-to-judge SKIP", gaps)
	}
}

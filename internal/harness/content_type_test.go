package harness

import (
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/reports"
)

// TestContentTypeWalk: the walk judges the head of each POST that carried
// a request (a 2xx must name application/json or text/event-stream), and
// leaves alone a notification's POST, an error status, a GET and a head the
// proxy replaced.
func TestContentTypeWalk(t *testing.T) {
	run := &schemaRun{Check: "X", Transport: "http", Version: "2025-06-18", ContentType: true, NoSchema: true}
	w := newSchemaWalk(nil, 1, run)
	head := func(stream string, status int, ct string, text string) faultproxy.Entry {
		h := map[string][]string{}
		if ct != "" {
			h["Content-Type"] = []string{ct}
		}
		return faultproxy.Entry{Kind: faultproxy.EntryHTTP, Dir: faultproxy.ServerToClient, Stream: stream, Text: text,
			HTTP: &faultproxy.HTTPInfo{Status: status, Header: h}}
	}
	body := func(stream, raw string) {
		e := faultproxy.Entry{Kind: faultproxy.EntryMessage, Dir: faultproxy.ClientToServer, Stream: stream, Raw: []byte(raw)}
		w.see(e, reports.Entry{}, messageBytes(e), parseMessage(messageBytes(e)))
	}
	req := func(id string) string { return `{"jsonrpc":"2.0","id":"` + id + `","method":"tools/list"}` }
	body("POST#1", req("a"))
	w.seeOther(head("POST#1", 200, "application/json; charset=utf-8", ""))
	body("POST#2", req("b"))
	w.seeOther(head("POST#2", 200, "Text/Event-Stream", ""))
	body("POST#3", req("c"))
	w.seeOther(head("POST#3", 200, "text/plain", ""))
	answer := faultproxy.Entry{Kind: faultproxy.EntryMessage, Dir: faultproxy.ServerToClient, Stream: "POST#3",
		Raw: []byte(`{"jsonrpc":"2.0","id":"c","result":{"tools":[]}}`)}
	w.see(answer, ReportEntry(answer), messageBytes(answer), parseMessage(messageBytes(answer)))
	body("POST#4", req("d"))
	w.seeOther(head("POST#4", 202, "", ""))
	body("POST#5", `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	w.seeOther(head("POST#5", 202, "", ""))
	body("POST#6", req("f"))
	w.seeOther(head("POST#6", 400, "text/plain", ""))
	body("POST#7", req("g"))
	w.seeOther(head("POST#7", 200, "text/plain", "replaced by the proxy"))
	w.seeOther(head("GET#1", 200, "text/plain", ""))
	// A request a fault injected on a notification's POST: that POST's
	// 202 answers the notification.
	body("POST#8", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"x"}}`)
	injected := faultproxy.Entry{Kind: faultproxy.EntryMessage, Dir: faultproxy.ClientToServer, Stream: "POST#8",
		Raw: []byte(req("h")), Outcome: faultproxy.OutcomeInjected}
	w.see(injected, ReportEntry(injected), messageBytes(injected), parseMessage(messageBytes(injected)))
	w.seeOther(head("POST#8", 202, "", ""))
	if run.Answers != 5 {
		t.Errorf("Answers = %d, want 5 (POST#1-4 and #6)", run.Answers)
	}
	if len(run.Heads) != 2 || run.Heads[0].Stream != "POST#3" || run.Heads[1].Stream != "POST#4" {
		t.Fatalf("Heads = %+v, want POST#3 (text/plain) and POST#4 (202, none)", run.Heads)
	}
	if got := run.Heads[0].String(); got != `tools/list: HTTP 200, Content-Type "text/plain"` {
		t.Errorf("finding = %q", got)
	}
	if n := len(run.Heads[0].Entries); n != 3 {
		t.Errorf("finding of POST#3 shows %d entries, want 3 (the request, the head, the answer)", n)
	}
	old := contentTypeCheck
	contentTypeCheck = &Check{ID: "CT", Passive: true, Transports: []string{"http"},
		Rules: map[string]Rule{"2025-06-18": {Level: reports.Must}}}
	defer func() { contentTypeCheck = old }()
	res := contentTypeResultsOf([]schemaRun{*run})
	if len(res) != 1 || res[0].Status != reports.Fail || !strings.Contains(res[0].Reason, "2 of 5 answers") {
		t.Fatalf("results = %+v, want one FAIL, 2 of 5 answers", res)
	}
	// SCHEMA-VALID makes nothing of a walk it did not ask for.
	if got := schemaResultsOf([]schemaRun{*run}); len(got) != 0 {
		t.Errorf("schemaResultsOf a NoSchema walk = %+v, want none", got)
	}
}

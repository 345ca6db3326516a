package harness

import (
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/reports"
)

// TestStructuredWalk: the walk judges each tools/call result against the
// outputSchema the connection listed (the probe's for a tool it did not
// list) and for the text repeat; it leaves alone a task-augmented call, an
// InputRequiredResult, an isError result, an error, the proxy's own
// message, an HTTP error status's body, an id reused in flight for another
// tool and a second answer to one id.
func TestStructuredWalk(t *testing.T) {
	run := &schemaRun{Check: "X", Transport: "stdio", Version: "2025-06-18", NoSchema: true, Structured: true}
	w := newSchemaWalk(nil, 1, run)
	w.sc = newSCState([]map[string]any{
		{"name": "probed", "outputSchema": map[string]any{"type": "object", "required": []any{"n"}}},
	})
	msg := func(dir faultproxy.Direction, raw string, o faultproxy.Outcome) {
		e := faultproxy.Entry{Kind: faultproxy.EntryMessage, Dir: dir, Raw: []byte(raw), Outcome: o}
		w.see(e, ReportEntry(e), messageBytes(e), parseMessage(messageBytes(e)))
	}
	c2s, s2c := faultproxy.ClientToServer, faultproxy.ServerToClient
	call := func(id, name, extra string) {
		msg(c2s, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"`+name+`","arguments":{}`+extra+`}}`, 0)
	}
	answer := func(id, result string) { msg(s2c, `{"jsonrpc":"2.0","id":`+id+`,"result":`+result+`}`, 0) }
	msg(c2s, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 0)
	answer("1", `{"tools":[{"name":"stats","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}},{"name":"plain","inputSchema":{"type":"object"}}]}`)
	good := `{"content":[{"type":"text","text":"{\"n\": 1}"}],"structuredContent":{"n":1}}`
	call("2", "stats", "")
	answer("2", good) // judged for both: fine
	call("3", "stats", "")
	answer("3", `{"content":[{"type":"text","text":"{\"n\":\"x\"}"}],"structuredContent":{"n":"x"}}`) // off its schema
	call("4", "stats", "")
	answer("4", `{"content":[{"type":"text","text":"hi"}]}`) // none
	call("5", "plain", "")
	answer("5", `{"content":[{"type":"text","text":"hi"}],"structuredContent":{"a":1}}`) // no text repeat
	call("6", "probed", "")
	answer("6", `{"content":[{"type":"text","text":"{}"}],"structuredContent":{}}`) // off the probe's schema
	call("7", "stats", "")
	answer("7", `{"content":[],"isError":true}`)
	call("8", "stats", `,"task":{"ttl":1000}`)
	answer("8", `{"task":{"taskId":"t","status":"working"}}`)
	call("9", "stats", "")
	msg(s2c, `{"jsonrpc":"2.0","id":9,"error":{"code":-32603,"message":"x"}}`, 0)
	call("10", "stats", "")
	msg(s2c, `{"jsonrpc":"2.0","id":10,"result":{"content":[]}}`, faultproxy.OutcomeInjected)
	msg(s2c, `{"jsonrpc":"2.0","id":10,"result":{"content":[]}}`, faultproxy.OutcomeReplaced)
	call("11", "stats", "")
	answer("11", `{"resultType":"input_required","inputRequests":{"a":{"method":"elicitation/create","params":{}}}}`)
	call("12", "stats", "")
	call("12", "plain", "") // the id reused in flight for another tool
	answer("12", `{"content":[],"structuredContent":{"n":"x"}}`)
	answer("2", `{"content":[],"structuredContent":{"n":"x"}}`) // a second answer to id 2
	if run.SCCalls != 4 || run.SCText != 4 {
		t.Errorf("SCCalls, SCText = %d, %d; want 4 (ids 2, 3, 4, 6) and 4 (ids 2, 3, 5, 6)", run.SCCalls, run.SCText)
	}
	var got []string
	for _, f := range run.SCFindings {
		got = append(got, f.Clause+" "+f.Tool)
	}
	want := []string{"tl#9 stats", "tl#9 stats", "tl#8 plain", "tl#9 probed"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("findings = %v, want %v", got, want)
	}

	// Over Streamable HTTP an error status's body is not judged, and an
	// id answers the request of its own POST.
	hrun := &schemaRun{Check: "Y", Transport: "http", Version: "2025-06-18", NoSchema: true, Structured: true}
	hw := newSchemaWalk(nil, 1, hrun)
	hw.sc = newSCState(nil)
	hmsg := func(stream string, dir faultproxy.Direction, raw string) {
		e := faultproxy.Entry{Kind: faultproxy.EntryMessage, Dir: dir, Stream: stream, Raw: []byte(raw)}
		hw.see(e, ReportEntry(e), messageBytes(e), parseMessage(messageBytes(e)))
	}
	hmsg("POST#1", c2s, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}`)
	hmsg("POST#2", c2s, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"b"}}`)
	hw.seeOther(faultproxy.Entry{Kind: faultproxy.EntryHTTP, Dir: s2c, Stream: "POST#2", HTTP: &faultproxy.HTTPInfo{Status: 500}})
	hmsg("POST#2", s2c, `{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":{"x":1}}}`)
	hmsg("POST#1", s2c, `{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":{"x":1}}}`)
	if hrun.SCText != 1 || len(hrun.SCFindings) != 1 || hrun.SCFindings[0].Tool != "a" {
		t.Errorf("HTTP walk: SCText %d, findings %+v; want 1, one tl#8 of tool a", hrun.SCText, hrun.SCFindings)
	}
}

// TestFoldStructured: the walks' findings widen the mixed checks' results
// of their transport and version: a SKIP with judged calls PASSes, a
// tl#9 finding FAILs TOOLS-OUTPUT-SCHEMA, a tl#8 one WARNs
// TOOLS-STRUCTURED-TEXT; an ERROR and another version stay as they are.
func TestFoldStructured(t *testing.T) {
	oldC, oldT := outputSchemaCheck, structuredTextCheck
	defer func() { outputSchemaCheck, structuredTextCheck = oldC, oldT }()
	rules := map[string]Rule{"2025-06-18": {Level: reports.Must}, "2025-11-25": {Level: reports.Must}}
	outputSchemaCheck = &Check{ID: "OS", Transports: []string{"stdio"}, Rules: rules}
	structuredTextCheck = &Check{ID: "ST", Transports: []string{"stdio"},
		Rules: map[string]Rule{"2025-06-18": {Level: reports.Should}, "2025-11-25": {Level: reports.Should}}}
	f9 := scFinding{Clause: "tl#9", Conn: 1, Tool: "t", Why: "off"}
	f8 := scFinding{Clause: "tl#8", Conn: 1, Tool: "t", Why: "no text"}
	runs := []schemaRun{
		{Check: "A", Transport: "stdio", Version: "2025-06-18", Structured: true, SCCalls: 2, SCText: 2},
		{Check: "B", Transport: "stdio", Version: "2025-06-18", Structured: true, SCCalls: 1},
		{Check: "C", Transport: "stdio", Version: "2025-11-25", Structured: true, SCCalls: 1, SCText: 1, SCFindings: []scFinding{f9, f8}},
	}
	res := []reports.Check{
		{ID: "OS", Transport: "stdio", ProtocolVersion: "2025-06-18", Status: reports.Skip, Reason: "no tool"},
		{ID: "ST", Transport: "stdio", ProtocolVersion: "2025-06-18", Status: reports.Pass, Reason: "own"},
		{ID: "OS", Transport: "stdio", ProtocolVersion: "2025-11-25", Status: reports.Pass, Reason: "own"},
		{ID: "ST", Transport: "stdio", ProtocolVersion: "2025-11-25", Status: reports.Skip, Reason: "no tool"},
		{ID: "OS", Transport: "stdio", ProtocolVersion: "2025-03-26", Status: reports.Skip, Reason: "not in"},
		{ID: "ST", Transport: "stdio", ProtocolVersion: "2025-11-25", Status: reports.Error, Reason: "broke"},
	}
	foldStructured(res, runs)
	for i, want := range []struct {
		status reports.Status
		reason string
	}{
		{reports.Pass, "passively, 3 tools/call results of a tool with an outputSchema in 2 check runs"},
		{reports.Pass, "own; passively, 2 tools/call results carrying structuredContent in 2 check runs"},
		{reports.Fail, "1 broke the clause: in C (connection 1), tool t: off"},
		{reports.Warn, "1 broke the clause: in C (connection 1), tool t: no text"},
		{reports.Skip, "not in"},
		{reports.Error, "broke"},
	} {
		if res[i].Status != want.status || !strings.Contains(res[i].Reason, want.reason) {
			t.Errorf("result %d (%s %s) = %s %q, want %s containing %q", i, res[i].ID, res[i].ProtocolVersion, res[i].Status, res[i].Reason, want.status, want.reason)
		}
	}
	if len(res[2].Transcript) == 0 {
		t.Errorf("the FAIL carries no transcript")
	}
	if res[4].Reason != "not in" {
		t.Errorf("a version the check does not apply to was widened: %q", res[4].Reason)
	}
}

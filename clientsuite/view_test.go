package clientsuite

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// entry shortens transcript fixtures.
func msg(at int, dir faultproxy.Direction, seq int64, stream, raw string) faultproxy.Entry {
	return faultproxy.Entry{At: time.Duration(at) * time.Millisecond, Kind: faultproxy.EntryMessage, Dir: dir, Seq: seq, Stream: stream, Raw: []byte(raw)}
}

// TestViewReadsTheTranscript: request heads give c2s messages their
// headers; SSE events give their id, retry and data; a comment is a
// heartbeat; a dropped reply is not delivered; a delayed one is delivered
// at its release.
func TestViewReadsTheTranscript(t *testing.T) {
	c2s, s2c := faultproxy.ClientToServer, faultproxy.ServerToClient
	entries := []faultproxy.Entry{
		{Kind: faultproxy.EntryHTTP, Dir: c2s, Stream: "POST#1", HTTP: &faultproxy.HTTPInfo{Method: "POST", Header: map[string][]string{"Mcp-Session-Id": {"s1"}, "Mcp-Protocol-Version": {"2025-11-25"}}}},
		msg(1, c2s, 1, "POST#1", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"b":1,"a":2},"_meta":{"progressToken":"t-1"}}}`),
		{Kind: faultproxy.EntryHTTP, Dir: s2c, Stream: "POST#1", HTTP: &faultproxy.HTTPInfo{Status: 200}},
		msg(2, s2c, 2, "POST#1", "id: 1-0\nretry: 500\ndata: \n\n"),
		msg(3, s2c, 3, "POST#1", ": keep-alive\n\n"),
		msg(4, s2c, 4, "POST#1", "id: 1-1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t-1\",\"progress\":1}}\n\n"),
		msg(5, s2c, 5, "POST#1", "id: 1-2\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n"),
		{Kind: faultproxy.EntryFault, Dir: s2c, Seq: 5, Fault: "drop", Text: "message swallowed"},
		msg(6, s2c, 6, "", `{"jsonrpc":"2.0","id":3,"result":{}}`),
		{Kind: faultproxy.EntryFault, Dir: s2c, Seq: 6, Fault: "delay", Text: "held for 2s"},
		{Kind: faultproxy.EntryNote, Stream: "POST#1", Text: "client closed the stream; upstream request cancelled"},
		{Kind: faultproxy.EntryFault, Dir: s2c, Seq: 6, Fault: "release", Text: "delay elapsed"},
	}
	v := newView(entries)
	reqs := v.ClientRequests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	call := reqs[0]
	if call.Header.Get("Mcp-Session-Id") != "s1" || call.HTTPMethod != http.MethodPost || toolName(call) != "slow" || arguments(call) != `{"a":2,"b":1}` {
		t.Errorf("call %+v (args %s)", call, arguments(call))
	}
	if call.Env.ProgressToken != jsonrpc.StringID("t-1") {
		t.Errorf("token %q", call.Env.ProgressToken)
	}
	prime, beat, prog, reply, late := v.Msgs[1], v.Msgs[2], v.Msgs[3], v.Msgs[4], v.Msgs[5]
	if !prime.HasEventID || prime.EventID != "1-0" || !prime.HasRetry || prime.Retry != 500 {
		t.Errorf("priming event %+v", prime)
	}
	if !beat.Comment || prog.Env.Method != "notifications/progress" || prog.EventID != "1-1" {
		t.Errorf("comment %+v, progress %+v", beat, prog)
	}
	if _, ok := reply.Delivered(); ok || !reply.Stopped {
		t.Errorf("the dropped reply counts as delivered")
	}
	if _, ok := v.Reply(call.Env.ID, call.Index); ok {
		t.Error("Reply found the dropped reply")
	}
	if i, ok := late.Delivered(); !ok || i != len(entries)-1 {
		t.Errorf("the delayed reply: delivered %v at %d, want at its release %d", ok, i, len(entries)-1)
	}
	if n, ok := v.ClientClosed("POST#1"); !ok || n.Index != 10 {
		t.Errorf("client close %+v %v", n, ok)
	}
}

// TestJudgesOnTranscripts: a few judges on hand-made runs, held and
// broken, so that a judge's reading is pinned apart from the clients.
func TestJudgesOnTranscripts(t *testing.T) {
	c2s, s2c := faultproxy.ClientToServer, faultproxy.ServerToClient
	tools := `{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"slow","arguments":{}}}`
	call := func(id string) string { return strings.Replace(tools, "%s", id, 1) }
	initReq := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`
	initRes := `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`
	base := []faultproxy.Entry{msg(0, c2s, 1, "", initReq), msg(1, s2c, 2, "", initRes)}
	run := func(sc *Scenario, extra ...faultproxy.Entry) *Run {
		return &Run{Scenario: sc, Transport: Stdio, Version: V20251125, Scale: 1, Params: sc.Params(V20251125, Stdio, 1, 0),
			Entries: append(append([]faultproxy.Entry(nil), base...), extra...), Clients: []Process{{ID: "client-1"}}}
	}
	cancel := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`
	for _, tc := range []struct {
		name  string
		check *Check
		run   *Run
		want  Finding
		says  string
	}{
		{"cancel-on-time", checkTimeoutCancel, run(scTimeoutCancel, msg(10, c2s, 3, "", call("2")), msg(320, c2s, 4, "", cancel)), Held, "cancelled by notifications/cancelled 310 ms"},
		{"cancel-late", checkTimeoutCancel, run(scTimeoutCancel, msg(10, c2s, 3, "", call("2")), msg(2500, c2s, 4, "", cancel)), Broken, "after its timeout"},
		{"no-cancel", checkTimeoutCancel, run(scTimeoutCancel, msg(10, c2s, 3, "", call("2"))), Broken, "never cancelled"},
		{"no-call", checkTimeoutCancel, run(scTimeoutCancel), Unjudgeable, "never called slow"},
		{"id-reused", checkIDUnique, run(scToolsCall, msg(10, c2s, 3, "", call("2")), msg(11, c2s, 4, "", call("2"))), Broken, "reuses the id 2"},
		{"id-null", checkIDUnique, run(scToolsCall, msg(10, c2s, 3, "", call("null"))), Broken, "the id null"},
		{"cancel-unknown", checkCancelValid, run(scTimeoutCancel, msg(10, c2s, 3, "", call("7")), msg(320, c2s, 4, "", cancel)), Broken, "never sent"},
		{"cancel-init", checkNoCancelInit, run(scInitTimeout, msg(300, c2s, 3, "", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)), Broken, "cancelled initialize"},
		{"early-request", checkNoRequestBeforeInit, &Run{Scenario: scToolsCall, Transport: Stdio, Version: V20251125, Scale: 1,
			Entries: []faultproxy.Entry{msg(0, c2s, 1, "", initReq), msg(1, c2s, 2, "", call("2")), msg(2, s2c, 3, "", initRes)}}, Broken, "before the initialize result"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, why := tc.check.Judge(tc.run)
			if f != tc.want || !strings.Contains(why, tc.says) {
				t.Errorf("%s: %v %q, want %v with %q", tc.check.ID, f, why, tc.want, tc.says)
			}
		})
	}
}

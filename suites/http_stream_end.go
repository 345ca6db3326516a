package suites

import (
	"fmt"
	"time"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/reports"
)

// streamEndGrace is how long after a POST stream's response the server
// has to end the stream: far more than a flush and a close take.
const streamEndGrace = 2 * time.Second

var checkStreamEnds = register(&Check{
	ID:    "HTTP-STREAM-ENDS",
	Title: "a request's SSE stream ends once its JSON-RPC response has been sent",
	How: "Over Streamable HTTP, in every version. Calls the slow role with a progress token; when the server answers " +
		"the POST with an SSE stream, reads it to the response and then waits up to 2s for the stream to end. A stream " +
		"still open then WARNs (a SHOULD); an application/json answer has no stream to end (SKIP).",
	Rules: merge(
		sameRule(Rule{Level: reports.Should, Spec: httpLegacy,
			Clause: "After the JSON-RPC response has been sent, the server SHOULD close the SSE stream."}, v20250618),
		sameRule(Rule{Level: reports.Should, Spec: httpLegacy,
			Clause: "After the JSON-RPC response has been sent, the server SHOULD terminate the SSE stream."}, v20251125),
		map[string]Rule{v20260728: {Level: reports.Should, Spec: httpModern,
			Clause: "The final JSON-RPC response SHOULD terminate the stream."}},
	),
	Transports: []string{viaHTTP},
	Roles:      []string{"slow"},
	Clauses:    []string{"tr#16", "h#10"},
	Limits:     map[string]string{"tr#16": "a POST stream of the slow role"},
})

func registerHTTPStreamEnd() {
	ginkgo.Describe("HTTP stream end", ginkgo.Label("area:http"), func() {
		define(checkStreamEnds, streamEnds)
	})
}

func streamEnds(h *H) {
	c := h.ConnectHTTP()
	id := jsonrpc.StringID("mcp-conform-stream-end")
	call := c.StartRole("slow", id, jsonrpc.StringID("mcp-conform-stream-end-token"), nil)
	resp := c.Await(call, "tools/call of the slow role")
	if !call.IsSSE() {
		h.Skip(fmt.Sprintf("the server answered the POST with %q, not an SSE stream: no stream to end", call.Header().Get("Content-Type")))
	}
	at := time.Now()
	select {
	case <-call.Ended():
		h.Notef("the stream ended %v after the response %s", time.Since(at).Round(time.Millisecond), clip(resp.Raw))
	case <-time.After(streamEndGrace):
		h.Failf("the SSE stream of tools/call %s was still open %v after its response %s", id, streamEndGrace, clip(resp.Raw))
	case <-h.Ctx().Done():
		h.Errorf("the check ended while waiting for the stream's end")
	}
}

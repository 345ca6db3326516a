package suites

// HTTP-STREAM-RELATED: 2026-07-28 streamable-http.mdx, "Sending Messages to
// the Server": on a request's SSE stream "The server MAY send JSON-RPC
// notifications [...] before the final response. These notifications MUST
// relate to the originating client request." The 2025 transports.mdx says
// the same of the messages on a request's stream with a SHOULD (tr#12):
// "These messages SHOULD relate to the originating client request."
//
//	harness ──POST A tools/call (token A)──▶ server ══ SSE A: progress A ...
//	        (A's first progress seen)
//	        ──POST B tools/call (token B)──▶ server ══ SSE B: progress B ...
//	each stream's progress must carry its own request's token, and its
//	response answer its own request's id

import (
	"context"
	"fmt"
	"strings"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/reports"
)

var checkStreamRelated = register(&Check{
	ID:    "HTTP-STREAM-RELATED",
	Title: "the notifications on a request's SSE stream relate to that request",
	How: "Over Streamable HTTP, every version (2025: a SHOULD, WARN; 2026-07-28: a MUST, FAIL), slow role. Starts a call of the slow role (progress token A, its own POST); once " +
		"its first progress notification came (or its response), starts a second call (token B) on another POST, so the two " +
		"run at once; reads both streams to their ends. A notification on one call's stream that names the other call — a " +
		"progress notification with the other's progressToken — FAILs, and so does the other call's response there (a token " +
		"or id of neither call is PROGRESS-TOKEN-ECHO's and ROBUST-ID-ECHO's to judge). A notification that names no request (a log message) " +
		"carries nothing on the wire to relate it by and is not judged, nor is a 2025 server request on the stream (no request of " +
		"the server names the client's). A call answered with application/json has no stream to carry another's progress. " +
		"No progress at all: SKIP (progress is optional).",
	Rules: merge(
		sameRule(Rule{Level: reports.Should, Spec: httpLegacy,
			Clause: "The server MAY send JSON-RPC requests and notifications before sending the JSON-RPC response. These messages SHOULD relate to the originating client request."},
			legacyVersions...),
		map[string]Rule{v20260728: {Level: reports.Must, Spec: httpModern,
			Clause: "The server MAY send JSON-RPC notifications — for example, notifications/progress or notifications/message — before the final response. These notifications MUST relate to the originating client request."}},
	),
	Transports: []string{viaHTTP},
	Roles:      []string{"slow"},
	Clauses:    []string{"h#8", "tr#12"},
})

func registerStreamRelated() {
	ginkgo.Describe("HTTP request streams", ginkgo.Label("area:http"), func() {
		define(checkStreamRelated, streamRelated)
	})
}

func streamRelated(h *H) {
	c := h.ConnectHTTP()
	ids := []jsonrpc.ID{jsonrpc.StringID(unique("related-a")), jsonrpc.StringID(unique("related-b"))}
	tokens := []jsonrpc.ID{jsonrpc.StringID(unique("related-token-a")), jsonrpc.StringID(unique("related-token-b"))}
	a := c.StartRole("slow", ids[0], tokens[0], nil)
	// B starts once A is under way: its first progress (or its end).
	ctx, cancel := context.WithTimeout(h.Ctx(), h.Cfg().CallTimeout)
	_, _ = a.WaitEvent(ctx, 0, func(e clients.StreamEvent) bool { return e.Seq >= 0 })
	cancel()
	b := c.StartRole("slow", ids[1], tokens[1], nil)
	calls := []*clients.HTTPCall{a, b}
	for i, call := range calls {
		c.Await(call, fmt.Sprintf("call %s of the slow role", ids[i]))
	}
	var bad []string
	progress := 0
	for i, call := range calls {
		for _, m := range call.Messages() {
			switch {
			case m.Env.Kind.IsReply():
				if m.Env.ID == ids[1-i] {
					bad = append(bad, fmt.Sprintf("the stream of request %s carried the response to %s: %s", ids[i], m.Env.ID, clip(m.Raw)))
				}
			case m.Env.Method == "notifications/progress":
				progress++
				// A token of neither call is PROGRESS-TOKEN's to judge.
				if m.Env.ProgressToken == tokens[1-i] {
					bad = append(bad, fmt.Sprintf("the stream of request %s (token %s) carried progress for token %s: %s", ids[i], tokens[i], m.Env.ProgressToken, clip(m.Raw)))
				}
			}
		}
	}
	if len(bad) > 0 {
		h.Failf("%s", strings.Join(bad, "; "))
	}
	if progress == 0 {
		h.Skip("the target sent no progress notifications on either stream (progress is optional): no notification names a request")
	}
	h.Notef("%d progress notifications on the two streams, each with its own request's token; each response on its own stream", progress)
}

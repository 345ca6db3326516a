package suites

// Where a 2025 server sends what (transports.mdx, "Listening for Messages
// from the Server" and "Multiple Connections"): each message on one
// stream only, and no JSON-RPC response on the standalone GET stream
// unless it resumes a request's stream.
//
//	harness ──GET (no Last-Event-ID), held open──▶ proxy ──▶ server
//	harness ──POST tools/call A (token a) ─┐
//	harness ──POST tools/call B (token b) ─┴─▶ proxy ──▶ server
//	        ◀── progress + responses, on whichever streams ──┘
//
// Only the messages of the check's own two calls are judged (their
// progress tokens, their ids): they belong to one request each, so the
// same one on two streams is a broadcast, and a response among them on the
// GET stream is one the sentence forbids (the GET carried no Last-Event-ID:
// it resumes nothing).
//
// And, in 2026-07-28, that the server sends no request at all: on stdio, or
// on a request's response stream (LIFECYCLE-NO-SERVER-REQUESTS).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/protocol"
	"github.com/mcp-conform/mcp-conform/reports"
)

var checkStreamRouting = register(&Check{
	ID:    "HTTP-STREAM-ROUTING",
	Title: "each message goes on one stream only, and no response comes on the GET stream",
	How: "2025 versions over Streamable HTTP. In one session, holds the standalone GET stream open (no Last-Event-ID; " +
		"when the server offers one) and runs two calls of the slow role at once, each with its own progress token, to " +
		"their responses, then pings twice. Of the messages of those two calls (their progress, their responses): one " +
		"that arrives on two streams was broadcast, and a response on the GET stream is one it must not carry; either " +
		"FAILs. Other messages (logs, list changes) are not judged.",
	Rules: sameRule(Rule{Level: reports.Must, Spec: httpLegacy,
		Clause: "The server MUST NOT send a JSON-RPC response on the stream unless resuming a stream associated with a previous client request. [...] " + streamBroadcastClause},
		legacyVersions...),
	Transports: []string{viaHTTP},
	Roles:      []string{"slow"},
	Clauses:    []string{"tr#20", "tr#22"},
	Limits:     map[string]string{"tr#22": "the progress and responses of two concurrent calls"},
})

func registerHTTPStreams() {
	ginkgo.Describe("HTTP streams (2025)", ginkgo.Label("area:http"), func() {
		define(checkStreamRouting, streamRouting)
		define(checkSSEPriming, ssePriming)
	})
	ginkgo.Describe("LIFECYCLE no server requests (2026-07-28)", ginkgo.Label("area:lifecycle"), func() {
		define(checkNoServerRequests, noServerRequests)
	})
}

func streamRouting(h *H) {
	m := connectMsg(h).(*httpMsg)
	ids := []jsonrpc.ID{jsonrpc.StringID(unique("route-a")), jsonrpc.StringID(unique("route-b"))}
	tokens := []string{unique("route-tok-a"), unique("route-tok-b")}
	start := m.length()
	a := m.StartRole("slow", ids[0], tokens[0], nil)
	b := m.StartRole("slow", ids[1], tokens[1], nil)
	m.Await(a, "the first slow call")
	m.Await(b, "the second slow call")
	// Two more round trips: what the server wrote on another stream
	// before the last response has had them to arrive.
	m.ping("after the calls")
	m.ping("after the calls (second)")
	mine := func(msg clients.Message) bool {
		if msg.Env.Kind.IsReply() {
			return slices.Contains(ids, msg.Env.ID)
		}
		return msg.Env.Method == "notifications/progress" &&
			(msg.Env.ProgressToken == jsonrpc.StringID(tokens[0]) || msg.Env.ProgressToken == jsonrpc.StringID(tokens[1]))
	}
	where := map[string][]string{} // the message's compact JSON -> the streams it came on
	var order []string
	var onGET []string
	for _, msg := range m.since(start) {
		if !mine(msg) {
			continue
		}
		if msg.Env.Kind.IsReply() && strings.HasPrefix(msg.Stream, "GET#") {
			onGET = append(onGET, fmt.Sprintf("the response to %s on %s", msg.Env.ID, msg.Stream))
		}
		var buf bytes.Buffer
		key := string(msg.Raw)
		if json.Compact(&buf, msg.Raw) == nil {
			key = buf.String()
		}
		if _, ok := where[key]; !ok {
			order = append(order, key)
		}
		if !slices.Contains(where[key], msg.Stream) {
			where[key] = append(where[key], msg.Stream)
		}
	}
	var bad []string
	bad = append(bad, onGET...)
	n := 0
	for _, key := range order {
		if streams := where[key]; len(streams) > 1 {
			n++
			if n <= 5 {
				bad = append(bad, fmt.Sprintf("%s on %s", clip([]byte(key)), strings.Join(streams, " and ")))
			}
		}
	}
	if n > 5 {
		bad = append(bad, fmt.Sprintf("and %d more on several streams", n-5))
	}
	get := "no standalone GET stream (the server offers none)"
	if m.get != nil {
		get = "the standalone GET stream " + m.get.Stream() + " open"
	}
	if len(bad) > 0 {
		h.Failf("%s: %s", get, strings.Join(bad, "; "))
	}
	h.Notef("%d messages of the two calls, each on one stream, none a response on the GET stream (%s)", len(order), get)
}

var checkNoServerRequests = register(&Check{
	ID:    "LIFECYCLE-NO-SERVER-REQUESTS",
	Title: "a 2026-07-28 server sends the client no JSON-RPC request, on stdio or on a response stream",
	How: "2026-07-28, stdio and Streamable HTTP. Calls the slow role with a progress token to its response (over HTTP " +
		"an event stream, the one a request could come on), then sends the era's barrier request. Every message the server sent meanwhile must be a notification or a response: " +
		"a request (a method and an id) FAILs, whatever its method (input the server needs is asked inside an " +
		"InputRequiredResult, not by a request).",
	Rules: map[string]Rule{v20260728: {Level: reports.Must, Spec: patternsModern, Also: []string{stdioModern, httpModern},
		Clause: "Servers MUST NOT initiate JSON-RPC requests [...] (stdio: The server MUST NOT write JSON-RPC requests to stdout; Streamable HTTP: The server MUST NOT send independent JSON-RPC requests on this stream.)"}},
	Transports: []string{viaStdio, viaHTTP},
	Roles:      []string{"slow"},
	Clauses:    []string{"st#3", "h#9"},
})

func noServerRequests(h *H) {
	c := connectMsg(h)
	start := c.length()
	p := c.startRole("slow", jsonrpc.StringID(unique("no-srv-req-call")), unique("no-srv-req-tok"))
	c.await(p, "the slow call")
	did := "a slow call"
	c.ping("after the calls")
	var reqs []string
	for _, m := range c.since(start) {
		if m.Env.Kind == jsonrpc.Request {
			reqs = append(reqs, fmt.Sprintf("%s (id %s%s)", m.Env.Method, m.Env.ID, onStream(m)))
		}
	}
	if len(reqs) > 0 {
		if len(reqs) > 5 {
			reqs = append(reqs[:5], fmt.Sprintf("and %d more", len(reqs)-5))
		}
		h.Failf("the server sent %d request(s) during %s: %s", len(reqs), did, strings.Join(reqs, "; "))
	}
	h.Notef("no request from the server during %s", did)
}

// onStream names the HTTP stream a message came on (nothing on stdio).
func onStream(m clients.Message) string {
	if m.Stream == "" {
		return ""
	}
	return ", on stream " + m.Stream
}

var checkSSEPriming = register(&Check{
	ID:    "HTTP-SSE-PRIMING",
	Title: "a 2025-11-25 SSE response stream starts with a priming event (an event id and empty data)",
	How: "2025-11-25 over Streamable HTTP. Calls the slow role with a progress token to its response. When the server " +
		"answers the POST with an SSE stream, the stream's first event must carry an event id and an empty data field; " +
		"a first event without an id, or one carrying a message, WARNs. An application/json answer opens no stream: " +
		"the sentence does not apply (SKIP).",
	Rules: sameRule(Rule{Level: reports.Should, Spec: httpLegacy,
		Clause: "If the server initiates an SSE stream: The server SHOULD immediately send an SSE event consisting of an event ID and an empty data field in order to prime the client to reconnect."}, v20251125),
	Transports: []string{viaHTTP},
	Roles:      []string{"slow"},
	Clauses:    []string{"tr#14"},
})

func ssePriming(h *H) {
	c := h.ConnectHTTP()
	if v := c.W.Session().Version; v != string(protocol.V20251125) {
		h.Skip("the session negotiated " + v + ": the priming event is a 2025-11-25 rule")
	}
	call := c.StartRole("slow", jsonrpc.StringID(unique("prime-call")), jsonrpc.StringID(unique("prime-tok")), nil)
	c.Await(call, "the slow call")
	if !call.IsSSE() {
		h.Skip("the server answered the POST with " + call.Header().Get("Content-Type") + ", not an SSE stream: no stream to prime")
	}
	evs := call.StreamEvents()
	if len(evs) == 0 {
		h.Warnf("the SSE stream %s carried no event at all", call.Stream())
		return
	}
	// A block of comment lines only (a heartbeat) is not an event: the
	// priming event is the first real one.
	first := evs[0].Event
	for _, e := range evs {
		if !e.IsComment {
			first = e.Event
			break
		}
	}
	if !first.HasID || first.ID == "" {
		h.Warnf("the first event of SSE stream %s has no event id (data %q): the stream is not primed for a reconnection", call.Stream(), clip([]byte(first.Data)))
		return
	}
	if first.Data != "" {
		h.Warnf("the first event of SSE stream %s (id %q) carries data %s, not the empty data of a priming event", call.Stream(), first.ID, clip([]byte(first.Data)))
		return
	}
	h.Notef("SSE stream %s starts with the priming event id %q, empty data (%d events in all)", call.Stream(), first.ID, len(evs))
}

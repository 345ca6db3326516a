package suites

import (
	"strings"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/reports"
)

var checkSSEHeaders = register(&Check{
	ID:    "SSE-HEADERS",
	Title: "event streams carry X-Accel-Buffering: no (and Content-Type text/event-stream)",
	How: "Calls the slow role and reads the response head of its event stream. A buffering reverse proxy holds a " +
		"stream without X-Accel-Buffering: no, and the client sees nothing until the end. Cache-Control: no-cache is " +
		"reported when missing, never graded: no version asks for it. 2026-07-28 asks for X-Accel-Buffering (SHOULD); the " +
		"2025 versions name no header, so there the same header is mcp-conform's reading of good practice (SHOULD at most).",
	Rules: merge(
		sameRule(Rule{Level: reports.Should, Spec: httpLegacy, Source: reports.SourceReading, Also: []string{httpModern},
			Clause: "mcp-conform's reading for the 2025 versions, which name no header: a server that initiates an SSE stream sends X-Accel-Buffering: no so that intermediaries do not buffer it, as 2026-07-28 asks (\"When initiating an SSE stream, servers SHOULD include the X-Accel-Buffering: no header in the HTTP response.\")."},
			legacyVersions...),
		map[string]Rule{"2026-07-28": {Level: reports.Should, Spec: httpModern,
			Clause: "When initiating an SSE stream, servers SHOULD include the X-Accel-Buffering: no header in the HTTP response."}},
	),
	Transports: []string{"http"},
	Roles:      []string{"slow"},
})

var checkSSEHeartbeat = register(&Check{
	ID:    "SSE-HEARTBEAT",
	Title: "a silent event stream carries comment keep-alives",
	How: "Calls the silent role (a call that sends nothing for longer than the server's keep-alive interval) and " +
		"counts SSE comment blocks on its stream before the response. No version has a SHOULD for it: 2026-07-28 says servers " +
		"\"are encouraged\" to send keep-alives on long-lived streams, so the check is mcp-conform's reading of good practice and WARNs at most.",
	Rules: merge(
		sameRule(Rule{Level: reports.Should, Spec: httpLegacy, Source: reports.SourceReading,
			Clause: "mcp-conform's reading (2025, which says nothing of keep-alives): long silent streams carry SSE comments so intermediaries and idle timeouts do not close them."},
			legacyVersions...),
		map[string]Rule{"2026-07-28": {Level: reports.Should, Spec: httpModern, Source: reports.SourceReading,
			Clause: "For long-lived streams [...] servers are encouraged to periodically emit an SSE comment line (a line beginning with a colon, e.g. :\\r\\n) as a keep-alive. (\"Encouraged\" is no RFC 2119 keyword: mcp-conform's reading grades it as a SHOULD at most.)"}},
	),
	Transports: []string{"http"},
	Roles:      []string{"silent"},
})

func registerSSE() {
	ginkgo.Describe("SSE", ginkgo.Label("area:sse"), func() {
		define(checkSSEHeaders, sseHeaders)
		define(checkSSEHeartbeat, sseHeartbeat)
	})
}

func sseHeaders(h *H) {
	c := h.ConnectHTTP()
	call := c.StartRole("slow", jsonrpc.StringID("sse-headers-1"), jsonrpc.StringID("sse-headers-token"), nil)
	c.Await(call, "the slow call")
	if !call.IsSSE() {
		h.Skip("the server answered tools/call with " + call.Header().Get("Content-Type") + ", not an event stream")
	}
	hd := call.Header()
	if !strings.Contains(strings.ToLower(strings.Join(hd.Values("Cache-Control"), ",")), "no-cache") {
		// No version asks for it: reported, not graded.
		h.Notef("no Cache-Control: no-cache on the event stream (got %s; no version of the specification asks for it)", q(hd.Values("Cache-Control")))
	}
	if !strings.EqualFold(strings.TrimSpace(hd.Get("X-Accel-Buffering")), "no") {
		h.Failf("the event stream lacks X-Accel-Buffering: no (got %s)", q(hd.Values("X-Accel-Buffering")))
	}
}

func q(v []string) string {
	if len(v) == 0 {
		return "none"
	}
	return "\"" + strings.Join(v, ", ") + "\""
}

func sseHeartbeat(h *H) {
	c := h.ConnectHTTP()
	call := c.StartRole("silent", jsonrpc.StringID("sse-heartbeat-1"), nil, nil)
	c.Await(call, "the silent call")
	if !call.IsSSE() {
		h.Skip("the server answered the silent call with " + call.Header().Get("Content-Type") + ", not an event stream")
	}
	comments := 0
	var first, last clients.StreamEvent
	for i, e := range call.StreamEvents() {
		if i == 0 {
			first = e
		}
		last = e
		if e.IsComment {
			comments++
		}
	}
	silent := last.At.Sub(call.HeaderAt())
	if comments == 0 {
		h.Failf("no SSE comment keep-alive during the %s the stream stayed silent (%d events, first %q)", silent.Round(1e6), len(call.StreamEvents()), strings.TrimSpace(string(first.Raw)))
	}
	h.Notef("%d keep-alive comment(s) in %s", comments, silent.Round(1e6))
}

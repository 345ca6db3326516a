package suites

// Where a 2025 server sends the log messages of a call (transports.mdx,
// "Multiple Connections": each message on one stream only; and the text
// proposed for 2025-11-25 logging.mdx by pull request #2684, unmerged at
// the pinned commit: a request's log messages SHOULD go on its
// POST-initiated SSE stream, and the same log notification MUST NOT be
// broadcast across several streams).
//
//	harness ──GET (no Last-Event-ID), held open──▶ server
//	harness ──logging/setLevel debug──▶ server
//	harness ──POST tools/call (the log role)──▶ server
//	        ◀── notifications/message, on whichever streams ──┘
//
// The only request in flight while the log messages come is the log role's
// call (the pings after it are answered at once), so they are its own.

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

// logRoutingProposed is the text of pull request #2684 (commit aacc874c)
// for 2025-11-25 logging.mdx, unmerged at the pinned commit (log#5, log#6).
// It is bracketed: context, not a quote of a pinned page.
const logRoutingProposed = "[proposed for 2025-11-25 logging.mdx by pull request #2684, unmerged at the pinned commit, so on no cited page: Log messages produced while handling a specific client JSON-RPC request SHOULD be sent on that request's POST-initiated SSE stream. The server MUST NOT broadcast the same log notification across multiple connected streams.]"

const streamBroadcastClause = "The server MUST send each of its JSON-RPC messages on only one of the connected streams; that is, it MUST NOT broadcast the same message across multiple streams."

var checkLogRouting = register(&Check{
	ID:    "HTTP-LOG-ROUTING",
	Title: "a call's log messages go on one stream only (and, in 2025-11-25, on the call's own SSE stream)",
	How: "2025 versions over Streamable HTTP. In one session, holds the standalone GET stream open (no Last-Event-ID; a " +
		"server that offers none: SKIP), asks for log messages at debug (logging/setLevel), calls the log role to its " +
		"response, then pings twice. The same notifications/message on two streams was broadcast: FAIL (the level is " +
		"the transport page's MUST NOT, which binds every message). In 2025-11-25, when the call was answered with an " +
		"SSE stream, a log message that came on the GET stream and not on the call's stream WARNs: that SHOULD, and " +
		"the log-specific MUST NOT, are the text proposed by pull request #2684, unmerged at the pinned commit. No log " +
		"message at all: SKIP.",
	Rules: merge(
		sameRule(Rule{Level: reports.Must, Spec: httpLegacy, Clause: streamBroadcastClause}, v20250618),
		sameRule(Rule{Level: reports.Must, Spec: httpLegacy, Clause: streamBroadcastClause + " " + logRoutingProposed}, v20251125),
	),
	Transports: []string{viaHTTP},
	Roles:      []string{"log"},
	Clauses:    []string{"tr#22", "log#5", "log#6"},
	Limits:     map[string]string{"tr#22": "the log messages of one call of the log role"},
})

func registerHTTPLogRouting() {
	ginkgo.Describe("HTTP log routing (2025)", ginkgo.Label("area:http"), func() {
		define(checkLogRouting, logRouting)
	})
}

func logRouting(h *H) {
	m := connectMsg(h).(*httpMsg)
	if m.session().Era == clients.EraModern {
		h.Skip("the session negotiated " + m.session().Version + ": a 2025 rule")
	}
	if m.get == nil {
		h.Skip("the server offers no standalone GET stream: a call's log messages have only its own stream to go on")
	}
	requireLogging(h, m)
	if why := askLogging(h, m, "debug"); why != "" {
		h.Skip(why + ": no log messages asked for")
	}
	start := m.length()
	id := jsonrpc.StringID(unique("log-route-call"))
	call := startRequest(h, m, id, "tools/call", roleParams(h.Role("log"), nil))
	m.await(call, "the log role's call")
	m.ping("after the log role's call")
	m.ping("after the log role's call (second)")
	own := m.streamOf(call)
	logs := logMessagesSince(m, start)
	if len(logs) == 0 {
		h.Skip("the server sent no notifications/message (logging asked for at debug, the log role called): nothing to judge")
	}
	where := map[string][]string{} // the message's compact JSON -> the streams it came on
	var order []string
	for _, l := range logs {
		key := string(l.m.Raw)
		var buf bytes.Buffer
		if json.Compact(&buf, l.m.Raw) == nil {
			key = buf.String()
		}
		if _, ok := where[key]; !ok {
			order = append(order, key)
		}
		if !slices.Contains(where[key], l.m.Stream) {
			where[key] = append(where[key], l.m.Stream)
		}
	}
	var broadcast, elsewhere []string
	for _, key := range order {
		streams := where[key]
		if len(streams) > 1 {
			broadcast = append(broadcast, fmt.Sprintf("%s on %s", clip([]byte(key)), strings.Join(streams, " and ")))
		} else if own != "" && streams[0] != own {
			elsewhere = append(elsewhere, fmt.Sprintf("%s on %s", clip([]byte(key)), streams[0]))
		}
	}
	get := "the standalone GET stream " + m.get.Stream() + " open"
	if len(broadcast) > 0 {
		h.Failf("%s, %d of the call's %d log messages came on several streams (broadcast): %s", get, len(broadcast), len(order), firstFew(broadcast))
	}
	hc, sse := call.(*clients.HTTPCall)
	sse = sse && hc.IsSSE()
	if len(elsewhere) > 0 && sse && m.session().Version == string(protocol.V20251125) {
		h.Warnf("%s, %d of the call's %d log messages came not on its own SSE stream %s (proposed 2025-11-25 text, pull request #2684, unmerged): %s",
			get, len(elsewhere), len(order), own, firstFew(elsewhere))
	}
	h.Notef("%d log messages of the call, each on one stream (%d on the call's stream %s, %d elsewhere; the call answered with an SSE stream: %t; %s)",
		len(order), len(order)-len(elsewhere), own, len(elsewhere), sse, get)
}

// firstFew joins at most five items, counting the rest.
func firstFew(items []string) string {
	if len(items) > 5 {
		return strings.Join(items[:5], "; ") + fmt.Sprintf("; and %d more", len(items)-5)
	}
	return strings.Join(items, "; ")
}

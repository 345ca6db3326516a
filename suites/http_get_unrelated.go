package suites

// HTTP-GET-STREAM-UNRELATED: what the server sends on the standalone GET
// stream of a 2025 session is unrelated to any request the client has
// running (2025 transports.mdx, "Listening for Messages from the Server"):
// a running call's progress belongs on that call's own POST stream.

import (
	"fmt"
	"strings"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/reports"
)

var checkGETUnrelated = register(&Check{
	ID:    "HTTP-GET-STREAM-UNRELATED",
	Title: "no message about a running request comes on the standalone GET stream (2025)",
	How: "2025 versions over Streamable HTTP. In one session, holds the standalone GET stream open (when the server " +
		"offers one) and calls the slow role with a progress token, reading the call's POST stream to its response. A " +
		"progress notification carrying that call's token that arrives on the GET stream before the call's response " +
		"(while the call is running and its own stream is open) WARNs. A server that offers no GET stream sends nothing " +
		"there (PASS, noted).",
	Rules: sameRule(Rule{Level: reports.Should, Spec: httpLegacy,
		Clause: "These messages SHOULD be unrelated to any concurrently-running JSON-RPC request from the client."},
		legacyVersions...),
	Transports: []string{viaHTTP},
	Roles:      []string{"slow"},
	Clauses:    []string{"tr#19"},
})

func registerHTTPGETUnrelated() {
	ginkgo.Describe("HTTP GET stream unrelated (2025)", ginkgo.Label("area:http"), func() {
		define(checkGETUnrelated, getUnrelated)
	})
}

func getUnrelated(h *H) {
	m := connectMsg(h).(*httpMsg)
	if m.get == nil {
		h.Notef("no standalone GET stream (the server offers none): nothing can come there")
		return
	}
	id := jsonrpc.StringID(unique("get-unrelated"))
	token := unique("get-unrelated-tok")
	start := m.length()
	call := m.StartRole("slow", id, token, nil)
	resp := m.Await(call, "the slow call")
	var bad []string
	n := 0
	for _, msg := range m.since(start) {
		if msg.Seq >= resp.Seq {
			break
		}
		if !strings.HasPrefix(msg.Stream, "GET#") {
			continue
		}
		n++
		if msg.Env.Method == "notifications/progress" && msg.Env.ProgressToken == jsonrpc.StringID(token) {
			bad = append(bad, clip(msg.Raw))
		}
	}
	if len(bad) > 0 {
		if len(bad) > 3 {
			bad = append(bad[:3], fmt.Sprintf("and %d more", len(bad)-3))
		}
		h.Failf("the progress of tools/call %s, running with its POST stream open, came on the standalone GET stream %s: %s",
			id, m.get.Stream(), strings.Join(bad, "; "))
	}
	h.Notef("%d messages on the standalone GET stream %s while the call ran, none its progress", n, m.get.Stream())
}

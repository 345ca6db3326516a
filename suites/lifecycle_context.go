package suites

// LIFECYCLE-NO-PRIOR-CONTEXT: 2026-07-28 basic/index.mdx: "Servers MUST NOT
// rely on prior requests over the same connection to establish context."
//
//	harness ──starts the stdio server──▶ (nothing sent yet)
//	        ──tools/list, full _meta (first line)──▶ server ──▶ a result

import (
	"encoding/json"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/reports"
)

var checkNoPriorContext = register(&Check{
	ID:    "LIFECYCLE-NO-PRIOR-CONTEXT",
	Title: "2026-07-28: a request is served without any prior request on its connection (no server/discover first)",
	How: "2026-07-28 on stdio. Starts a fresh server process and sends, as its very first line, a tools/list whose _meta " +
		"carries everything a 2026-07-28 request needs (protocolVersion, clientCapabilities, clientInfo) — no " +
		"server/discover, no other request before it. The answer must be a result: an error means the server wanted " +
		"context from an earlier request on the connection.",
	Rules: map[string]Rule{v20260728: {Level: reports.Must, Spec: basicModern,
		Clause: "Servers MUST NOT rely on prior requests over the same connection to establish context."}},
	Transports: []string{viaStdio},
	Clauses:    []string{"basic#17"},
	Limits:     map[string]string{"basic#17": "stdio (a fresh process); over Streamable HTTP the first request of a new TCP connection is not tried (the proxy's connections to the server are pooled)"},
})

func registerNoPriorContext() {
	ginkgo.Describe("LIFECYCLE no prior context (2026-07-28)", ginkgo.Label("area:lifecycle"), func() {
		define(checkNoPriorContext, noPriorContext)
	})
}

func noPriorContext(h *H) {
	v := h.Version()
	c := h.ConnectBare()
	meta := modernMeta(v)
	meta[clients.MetaClientInfo] = map[string]any{"name": "mcp-conform", "version": "1.0.0"}
	id := jsonrpc.StringID(unique("first"))
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id.Raw(), "method": "tools/list", "params": map[string]any{"_meta": meta}})
	from := c.W.Len()
	c.SendRaw(string(line))
	// The process was just started: its first answer gets the time a
	// server has to start.
	d := h.Cfg().StartTimeout
	m, ok := c.WaitFirst(from, d, func(m clients.Message) bool { return m.Env.Kind.IsReply() && m.Env.ID == id })
	if !ok {
		h.Failf("tools/list, the first line to a fresh server, was not answered %s", c.Silence(d))
	}
	a := parseAnswer(0, m.Raw)
	if a.result == nil {
		h.Failf("tools/list, the first line to a fresh server (full 2026-07-28 _meta, no server/discover before it), got %s: %s", a, clip(m.Raw))
	}
	h.Notef("the first request on a fresh connection was served: %s", clip(m.Raw))
}

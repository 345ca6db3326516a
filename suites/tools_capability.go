package suites

import (
	"encoding/json"
	"fmt"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/reports"
)

// TOOLS-CAPABILITY: a server that serves tools declares the tools
// capability (registered with the other TOOLS checks in tools_schema.go).
var checkToolsCapability = register(&Check{
	ID:    "TOOLS-CAPABILITY",
	Title: "a server that lists tools declares the tools capability",
	How: "Sends tools/list on a negotiated connection. A result that lists at least one tool shows the server supports " +
		"tools: the capabilities of its initialize result (2025) or server/discover result (2026-07-28) must then hold " +
		"tools. An error, or an empty list, from a server that declares no tools capability: SKIP (it does not support " +
		"tools).",
	Rules: merge(
		sameRule(Rule{Level: reports.Must, Spec: toolsLegacy,
			Clause: "Servers that support tools MUST declare the tools capability"}, v20251125, v20250618),
		map[string]Rule{v20260728: {Level: reports.Must, Spec: toolsModern,
			Clause: "Servers that support tools MUST declare the tools capability"}},
	),
	Transports: []string{viaStdio, viaHTTP},
	Clauses:    []string{"tl#1"},
})

func toolsCapability(h *H) {
	onEither(h, func(r rpc) {
		declared := declaresTools(r.sess.Capabilities)
		m := r.call("tools/list", nil, h.Cfg().OpTimeout)
		var res struct {
			Tools []json.RawMessage `json:"tools"`
		}
		listed := m.Env.Kind == jsonrpc.Response && json.Unmarshal(m.Env.Result, &res) == nil && len(res.Tools) > 0
		switch {
		case declared:
			h.Notef("the tools capability is declared")
		case listed:
			h.Failf("tools/list (id %s) listed %d tools, but the server's capabilities do not declare tools: %s",
				m.Env.ID, len(res.Tools), clip(r.sess.Capabilities))
		case m.Env.Kind == jsonrpc.Response:
			h.Skip("the server declares no tools capability and lists no tools: it does not support tools")
		default:
			h.Skip(fmt.Sprintf("the server declares no tools capability and answered tools/list with the error %s: it does not support tools", describeError(m.Env.Error)))
		}
	})
}

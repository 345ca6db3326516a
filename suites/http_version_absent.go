package suites

// HTTP-VERSION-HEADER-ABSENT: a 2025 server that receives a request without
// an MCP-Protocol-Version header serves it by the version it can identify
// otherwise (the session's) or as 2025-03-26: the missing header alone is
// no reason to refuse it (2025 transports.mdx, "Protocol Version Header").

import (
	"encoding/json"
	"net/http"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/reports"
)

var checkVersionHeaderAbsent = register(&Check{
	ID:    "HTTP-VERSION-HEADER-ABSENT",
	Title: "a request without an MCP-Protocol-Version header is served, not refused (2025)",
	How: "Streamable HTTP, 2025 versions. In an initialized session, POSTs ping with the session's Mcp-Session-Id but no " +
		"MCP-Protocol-Version header. The server has the version negotiated at initialization (or, without one, must assume " +
		"2025-03-26): either way the missing header is no ground to refuse the request. A 4xx or 5xx status, or a JSON-RPC " +
		"error in place of the ping's empty result, WARNs.",
	Rules: sameRule(Rule{Level: reports.Should, Spec: httpLegacy,
		Clause: "For backwards compatibility, if the server does not receive an MCP-Protocol-Version header, and has no other way to identify the version - for example, by relying on the protocol version negotiated during initialization - the server SHOULD assume protocol version 2025-03-26."},
		legacyVersions...),
	Transports: []string{viaHTTP},
	Clauses:    []string{"tr#30"},
})

func registerHTTPVersionAbsent() {
	ginkgo.Describe("HTTP version header absent", ginkgo.Label("area:http"), func() {
		define(checkVersionHeaderAbsent, versionHeaderAbsent)
	})
}

func versionHeaderAbsent(h *H) {
	c := h.ConnectHTTP()
	hd := http.Header{}
	if sid := c.W.SessionID(); sid != "" {
		hd["Mcp-Session-Id"] = []string{sid}
	}
	resp, body := rawPing(h, c, hd, nil)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		h.Failf("a ping in the session without an MCP-Protocol-Version header got HTTP %d (the server has the negotiated %s, or else must assume 2025-03-26): %s",
			resp.StatusCode, c.W.Session().Version, clip(body))
	}
	msg := firstJSON(resp, body)
	var m struct {
		Result *map[string]any `json:"result"`
		Error  any             `json:"error"`
	}
	if err := json.Unmarshal(msg, &m); err != nil || m.Result == nil {
		h.Failf("a ping in the session without an MCP-Protocol-Version header got HTTP %d but no result: %s", resp.StatusCode, clip(msg))
	}
	h.Notef("a ping without an MCP-Protocol-Version header was served (HTTP %d)", resp.StatusCode)
}

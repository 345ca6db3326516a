package suites

// HTTP-MODERN-ONLY-405: a server that supports 2026-07-28 only answers an
// older client's GET and DELETE with 405 (streamable-http.mdx §Backward
// Compatibility). Whether the server is modern-only is what it says on the
// wire: the supportedVersions of its server/discover.
//
//	harness ──server/discover (2026-07-28)──▶ server
//	        ◀── supportedVersions [2026-07-28] (only modern versions)
//	harness ──GET (2025-11-25 headers, a session id)──▶ server ◀── 405
//	harness ──DELETE (likewise)─────────────────────▶ server ◀── 405

import (
	"fmt"
	"net/http"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/reports"
)

var checkModernOnly405 = register(&Check{
	ID:    "HTTP-MODERN-ONLY-405",
	Title: "a server supporting only 2026-07-28 answers an older client's GET and DELETE with 405",
	How: "2026-07-28 over Streamable HTTP. Sends server/discover: a server whose supportedVersions lists any version " +
		"before 2026-07-28 (a dual-era server, which serves GET and DELETE per the legacy revision), or lists none, SKIPs. " +
		"Otherwise GETs the endpoint (Accept: text/event-stream) and then DELETEs it, each with the headers of an older " +
		"client (MCP-Protocol-Version: 2025-11-25 and an Mcp-Session-Id the server never minted): each must get 405 " +
		"Method Not Allowed; any other status WARNs.",
	Rules: map[string]Rule{v20260728: {Level: reports.Should, Spec: httpModern,
		Clause: "A server that supports only this revision and receives such traffic from an older client SHOULD respond as follows: HTTP GET or DELETE to the MCP endpoint: respond with 405 Method Not Allowed."}},
	Transports: []string{viaHTTP},
	Clauses:    []string{"h#25"},
})

func registerHTTPModernOnly() {
	ginkgo.Describe("HTTP modern-only server (2026-07-28)", ginkgo.Label("area:http"), func() {
		define(checkModernOnly405, modernOnly405)
	})
}

// modernOnlyServer sends server/discover and SKIPs unless its
// supportedVersions lists only versions from 2026-07-28 on; it returns
// that list.
func modernOnlyServer(h *H, hc func() *HConn) []string {
	listed, how := discoveredVersions(h, hc)
	h.Notef("server/discover: %s", how)
	if len(listed) == 0 {
		h.Skip("server/discover listed no versions (" + how + "): whether the server supports only 2026-07-28 is unknown")
	}
	for _, v := range listed {
		if v < v20260728 {
			h.Skip(fmt.Sprintf("the server supports %s (server/discover lists %v): the clause binds a server that supports only 2026-07-28", v, listed))
		}
	}
	return listed
}

func modernOnly405(h *H) {
	hc := lazyHTTP(h)
	modernOnlyServer(h, hc)
	legacy := http.Header{"Mcp-Protocol-Version": {"2025-11-25"}, "Mcp-Session-Id": {unique("legacy-session")}}
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		hd := legacy.Clone()
		if method == http.MethodGet {
			hd["Accept"] = []string{"text/event-stream"}
		}
		st := rawRequest(h, hc(), method, hd)
		h.Notef("%s with an older client's headers: HTTP %d", method, st)
		if st != http.StatusMethodNotAllowed {
			h.Failf("%s of the endpoint with an older client's headers (MCP-Protocol-Version 2025-11-25, an Mcp-Session-Id) got HTTP %d, want 405 Method Not Allowed from a server that supports only 2026-07-28", method, st)
		}
	}
}

package suites

// HTTP-MODERN-ONLY-SESSION-IGNORED and HTTP-MODERN-ONLY-LAST-EVENT-IGNORED:
// a server that supports 2026-07-28 only ignores an older client's
// Mcp-Session-Id (minting and echoing none) and Last-Event-ID headers
// (streamable-http.mdx §Backward Compatibility). Modern-only is what its
// server/discover says (modernOnlyServer).
//
//	harness ──server/discover (2026-07-28) + Mcp-Session-Id: X──▶ server
//	        ◀── the DiscoverResult, no Mcp-Session-Id header
//	harness ──server/discover (2026-07-28) + Last-Event-ID: 1──▶ server
//	        ◀── the DiscoverResult

import (
	"encoding/json"
	"net/http"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/reports"
)

var checkModernOnlySession = register(&Check{
	ID:    "HTTP-MODERN-ONLY-SESSION-IGNORED",
	Title: "a server supporting only 2026-07-28 ignores an Mcp-Session-Id header and mints or echoes none",
	How: "2026-07-28 over Streamable HTTP. Sends server/discover (a server listing a version before 2026-07-28, or " +
		"none, SKIPs). Then POSTs server/discover twice more (2026-07-28 headers and _meta): without an Mcp-Session-Id, " +
		"and with one the server never minted. Each must be answered with a result (an error or an HTTP error status: " +
		"the header was not ignored) and no Mcp-Session-Id response header (minted or echoed); otherwise WARN.",
	Rules: map[string]Rule{v20260728: {Level: reports.Should, Spec: httpModern,
		Clause: "A server that supports only this revision and receives such traffic from an older client SHOULD respond as follows: An Mcp-Session-Id header on a request: ignore it, and do not mint or echo session IDs."}},
	Transports: []string{viaHTTP},
	Clauses:    []string{"h#26"},
})

var checkModernOnlyLastEvent = register(&Check{
	ID:    "HTTP-MODERN-ONLY-LAST-EVENT-IGNORED",
	Title: "a server supporting only 2026-07-28 ignores a Last-Event-ID header",
	How: "2026-07-28 over Streamable HTTP. Sends server/discover (a server listing a version before 2026-07-28, or " +
		"none, SKIPs). Then POSTs server/discover (2026-07-28 headers and _meta) with Last-Event-ID: 1: it must be " +
		"answered with a result, as without the header; an error or an HTTP error status WARNs.",
	Rules: map[string]Rule{v20260728: {Level: reports.Should, Spec: httpModern,
		Clause: "A server that supports only this revision and receives such traffic from an older client SHOULD respond as follows: A Last-Event-ID header: ignore it; streams are not resumable."}},
	Transports: []string{viaHTTP},
	Clauses:    []string{"h#27"},
})

func registerModernOnlyHeaders() {
	ginkgo.Describe("HTTP modern-only server: legacy headers (2026-07-28)", ginkgo.Label("area:http"), func() {
		define(checkModernOnlySession, modernOnlySession)
		define(checkModernOnlyLastEvent, modernOnlyLastEvent)
	})
}

// discoverWith POSTs a 2026-07-28 server/discover with the extra headers
// and returns the response's Mcp-Session-Id (present or not), its status
// and the answer.
func discoverWith(h *H, c *HConn, extra http.Header) (sid string, hasSID bool, a rpcAnswer) {
	body, _ := json.Marshal(request(unique("discover"), "server/discover", map[string]any{"_meta": modernMeta(v20260728)}))
	hd := http.Header{"Mcp-Protocol-Version": {v20260728}, "Mcp-Method": {"server/discover"}}
	for k, v := range extra {
		hd[k] = v
	}
	resp, raw := rawBody(h, c, body, hd)
	vals, has := resp.Header[http.CanonicalHeaderKey("Mcp-Session-Id")]
	if has && len(vals) > 0 {
		sid = vals[0]
	}
	return sid, has, parseAnswer(resp.StatusCode, firstJSON(resp, raw))
}

func modernOnlySession(h *H) {
	hc := lazyHTTP(h)
	modernOnlyServer(h, hc)
	foreign := unique("legacy-session")
	for _, tc := range []struct {
		what  string
		extra http.Header
	}{
		{"without an Mcp-Session-Id", nil},
		{"with Mcp-Session-Id " + foreign + " (never minted)", http.Header{"Mcp-Session-Id": {foreign}}},
	} {
		sid, has, a := discoverWith(h, hc(), tc.extra)
		h.Notef("server/discover %s: %s", tc.what, a)
		if a.err != nil || a.status >= 400 || a.result == nil {
			h.Failf("server/discover %s was not answered with a result (the header was not ignored): %s", tc.what, a)
		}
		if has {
			h.Failf("the answer to server/discover %s carries Mcp-Session-Id %q: a server supporting only 2026-07-28 mints and echoes none", tc.what, sid)
		}
	}
}

func modernOnlyLastEvent(h *H) {
	hc := lazyHTTP(h)
	modernOnlyServer(h, hc)
	_, _, a := discoverWith(h, hc(), http.Header{"Last-Event-ID": {"1"}})
	h.Notef("server/discover with Last-Event-ID: 1: %s", a)
	if a.err != nil || a.status >= 400 || a.result == nil {
		h.Failf("server/discover with Last-Event-ID: 1 was not answered with a result (the header was not ignored): %s", a)
	}
}

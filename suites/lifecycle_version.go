package suites

// The version negotiation of the 2025 lifecycle (lifecycle.mdx, "Version
// Negotiation"): what initialize answers for a version the server does not
// support.
//
//	harness ──initialize {protocolVersion: 1999-01-01}──▶ proxy ──▶ server
//	        ◀── result {protocolVersion: V} ─────────────────────────┘
//	harness ──initialize {protocolVersion: V} (a new connection)──▶ …
//	        ◀── result {protocolVersion: V}: V is a version it supports
//
// Each initialize goes on a connection of its own that nothing negotiated
// before: a new server process on stdio (ConnectBare), a new session over
// Streamable HTTP (no Mcp-Session-Id). What the server supports is only
// what it says itself: a version it answers an initialize asking for it
// with.

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/protocol"
	"github.com/mcp-conform/mcp-conform/reports"
)

const lifecyclePage = "specification/VERSION/basic/lifecycle.mdx"

var checkVersionFallback = register(&Check{
	ID:    "LIFECYCLE-VERSION-FALLBACK",
	Title: "an initialize asking for a version the server does not support is answered with another version it supports",
	How: "2025 versions, stdio and Streamable HTTP. Sends initialize with protocolVersion " + unknownVersion + " (a version " +
		"no MCP specification defines) on a new connection (stdio: a new server process; HTTP: a new session). The " +
		"answer must be a result, not an error, naming another protocolVersion V; and V must be a version the server " +
		"supports: an initialize asking for V, on another new connection, is answered with V (a supported version is " +
		"answered with the same, the sentence before). The page's \"Example initialization error\" (-32602, " +
		"\"Unsupported protocol version\") shows an error answer; the check follows the MUST sentence, which asks for a " +
		"version, and says so when an error FAILs.",
	Rules: sameRule(Rule{Level: reports.Must, Spec: lifecyclePage,
		Clause: "If the server supports the requested protocol version, it MUST respond with the same version. Otherwise, the server MUST respond with another protocol version it supports."},
		legacyVersions...),
	Transports: []string{viaStdio, viaHTTP},
	Clauses:    []string{"lc#4"},
})

var checkVersionLatest = register(&Check{
	ID:    "LIFECYCLE-VERSION-LATEST",
	Title: "the version offered for one the server does not support is the latest it supports",
	How: "2025 versions, stdio and Streamable HTTP. Sends initialize with protocolVersion " + unknownVersion + " as " +
		"LIFECYCLE-VERSION-FALLBACK does, then, for each version the specification defines that initialize negotiates and that is newer " +
		"than the one offered (" + strings.Join(initializeVersions, ", ") + "), an initialize asking for it on a new connection: one " +
		"answered with that same version is a newer version the server supports, so the offer was not its latest " +
		"(WARN). An answer naming no version SKIPs: LIFECYCLE-VERSION-FALLBACK judges it.",
	Rules: sameRule(Rule{Level: reports.Should, Spec: lifecyclePage,
		Clause: "Otherwise, the server MUST respond with another protocol version it supports. This SHOULD be the latest version supported by the server."},
		legacyVersions...),
	Transports: []string{viaStdio, viaHTTP},
	Clauses:    []string{"lc#5"},
})

// initializeVersions are the versions the specification defines after its
// first (2024-11-05) that initialize negotiates, newest first: every
// version a server could support that is newer than one it offers.
// 2026-07-28 has no initialize.
var initializeVersions = []string{v20251125, v20250618, "2025-03-26"}

// initAsker sends initialize asking for a version on a new connection and
// returns the answer and the protocolVersion its result names ("" for an
// error, or a result naming none).
type initAsker func(version string) (a rpcAnswer, offered string)

// newInitAsker is the check's initAsker: over HTTP one server (the check's
// connection) and a new session per initialize, on stdio a new server
// process per initialize.
func newInitAsker(h *H) initAsker {
	return initAskerOn(h, lazyHTTP(h))
}

// lazyHTTP returns the check's one HTTP connection, made on first use.
func lazyHTTP(h *H) func() *HConn {
	var hc *HConn
	return func() *HConn {
		if hc == nil {
			hc = h.ConnectHTTP()
		}
		return hc
	}
}

// initAskerOn is newInitAsker over HTTP connection hc (made on first use).
func initAskerOn(h *H, hc func() *HConn) initAsker {
	return func(version string) (rpcAnswer, string) {
		a := bareInitialize(h, hc, map[string]any{
			"protocolVersion": version,
			"capabilities":    map[string]any{},
			"clientInfo":      map[string]any{"name": "mcp-conform", "version": clients.DefaultClientVersion},
		}, "initialize asking for "+version)
		var r struct {
			ProtocolVersion any `json:"protocolVersion"`
		}
		if a.err != nil || json.Unmarshal(a.result, &r) != nil {
			return a, ""
		}
		v, _ := r.ProtocolVersion.(string)
		return a, v
	}
}

// bareInitialize sends initialize with params on a connection nothing
// negotiated (stdio: a new server process; HTTP: a POST with no session,
// on the server of hc) and returns its answer; what names it when it is
// not answered (FAIL).
func bareInitialize(h *H, hc func() *HConn, params map[string]any, what string) rpcAnswer {
	id := jsonrpc.StringID(unique("init"))
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id.Raw(), "method": "initialize", "params": params})
	switch h.Target().Via() {
	case protocol.TransportHTTP:
		resp, raw := rawBody(h, hc(), line, http.Header{})
		return parseAnswer(resp.StatusCode, replyJSON(resp, raw, id))
	case protocol.TransportStdio:
		c := h.ConnectBare()
		from := c.W.Len()
		c.SendRaw(string(line))
		// The process was just started: its first answer gets the
		// time a server has to start and negotiate.
		d := h.Cfg().StartTimeout
		m, ok := c.WaitFirst(from, d, func(m clients.Message) bool { return m.Env.Kind.IsReply() && m.Env.ID == id })
		if !ok {
			h.Failf("%s was not answered %s", what, c.Silence(d))
		}
		return parseAnswer(0, m.Raw)
	}
	h.Skip("the target is neither a stdio process nor a Streamable HTTP endpoint (" + h.Target().Transport + ")")
	return rpcAnswer{}
}

// offerForUnknown asks for unknownVersion and returns the version offered
// ("" with the answer when none).
func offerForUnknown(ask initAsker) (rpcAnswer, string) { return ask(unknownVersion) }

func versionFallback(h *H) {
	ask := newInitAsker(h)
	a, v := offerForUnknown(ask)
	switch {
	case a.err != nil:
		h.Failf("initialize asking for %s got %s, want a result naming another protocol version the server supports (the page's error example shows such an error; its MUST sentence asks for a version): %s", unknownVersion, a, clip(a.raw))
	case v == "":
		h.Failf("initialize asking for %s got a result naming no protocolVersion: %s", unknownVersion, clip(a.raw))
	case v == unknownVersion:
		h.Failf("initialize asking for %s was answered with that version, which no MCP specification defines: %s", unknownVersion, clip(a.raw))
	}
	h.Notef("initialize asking for %s was offered %s", unknownVersion, v)
	b, w := ask(v)
	if w != v {
		h.Failf("initialize asking for %s was offered %s, but an initialize asking for %s got %s (protocolVersion %q): not a version the server supports: %s",
			unknownVersion, v, v, b, w, clip(b.raw))
	}
	h.Notef("an initialize asking for %s was answered with %s: the server supports it", v, v)
}

func versionLatest(h *H) {
	ask := newInitAsker(h)
	a, v := offerForUnknown(ask)
	if v == "" || v == unknownVersion {
		h.Skip("initialize asking for " + unknownVersion + " got " + a.String() + ", no other version to judge (LIFECYCLE-VERSION-FALLBACK judges it)")
	}
	h.Notef("initialize asking for %s was offered %s", unknownVersion, v)
	newer := slices.DeleteFunc(slices.Clone(initializeVersions), func(n string) bool { return n <= v })
	for _, n := range newer { // newest first
		b, w := ask(n)
		if w == n {
			h.Warnf("initialize asking for %s was offered %s, but the server supports the newer %s (an initialize asking for it was answered with it): %s",
				unknownVersion, v, n, clip(b.raw))
		}
		h.Notef("initialize asking for %s got %s (protocolVersion %q)", n, b, w)
	}
}

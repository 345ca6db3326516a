package suites

// VERSION-MODERN-ONLY-NAMED: a server that supports only modern versions
// names them in an error it returns to initialize (2026-07-28
// versioning.mdx §Backward Compatibility), on stdio and Streamable HTTP.
// Whether the server is modern-only is what its server/discover says.
//
//	harness ──server/discover (2026-07-28)──▶ server ◀── supportedVersions [2026-07-28]
//	harness ──initialize {protocolVersion: 2025-11-25} (no modern header or _meta)──▶ server
//	        ◀── error naming 2026-07-28 (message or data)

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/protocol"
	"github.com/mcp-conform/mcp-conform/reports"
)

var checkModernOnlyNamed = register(&Check{
	ID:    "VERSION-MODERN-ONLY-NAMED",
	Title: "a server supporting only modern versions names them in its error to initialize",
	How: "2026-07-28, stdio and Streamable HTTP. Sends server/discover (as HTTP-MODERN-ONLY-405: a server listing a " +
		"version before 2026-07-28, or none, SKIPs). Then sends an older client's initialize (protocolVersion " +
		"2025-11-25; stdio: a new process; HTTP: a POST without a version header or _meta). An answer that is not an " +
		"error (a result), or none within the start timeout, has no error to judge (SKIP). An error (a JSON-RPC error, " +
		"or an HTTP error status) whose text (message, data, or the body) does not name every version server/discover " +
		"listed WARNs.",
	Rules: map[string]Rule{v20260728: {Level: reports.Should, Spec: versioningModern,
		Clause: "A server that supports only modern versions SHOULD name the protocol versions it supports in any error it returns to an initialize request, on any transport"}},
	Transports: []string{viaStdio, viaHTTP},
	Clauses:    []string{"ver#5"},
})

func registerVersionModernOnly() {
	ginkgo.Describe("Modern-only server: initialize (2026-07-28)", ginkgo.Label("area:lifecycle"), func() {
		define(checkModernOnlyNamed, modernOnlyNamed)
	})
}

func modernOnlyNamed(h *H) {
	hc := lazyHTTP(h)
	listed := modernOnlyServer(h, hc)
	a, ok := legacyInitialize(h, hc)
	if !ok {
		h.Skip("the older client's initialize was not answered within the start timeout: no error to judge")
	}
	h.Notef("initialize (2025-11-25): %s", clip(a.raw))
	if a.err == nil && a.status < 400 {
		h.Skip("the older client's initialize was not refused with an error (" + clip(a.raw) + "): no error to judge")
	}
	text := string(a.raw)
	if a.err != nil {
		text = a.err.Message + " " + string(a.err.Data)
	}
	for _, v := range listed {
		if !strings.Contains(text, v) {
			h.Failf("the error to an older client's initialize does not name %s, a version the server supports (server/discover lists %v): %s", v, listed, clip(a.raw))
		}
	}
}

// legacyInitialize sends an older client's initialize (2025-11-25, no
// modern header or _meta) on a connection of its own and returns the
// answer; ok is false when none came within the start timeout (stdio).
func legacyInitialize(h *H, hc func() *HConn) (rpcAnswer, bool) {
	id := jsonrpc.StringID(unique("init"))
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id.Raw(), "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "mcp-conform-legacy-client", "version": "1.0.0"}}})
	switch h.Target().Via() {
	case protocol.TransportHTTP:
		resp, raw := rawBody(h, hc(), line, http.Header{})
		return parseAnswer(resp.StatusCode, firstJSON(resp, raw)), true
	case protocol.TransportStdio:
		c := h.ConnectBare()
		from := c.W.Len()
		c.SendRaw(string(line))
		d := h.Cfg().StartTimeout
		m, ok := c.WaitFirst(from, d, func(m clients.Message) bool { return m.Env.Kind.IsReply() && m.Env.ID == id })
		if !ok {
			return rpcAnswer{}, false
		}
		return parseAnswer(0, m.Raw), true
	}
	h.Skip("the target is neither a stdio process nor a Streamable HTTP endpoint (" + h.Target().Transport + ")")
	return rpcAnswer{}, false
}

package suites

// VERSION-DISCOVER: a server that supports 2026-07-28 implements
// server/discover (2026-07-28 server/discover.mdx: "Servers MUST implement
// it"), on stdio and Streamable HTTP.
//
//	harness ──server/discover (2026-07-28, a new connection)──▶ server
//	        ◀── DiscoverResult {supportedVersions: [2026-07-28, …], capabilities, …}
//
// A 2026-07-28 run is negotiated with server/discover, so a server without
// it never reaches one: the check runs in the 2025 versions too, where the
// server may still say it supports 2026-07-28 another way, in the
// UnsupportedProtocolVersionError it answers a request of an unknown
// version with (2026-07-28 versioning.mdx: the error lists the versions it
// supports).
//
//	harness ──tools/list (_meta protocolVersion 1999-01-01)──▶ server
//	        ◀── UnsupportedProtocolVersionError {data.supported: [2026-07-28, …]}

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/protocol"
	"github.com/mcp-conform/mcp-conform/reports"
)

// discoverPage is the page of server/discover; it exists in 2026-07-28 only.
const discoverPage = "specification/2026-07-28/server/discover.mdx"

var checkVersionDiscover = register(&Check{
	ID:    "VERSION-DISCOVER",
	Title: "a server that supports 2026-07-28 implements server/discover",
	How: "Stdio and Streamable HTTP, in every version. Sends server/discover in 2026-07-28 (its _meta, and over HTTP its " +
		"headers) on a new connection (stdio: a new server process; HTTP: a POST with no session). A result with a " +
		"supportedVersions array that lists 2026-07-28 passes (the rest of its shape is SCHEMA-VALID's); one that does not " +
		"list it says the server does not support 2026-07-28 (SKIP; FAIL in a 2026-07-28 run). Any other answer FAILs when the server supports 2026-07-28: the run negotiated it, or " +
		"a tools/list sent in the unknown version " + unknownVersion + " (on another new connection) is answered with an " +
		"UnsupportedProtocolVersionError whose data.supported lists 2026-07-28; otherwise the server does not say it " +
		"supports 2026-07-28 (SKIP). A run in a 2025 version judges the 2026-07-28 sentence: a 2026-07-28 run is " +
		"negotiated with server/discover, so a server without it is reported there as refusing 2026-07-28.",
	Rules: sameRule(Rule{Level: reports.Must, Spec: discoverPage,
		Clause: "`server/discover` lets a client query a server's supported protocol versions, capabilities, and identity before sending any other requests. Servers MUST implement it."},
		v20260728, v20251125, v20250618),
	Transports: []string{viaStdio, viaHTTP},
	Clauses:    []string{"ver#2"},
})

func registerVersionDiscover() {
	ginkgo.Describe("server/discover is implemented (2026-07-28)", ginkgo.Label("area:lifecycle"), func() {
		define(checkVersionDiscover, versionDiscover)
	})
}

func versionDiscover(h *H) {
	hc := lazyHTTP(h)
	_, a, ok := bareModernRequest(h, hc, "server/discover", v20260728)
	h.Notef("server/discover (2026-07-28): %s", a)
	if ok && a.err == nil && a.result != nil && judgeDiscoverResult(h, a) {
		return
	}
	got := a.String()
	if !ok {
		got = "no answer within the start timeout"
	}
	why := ""
	if h.Version() == v20260728 {
		why = "the run negotiated 2026-07-28"
	} else if listed, how := unsupportedListed(h, hc); slices.Contains(listed, v20260728) {
		why = "its UnsupportedProtocolVersionError to a request in " + unknownVersion + " lists it: " + how
	} else {
		h.Skip("the server does not say it supports 2026-07-28 (server/discover: " + got + "; a request in " + unknownVersion + ": " + how + "): the clause binds a server that does")
	}
	h.Failf("server/discover in 2026-07-28 got %s, want a DiscoverResult: the server supports 2026-07-28 (%s), and servers MUST implement server/discover", got, why)
}

// judgeDiscoverResult judges a result of server/discover: one without a
// supportedVersions array is not a DiscoverResult (false: judged as any
// other answer); one whose list does not name 2026-07-28 says the server
// does not support it (SKIP), unless the run negotiated it (FAIL). The
// rest of the result's shape is SCHEMA-VALID's, which reads this
// connection too: a schema finding is not this clause's.
func judgeDiscoverResult(h *H, a rpcAnswer) bool {
	var r struct {
		SupportedVersions *[]string `json:"supportedVersions"`
	}
	if json.Unmarshal(a.result, &r) != nil || r.SupportedVersions == nil {
		h.Notef("the result carries no supportedVersions array: not a DiscoverResult")
		return false
	}
	listed := *r.SupportedVersions
	if !slices.Contains(listed, v20260728) {
		if h.Version() == v20260728 {
			h.Failf("server/discover in 2026-07-28, the version of the run, was answered with a result whose supportedVersions %v does not list it: %s", listed, clip(a.raw))
		}
		h.Skip(fmt.Sprintf("server/discover's supportedVersions %v does not list 2026-07-28: the clause binds a server that supports it", listed))
	}
	h.Notef("a DiscoverResult, supportedVersions %v (its schema is SCHEMA-VALID's)", listed)
	return true
}

// unsupportedListed sends tools/list in the unknown version on a new
// connection and returns the versions its UnsupportedProtocolVersionError
// lists in data.supported, with what the answer was.
func unsupportedListed(h *H, hc func() *HConn) ([]string, string) {
	_, a, ok := bareModernRequest(h, hc, "tools/list", unknownVersion)
	if !ok {
		return nil, "not answered within the start timeout"
	}
	if a.err == nil || a.err.Code != jsonrpc.CodeUnsupportedProtocolVersion {
		return nil, a.String() + ", not an UnsupportedProtocolVersionError"
	}
	var d struct {
		Supported []string `json:"supported"`
	}
	_ = json.Unmarshal(a.err.Data, &d)
	return d.Supported, fmt.Sprintf("%s, supported %v", a, d.Supported)
}

// bareModernRequest sends a request of method in version (its _meta, and
// over HTTP the MCP-Protocol-Version and Mcp-Method headers) on a
// connection nothing negotiated (stdio: a new server process; HTTP: a POST
// with no session) and returns the request sent and the answer to its id;
// ok is false when none came within the start timeout (stdio).
func bareModernRequest(h *H, hc func() *HConn, method, version string) ([]byte, rpcAnswer, bool) {
	id := unique("discover")
	line, _ := json.Marshal(request(id, method, map[string]any{"_meta": modernMeta(version)}))
	switch h.Target().Via() {
	case protocol.TransportHTTP:
		resp, raw := rawBody(h, hc(), line, http.Header{"Mcp-Protocol-Version": {version}, "Mcp-Method": {method}})
		return line, parseAnswer(resp.StatusCode, replyJSON(resp, raw, jsonrpc.StringID(id))), true
	case protocol.TransportStdio:
		c := h.ConnectBare()
		from := c.W.Len()
		c.SendRaw(string(line))
		d := h.Cfg().StartTimeout
		m, ok := c.WaitFirst(from, d, func(m clients.Message) bool {
			return m.Env.Kind.IsReply() && m.Env.ID == jsonrpc.StringID(id)
		})
		if !ok {
			return line, rpcAnswer{}, false
		}
		return line, parseAnswer(0, m.Raw), true
	}
	h.Skip("the target is neither a stdio process nor a Streamable HTTP endpoint (" + h.Target().Transport + ")")
	return nil, rpcAnswer{}, false
}

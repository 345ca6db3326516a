package suites

// The 2026-07-28 wire checks of issue 12: the request metadata headers of
// Streamable HTTP (Server Validation), the unknown-method status, and the
// UnsupportedProtocolVersionError every transport answers an unknown
// version with.
//
//	harness ──raw POST (headers chosen per case)──▶ proxy ──▶ server
//	        ◀── status + JSON-RPC error (code, data) ─────────┘
//
// Each case sends one request whose headers and body are exactly what the
// case needs (RawPOST adds nothing), so what the server judged is what the
// transcript shows.

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/protocol"
	"github.com/mcp-conform/mcp-conform/reports"
)

const versioningModern = "specification/2026-07-28/basic/versioning.mdx"

var checkHeaderMismatch = register(&Check{
	ID:    "HTTP-HEADER-MISMATCH",
	Title: "a request whose Mcp-Method, Mcp-Name or Mcp-Param-{Name} header disagrees with its body (or is missing) is rejected: 400 and HeaderMismatch (-32020)",
	How: "2026-07-28 over Streamable HTTP. POSTs server/discover (valid _meta) with Mcp-Method: tools/list; then, when " +
		"the manifest declares a role, a tools/call of the role's tool with an Mcp-Name naming another tool; then, when a " +
		"role's tool (not the mutation, task, flood or listChanged role's) has a top-level string parameter marked " +
		"x-mcp-header, two calls of it with that parameter in the body: one whose Mcp-Param-{Name} names another value, " +
		"one without the header (the table: \"Client omits header but value is in body: Server MUST reject\"). Each must be " +
		"answered with HTTP 400 and a JSON-RPC error of code -32020; a result means the server acted on a request its " +
		"headers contradict (for a tools/call: it ran the tool). No such parameter: the Mcp-Param-{Name} cases are noted as not tried.",
	Rules: map[string]Rule{v20260728: {Level: reports.Must, Spec: httpModern,
		Clause: "Servers that process the request body MUST reject requests where the values specified in the headers do not match the corresponding values in the request body. [...] When rejecting a request due to header validation failure, servers MUST return HTTP status 400 Bad Request and MUST include a JSON-RPC error response using the following error code: -32020 HeaderMismatch"}},
	Transports: []string{viaHTTP},
	Clauses:    []string{"h#20", "h#23"},
})

var checkHeaderDecoded = register(&Check{
	ID:    "HTTP-HEADER-DECODED",
	Title: "an Mcp-Name or Mcp-Param-{Name} sent in the Base64 sentinel form is decoded before it is compared with the body",
	How: "2026-07-28 over Streamable HTTP. POSTs a tools/call of a tool named mcp-conform-ünknown (not ASCII, so a " +
		"client must send its Mcp-Name in the =?base64?…?= form, and does): header and body agree once decoded, so the " +
		"server must not answer HeaderMismatch (-32020); what it says about the unknown tool is not judged here. Then, when " +
		"a role's tool (as HTTP-HEADER-MISMATCH) has a top-level string parameter marked x-mcp-header, calls it with that " +
		"parameter set to a non-ASCII value and its Mcp-Param-{Name} in the Base64 form: it must not get -32020 either.",
	Rules: map[string]Rule{v20260728: {Level: reports.Must, Spec: httpModern,
		Clause: "When comparing header values to body values (e.g., Mcp-Name, Mcp-Param-{Name}), servers MUST decode encoded values (see Value Encoding) before comparison."}},
	Transports: []string{viaHTTP},
	Clauses:    []string{"h#21"},
})

var checkVersionHeaderMismatch = register(&Check{
	ID:    "HTTP-VERSION-HEADER-MISMATCH",
	Title: "an MCP-Protocol-Version header that disagrees with _meta's protocolVersion is rejected: 400 and HeaderMismatch (-32020)",
	How: "2026-07-28 over Streamable HTTP. POSTs server/discover with MCP-Protocol-Version: 2026-07-28 and Mcp-Method " +
		"matching, but _meta's io.modelcontextprotocol/protocolVersion 2025-11-25: it must get HTTP 400 and a JSON-RPC error " +
		"of code -32020.",
	Rules: map[string]Rule{v20260728: {Level: reports.Must, Spec: httpModern,
		Clause: "The header value MUST match the io.modelcontextprotocol/protocolVersion field carried in the request body's _meta. If the values do not match, the server MUST reject the request with 400 Bad Request and a HeaderMismatch JSON-RPC error"}},
	Transports: []string{viaHTTP},
	Clauses:    []string{"h#15"},
})

var checkVersionHeaderRequired = register(&Check{
	ID:    "HTTP-VERSION-HEADER-REQUIRED",
	Title: "a request without an MCP-Protocol-Version header is rejected (400, HeaderMismatch -32020) by a server that supports no version before 2025-06-18",
	How: "2026-07-28 over Streamable HTTP. When server/discover's supportedVersions lists no version earlier than " +
		"2025-06-18 (such a server MAY read a header-less request as 2025-03-26 instead: SKIP), POSTs server/discover with " +
		"a well-formed 2026-07-28 _meta and Mcp-Method but no MCP-Protocol-Version header: it must be rejected per Server " +
		"Validation, with HTTP 400 and a JSON-RPC error of code -32020. A result means the server served a request that " +
		"lacks a required header.",
	Rules: map[string]Rule{v20260728: {Level: reports.Must, Spec: httpModern,
		Clause: "A server that supports clients implementing protocol versions earlier than 2025-06-18 (which did not define the MCP-Protocol-Version header) MAY treat a request that omits the header as protocol version 2025-03-26. A server that does not support such clients MUST reject a request without the header per Server Validation."}},
	Transports: []string{viaHTTP},
	Clauses:    []string{"h#18"},
})

var checkMethodNotFound404 = register(&Check{
	ID:    "HTTP-METHOD-NOT-FOUND-404",
	Title: "an unknown method gets HTTP 404 with a JSON-RPC error -32601",
	How: "2026-07-28 over Streamable HTTP. POSTs mcp-conform/no-such-method (headers and _meta well formed): the answer " +
		"must be HTTP 404 and carry a JSON-RPC error of code -32601 (the body tells it from a legacy server's 404).",
	Rules: map[string]Rule{v20260728: {Level: reports.Must, Spec: httpModern,
		Clause: "If the server does not implement the requested RPC method, it MUST respond with 404 Not Found and a JSON-RPC error with code -32601 (Method not found)."}},
	Transports: []string{viaHTTP},
	Clauses:    []string{"h#17"},
})

var checkVersionUnsupported = register(&Check{
	ID:    "VERSION-UNSUPPORTED-LISTED",
	Title: "a request in a version the server does not implement gets UnsupportedProtocolVersionError (-32022) listing the versions it supports",
	How: "2026-07-28, stdio and Streamable HTTP. Sends server/discover whose _meta protocolVersion (and, over HTTP, the " +
		"MCP-Protocol-Version header) is 1999-01-01. The answer must be a JSON-RPC error of code -32022 whose data holds " +
		"supported, a non-empty list of version strings, and requested, the version asked for (the schema's " +
		"UnsupportedProtocolVersionError); over HTTP its status must be 400 Bad Request.",
	Rules: map[string]Rule{v20260728: {Level: reports.Must, Spec: versioningModern, Also: []string{httpModern},
		Clause: "If the server does not implement the requested version (whether the version is unknown to the server, or is a known version the server has chosen not to support), it MUST respond with an UnsupportedProtocolVersionError listing the versions it does support [...] (Streamable HTTP) If the server does not implement the requested protocol version (whether the version is unknown to the server, or is a known version the server has chosen not to support), it MUST respond with 400 Bad Request and an UnsupportedProtocolVersionError listing its supported versions."}},
	Transports: []string{viaStdio, viaHTTP},
	Clauses:    []string{"ver#1", "h#16"},
})

func registerHTTPModern() {
	ginkgo.Describe("HTTP request headers (2026-07-28)", ginkgo.Label("area:http"), func() {
		define(checkHeaderMismatch, headerMismatch)
		define(checkHeaderDecoded, headerDecoded)
		define(checkVersionHeaderMismatch, versionHeaderMismatch)
		define(checkVersionHeaderRequired, versionHeaderRequired)
		define(checkMethodNotFound404, methodNotFound404)
		define(checkNotification202, notification202)
		define(checkGETStream, getStream)
		define(checkEventIDsUnique, eventIDsUnique)
	})
	ginkgo.Describe("VERSION negotiation (2026-07-28)", ginkgo.Label("area:version"), func() {
		define(checkVersionUnsupported, versionUnsupported)
	})
	ginkgo.Describe("ROBUST request _meta (2026-07-28)", ginkgo.Label("area:robust"), func() {
		define(checkMetaRequired, metaRequired)
	})
}

// rpcAnswer is what a check reads of one answer: its HTTP status (0 on
// stdio), and its JSON-RPC error, if it carried one.
type rpcAnswer struct {
	status int
	err    *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	result json.RawMessage
	raw    []byte
}

func (a rpcAnswer) String() string {
	var b strings.Builder
	if a.status != 0 {
		fmt.Fprintf(&b, "HTTP %d", a.status)
	}
	switch {
	case a.err != nil:
		fmt.Fprintf(&b, " error %d %q", a.err.Code, a.err.Message)
	case a.result != nil:
		b.WriteString(" a result")
	default:
		fmt.Fprintf(&b, " no JSON-RPC answer (%s)", clip(a.raw))
	}
	return strings.TrimSpace(b.String())
}

func (a rpcAnswer) headerMismatch() bool {
	return a.status == http.StatusBadRequest && a.err != nil && a.err.Code == jsonrpc.CodeHeaderMismatch
}

func parseAnswer(status int, raw []byte) rpcAnswer {
	a := rpcAnswer{status: status, raw: raw}
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int             `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &env) == nil {
		a.err, a.result = env.Error, env.Result
	}
	return a
}

// modernPOST POSTs a request of method with params (its _meta as given:
// nothing is injected) and exactly the headers hd, and reads the answer.
func modernPOST(h *H, c *HConn, method string, params map[string]any, hd http.Header) rpcAnswer {
	body, _ := json.Marshal(request(unique("hdr"), method, params))
	resp, raw := rawBody(h, c, body, hd)
	return parseAnswer(resp.StatusCode, firstJSON(resp, raw))
}

// modernHTTP connects over HTTP and returns the connection and its
// version; a session that is not of the 2026-07-28 era SKIPs (the rules
// name only that version, so this guards a harness misuse).
func modernHTTP(h *H) (*HConn, string) {
	c := h.ConnectHTTP()
	s := c.W.Session()
	if s.Era != clients.EraModern {
		h.Skip("the session is not of the 2026-07-28 era (" + s.Version + ")")
	}
	return c, s.Version
}

// roleTool is a tool the manifest lets the harness call (the slow role's
// first, then any role's, in name order), or "".
func roleTool(h *H) string {
	if t := h.Role("slow").Tool; t != "" {
		return t
	}
	names := make([]string, 0, len(h.Target().Roles))
	for n := range h.Target().Roles {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if t := h.Target().Roles[n].Tool; t != "" {
			return t
		}
	}
	return ""
}

func headerMismatch(h *H) {
	c, v := modernHTTP(h)
	var bad, seen []string
	a := modernPOST(h, c, "server/discover", map[string]any{"_meta": modernMeta(v)},
		http.Header{"Mcp-Protocol-Version": {v}, "Mcp-Method": {"tools/list"}})
	if !a.headerMismatch() {
		bad = append(bad, "server/discover sent with Mcp-Method: tools/list got "+a.String())
	} else {
		seen = append(seen, "Mcp-Method: "+a.String())
	}
	if tool := roleTool(h); tool != "" {
		other := tool + "-mcp-conform-other"
		a := modernPOST(h, c, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{}, "_meta": modernMeta(v)},
			http.Header{"Mcp-Protocol-Version": {v}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {other}})
		switch {
		case a.headerMismatch():
			seen = append(seen, "Mcp-Name: "+a.String())
		case a.result != nil:
			bad = append(bad, fmt.Sprintf("tools/call of %s sent with Mcp-Name: %s was run (%s)", tool, other, a))
		default:
			bad = append(bad, fmt.Sprintf("tools/call of %s sent with Mcp-Name: %s got %s", tool, other, a))
		}
	} else {
		seen = append(seen, "Mcp-Name not tried: the manifest declares no role tool")
	}
	ps, pb := paramHeaderMismatch(h, c, v) // http_param_headers.go
	seen, bad = append(seen, ps...), append(bad, pb...)
	if len(bad) > 0 {
		h.Failf("want HTTP 400 with HeaderMismatch (-32020): %s", strings.Join(bad, "; "))
	}
	h.Notef("%s", strings.Join(seen, "; "))
}

func headerDecoded(h *H) {
	c, v := modernHTTP(h)
	// Not plain ASCII: the Base64 form is the only one a client may send
	// (Value Encoding), so a server that compares it undecoded rejects
	// every conforming client's call of such a tool.
	const name = "mcp-conform-ünknown"
	enc := "=?base64?" + base64.StdEncoding.EncodeToString([]byte(name)) + "?="
	a := modernPOST(h, c, "tools/call", map[string]any{"name": name, "arguments": map[string]any{}, "_meta": modernMeta(v)},
		http.Header{"Mcp-Protocol-Version": {v}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {enc}})
	if a.err != nil && a.err.Code == jsonrpc.CodeHeaderMismatch {
		h.Failf("tools/call of %s with Mcp-Name: %s (the same name, Base64-encoded) got %s: the header was compared undecoded", name, enc, a)
	}
	seen, bad := paramHeaderDecoded(h, c, v) // http_param_headers.go
	if bad != "" {
		h.Failf("%s", bad)
	}
	h.Notef("Mcp-Name %s: %s; %s", enc, a, seen)
}

func versionHeaderMismatch(h *H) {
	c, v := modernHTTP(h)
	const other = v20251125
	a := modernPOST(h, c, "server/discover", map[string]any{"_meta": modernMeta(other)},
		http.Header{"Mcp-Protocol-Version": {v}, "Mcp-Method": {"server/discover"}})
	if !a.headerMismatch() {
		h.Failf("server/discover with MCP-Protocol-Version: %s and _meta protocolVersion %s got %s, want HTTP 400 with HeaderMismatch (-32020)", v, other, a)
	}
	h.Notef("%s", a)
}

// headerlessVersion is the newest version the server lists that predates
// the MCP-Protocol-Version header (2025-06-18 defined it), or "".
func headerlessVersion(supported []string) string {
	old := ""
	for _, v := range supported {
		if protocol.Version(v).Before(protocol.V20250618) && protocol.Compare(protocol.Version(v), protocol.Version(old)) > 0 {
			old = v
		}
	}
	return old
}

func versionHeaderRequired(h *H) {
	c, v := modernHTTP(h)
	supported := c.W.Session().SupportedVersions
	if len(supported) == 0 {
		h.Skip("server/discover listed no supported versions: whether the server supports clients older than 2025-06-18 is unknown")
	}
	if old := headerlessVersion(supported); old != "" {
		h.Skip(fmt.Sprintf("the server lists %s among its supported versions %v: it MAY treat a request without the header as 2025-03-26", old, supported))
	}
	a := modernPOST(h, c, "server/discover", map[string]any{"_meta": modernMeta(v)},
		http.Header{"Mcp-Method": {"server/discover"}})
	switch {
	case a.headerMismatch():
	case a.result != nil:
		h.Failf("server/discover without an MCP-Protocol-Version header was served (%s); the server supports %v only, so it must reject it with HTTP 400 and HeaderMismatch (-32020)", a, supported)
	default:
		h.Failf("server/discover without an MCP-Protocol-Version header got %s, want HTTP 400 with HeaderMismatch (-32020) (Server Validation)", a)
	}
	h.Notef("supported %v; without the header: %s", supported, a)
}

func methodNotFound404(h *H) {
	c, v := modernHTTP(h)
	const method = "mcp-conform/no-such-method"
	a := modernPOST(h, c, method, map[string]any{"_meta": modernMeta(v)},
		http.Header{"Mcp-Protocol-Version": {v}, "Mcp-Method": {method}})
	if a.status != http.StatusNotFound || a.err == nil || a.err.Code != jsonrpc.CodeMethodNotFound {
		h.Failf("%s got %s, want HTTP 404 with a JSON-RPC error -32601", method, a)
	}
}

// rawModern sends one 2026-07-28 request exactly as given (nothing is
// injected into its _meta) on the target's transport and reads its answer:
// over HTTP a raw POST whose MCP-Protocol-Version header is version and
// whose Mcp-Method matches; on stdio a line, its answer awaited within the
// exchange timeout (none FAILs).
func rawModern(h *H, method string, params map[string]any, version string) rpcAnswer {
	if h.Target().Via() == protocol.TransportHTTP {
		c, _ := modernHTTP(h)
		return modernPOST(h, c, method, params, http.Header{"Mcp-Protocol-Version": {version}, "Mcp-Method": {method}})
	}
	c := h.Connect()
	if s := c.W.Session(); s.Era != clients.EraModern {
		h.Skip("the session is not of the 2026-07-28 era (" + s.Version + ")")
	}
	id := jsonrpc.StringID(unique("raw"))
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id.Raw(), "method": method, "params": params})
	from := c.W.Len()
	c.SendRaw(string(line))
	d := h.Cfg().OpTimeout
	m, ok := c.WaitFirst(from, d, func(m clients.Message) bool { return m.Env.Kind.IsReply() && m.Env.ID == id })
	if !ok {
		h.Failf("%s was not answered %s", method, c.Silence(d))
	}
	return parseAnswer(0, m.Raw)
}

// unknownVersion is a protocol version no server implements.
const unknownVersion = "1999-01-01"

func versionUnsupported(h *H) {
	a := rawModern(h, "server/discover", map[string]any{"_meta": modernMeta(unknownVersion)}, unknownVersion)
	if a.err == nil || a.err.Code != jsonrpc.CodeUnsupportedProtocolVersion {
		h.Failf("server/discover in version %s got %s, want an UnsupportedProtocolVersionError (-32022)", unknownVersion, a)
	}
	var data struct {
		Supported []any `json:"supported"`
		Requested *any  `json:"requested"`
	}
	if len(a.err.Data) == 0 || json.Unmarshal(a.err.Data, &data) != nil {
		h.Failf("the -32022 error carries no data object listing the supported versions: %s", clip(a.raw))
	}
	var versions []string
	for _, s := range data.Supported {
		str, ok := s.(string)
		if !ok {
			h.Failf("the -32022 error's data.supported holds a non-string %v: %s", s, clip(a.raw))
		}
		versions = append(versions, str)
	}
	if len(versions) == 0 {
		h.Failf("the -32022 error's data lists no supported version: %s", clip(a.raw))
	}
	if data.Requested == nil {
		h.Failf("the -32022 error's data lacks requested (the schema requires it): %s", clip(a.raw))
	}
	if a.status != 0 && a.status != http.StatusBadRequest {
		h.Failf("server/discover in version %s got %s: the UnsupportedProtocolVersionError, but over HTTP its status must be 400 Bad Request", unknownVersion, a)
	}
	h.Notef("supported %v", versions)
}

var checkMetaRequired = register(&Check{
	ID:    "ROBUST-META-REQUIRED",
	Title: "a 2026-07-28 request whose _meta lacks a required field (clientCapabilities, protocolVersion) is rejected with -32602 (HTTP 400)",
	How: "2026-07-28, stdio and Streamable HTTP. Sends tools/list once for each field the _meta table of basic/index.mdx " +
		"marks required, leaving that one out and keeping the other: _meta with io.modelcontextprotocol/protocolVersion " +
		"but no io.modelcontextprotocol/clientCapabilities, then _meta with clientCapabilities ({}) but no protocolVersion " +
		"(over HTTP the MCP-Protocol-Version header still names the version; over stdio nothing else does, so that request " +
		"is sent only to a server whose server/discover lists 2026-07-28 alone: a dual-era server may take it for a legacy " +
		"one). Each answer must be a JSON-RPC error -32602, over HTTP with status 400.",
	Rules: map[string]Rule{v20260728: {Level: reports.Must, Spec: basicModern,
		Clause: "A request missing any required field is malformed; the server MUST reject it with JSON-RPC error code -32602 (Invalid params). On HTTP, the response status MUST be 400 Bad Request."}},
	Transports: []string{viaStdio, viaHTTP},
	Clauses:    []string{"basic#19"},
})

func metaRequired(h *H) {
	v := h.Version()
	for _, tc := range []struct {
		missing string
		meta    map[string]any
	}{
		{clients.MetaClientCapabilities, map[string]any{clients.MetaProtocolVersion: v}},
		{clients.MetaProtocolVersion, map[string]any{clients.MetaClientCapabilities: map[string]any{}}},
	} {
		if tc.missing == clients.MetaProtocolVersion && h.Target().Via() == protocol.TransportStdio && !modernOnlyStdio(h) {
			// Over stdio nothing else names the request's era: a
			// dual-era server may take it for a legacy request
			// (versioning.mdx: "Modern → Legacy: ... an
			// implementation-defined error").
			h.Notef("without %s: not judged over stdio on a server that also supports 2025 versions (the request's era is its _meta protocolVersion alone)", tc.missing)
			continue
		}
		a := rawModern(h, "tools/list", map[string]any{"_meta": tc.meta}, v)
		switch {
		case a.err == nil || a.err.Code != jsonrpc.CodeInvalidParams:
			h.Failf("tools/list without _meta %s got %s, want a JSON-RPC error -32602", tc.missing, a)
		case a.status != 0 && a.status != http.StatusBadRequest:
			h.Failf("tools/list without _meta %s got %s: -32602, but the status must be 400", tc.missing, a)
		}
		h.Notef("without %s: %s", tc.missing, a)
	}
}

var checkNotification202 = register(&Check{
	ID:    "HTTP-NOTIFICATION-202",
	Title: "a notification POST is answered 202 Accepted with no body (or refused with an HTTP error status)",
	How: "Over Streamable HTTP, in the session (2025) or with the 2026-07-28 headers and _meta, POSTs " +
		"notifications/cancelled for a request id that was never sent (a notification every version's client may send). " +
		"Accepted, it must get 202 with an empty body; a server that cannot accept it must answer an HTTP error status " +
		"(4xx/5xx), which passes too. Any other 2xx, or a 202 with a body, FAILs.",
	Rules: merge(
		sameRule(Rule{Level: reports.Must, Spec: httpLegacy,
			Clause: "If the input is a JSON-RPC response or notification: If the server accepts the input, the server MUST return HTTP status code 202 Accepted with no body. If the server cannot accept the input, it MUST return an HTTP error status code (e.g., 400 Bad Request)."},
			legacyVersions...),
		map[string]Rule{v20260728: {Level: reports.Must, Spec: httpModern,
			Clause: "If the server accepts it, the server MUST return HTTP status code 202 Accepted with no body. If the server cannot accept it, it MUST return an HTTP error status code (e.g., 400 Bad Request)."}},
	),
	Transports: []string{viaHTTP},
	Clauses:    []string{"tr#8", "h#5", "h#6"},
	Limits:     map[string]string{"tr#8": "a notification, not a response", "h#6": "a notification only"},
})

func notification202(h *H) {
	c := h.ConnectHTTP()
	c.Ping("before the notification (the server is up and answering)")
	s := c.W.Session()
	params := map[string]any{"requestId": unique("never-sent"), "reason": "mcp-conform: a request that was never sent"}
	hd := sessionHeaders(c, c.W.SessionID())
	if s.Era == clients.EraModern {
		params["_meta"] = modernMeta(s.Version)
		hd["Mcp-Method"] = []string{"notifications/cancelled"}
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params})
	resp, raw := rawBody(h, c, body, hd)
	h.Notef("notifications/cancelled (never-sent id) answered HTTP %d, Content-Type %q, %d bytes of body", resp.StatusCode, resp.Header.Get("Content-Type"), len(raw))
	switch st := resp.StatusCode; {
	case st == http.StatusAccepted && len(strings.TrimSpace(string(raw))) == 0:
	case st == http.StatusAccepted:
		h.Failf("the notification got HTTP 202 with a body (%s): 202 must carry none", clip(raw))
	case st >= 400:
		h.Notef("refused with HTTP %d (a server that cannot accept a notification answers an error status)", st)
	default:
		h.Failf("the notification got HTTP %d (%s), want 202 Accepted with no body (or an error status)", st, clip(raw))
	}
}

var checkGETStream = register(&Check{
	ID:    "HTTP-GET-STREAM",
	Title: "a GET of the MCP endpoint opens an event stream or gets 405",
	How: "2025 versions over Streamable HTTP. In the session, GETs the endpoint with Accept: text/event-stream (no " +
		"Last-Event-ID): the answer must be 200 with Content-Type text/event-stream, or 405 Method Not Allowed (the " +
		"server offers no such stream). Any other status, or a 200 that is not an event stream, FAILs. The stream is " +
		"closed once its headers arrived.",
	Rules: sameRule(Rule{Level: reports.Must, Spec: httpLegacy,
		Clause: "The server MUST either return Content-Type: text/event-stream in response to this HTTP GET, or else return HTTP 405 Method Not Allowed, indicating that the server does not offer an SSE stream at this endpoint."},
		legacyVersions...),
	Transports: []string{viaHTTP},
	Clauses:    []string{"tr#18"},
})

func getStream(h *H) {
	c := h.ConnectHTTP()
	c.Ping("before the GET (the session is live)")
	hd := sessionHeaders(c, c.W.SessionID())
	hd["Accept"] = []string{"text/event-stream"}
	ctx, cancel := h.Op()
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.Proxy.URL(), nil)
	if err != nil {
		h.Errorf("build the GET: %v", err)
	}
	for k, v := range hd {
		req.Header[k] = v
	}
	resp, err := rawClient.Do(req)
	if err != nil {
		h.FailServer("GET failed: %v%s", err, c.ExitHint())
	}
	ct := resp.Header.Get("Content-Type")
	var peek []byte
	if !strings.HasPrefix(ct, "text/event-stream") {
		peek = make([]byte, 512)
		n, _ := resp.Body.Read(peek)
		peek = peek[:n]
	}
	_ = resp.Body.Close()
	h.Notef("GET answered HTTP %d, Content-Type %q", resp.StatusCode, ct)
	switch {
	case resp.StatusCode == http.StatusMethodNotAllowed:
	case resp.StatusCode == http.StatusOK && strings.HasPrefix(ct, "text/event-stream"):
	default:
		h.Failf("the GET got HTTP %d with Content-Type %q (%s): neither an event stream nor 405", resp.StatusCode, ct, clip(peek))
	}
}

var checkEventIDsUnique = register(&Check{
	ID:    "HTTP-EVENT-IDS-UNIQUE",
	Title: "SSE event ids are unique across all the streams of a session",
	How: "2025 versions over Streamable HTTP. In one session, opens every kind of stream a session has: the standalone " +
		"GET stream (when the server offers one), the POST streams of two calls of the slow role run at once (each with a " +
		"progress token) and of a tools/list, and a resumed stream: the first call's stream is closed after its first " +
		"progress and resumed by GET + Last-Event-ID (when the session has an id and the server resumes). Every event id " +
		"seen on any of these streams must name one event: an id on two streams (or twice on one) FAILs, except an event " +
		"the resumed stream delivers again (the same id and the same data as already received: one event, whose replay " +
		"RECONNECT-RESUME judges). A server that sends no event ids assigns none to collide (SKIP).",
	Rules: sameRule(Rule{Level: reports.Must, Spec: httpLegacy,
		Clause: "If present, the ID MUST be globally unique across all streams within that session—or all streams with that specific client, if session management is not in use."},
		legacyVersions...),
	Transports: []string{viaHTTP},
	Roles:      []string{"slow"},
	Clauses:    []string{"tr#23"},
})

// modernOnlyStdio reports whether the stdio server's server/discover (on
// a process of its own) lists only versions from 2026-07-28 on.
func modernOnlyStdio(h *H) bool {
	listed, how := discoveredVersions(h, nil)
	h.Notef("server/discover: %s", how)
	if len(listed) == 0 {
		return false
	}
	for _, v := range listed {
		if v < v20260728 {
			return false
		}
	}
	return true
}

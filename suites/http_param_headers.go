package suites

// The Mcp-Param-{Name} half of the 2026-07-28 Streamable HTTP header
// validation (streamable-http.mdx §Custom Headers from Tool Parameters,
// §Server Behavior for Custom Headers, §Server Validation): a role tool
// whose inputSchema marks a top-level parameter with x-mcp-header is called
// with that parameter in its arguments and the header chosen per case.
//
//	harness ──tools/call (role's tool, + param; Mcp-Param-{Name} per case)──▶ server
//	        ◀── 400 + HeaderMismatch (-32020), or the call's answer ──────────┘
//
// HTTP-HEADER-MISMATCH and HTTP-HEADER-DECODED (http_modern.go) run the
// mismatch and Base64 cases here; HTTP-PARAM-HEADER-INVALID and
// HTTP-PARAM-HEADER-NUMERIC are this file's own.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/reports"
)

var checkParamHeaderInvalid = register(&Check{
	ID:    "HTTP-PARAM-HEADER-INVALID",
	Title: "an Mcp-Param-{Name} header holding invalid characters (raw non-ASCII) is rejected: 400 and HeaderMismatch (-32020)",
	How: "2026-07-28 over Streamable HTTP. Lists the tools and takes a role's tool (not the mutation, task, flood or " +
		"listChanged role's) with a top-level string parameter marked x-mcp-header; none: SKIP. Calls it with the role's " +
		"arguments plus that parameter set to a non-ASCII value, and the Mcp-Param-{Name} header carrying the same value " +
		"as raw UTF-8 bytes (outside visible ASCII, space and tab: a client must send it Base64-encoded). The answer must " +
		"be HTTP 400 with a JSON-RPC error -32020.",
	Rules: map[string]Rule{v20260728: {Level: reports.Must, Spec: httpModern,
		Clause: "Servers MUST reject requests with a recognized Mcp-Param-{Name} header that contains invalid characters (see Value Encoding)."}},
	Transports: []string{viaHTTP},
	Clauses:    []string{"h#19"},
})

var checkParamHeaderNumeric = register(&Check{
	ID:    "HTTP-PARAM-HEADER-NUMERIC",
	Title: "an integer parameter's Mcp-Param-{Name} header is compared numerically: 42.0 matches 42",
	How: "2026-07-28 over Streamable HTTP. Lists the tools and takes a role's tool (as HTTP-PARAM-HEADER-INVALID) with a " +
		"top-level integer parameter marked x-mcp-header; none: SKIP. Calls it with the parameter set to an integer n " +
		"(42, or the schema's minimum) and the header Mcp-Param-{Name}: n.0, the spec's own example of equal values. A " +
		"HeaderMismatch (-32020) means the values were compared as strings (WARN); any other answer passes.",
	Rules: map[string]Rule{v20260728: {Level: reports.Should, Spec: httpModern,
		Clause: "When validating integer parameter values, servers SHOULD compare the header value and the body value numerically rather than as strings (e.g., 42.0 and 42 are considered equal)."}},
	Transports: []string{viaHTTP},
	Clauses:    []string{"h#24"},
})

func registerHTTPParamHeaders() {
	ginkgo.Describe("HTTP tool parameter headers (2026-07-28)", ginkgo.Label("area:http"), func() {
		define(checkParamHeaderInvalid, paramHeaderInvalid)
		define(checkParamHeaderNumeric, paramHeaderNumeric)
	})
}

// paramTarget is a role's tool with a parameter mirrored into a header.
type paramTarget struct {
	role, tool string
	args       map[string]any // the role's arguments (a copy)
	param      string         // the property's name
	header     string         // the x-mcp-header value: Mcp-Param-{header}
	schema     map[string]json.RawMessage
}

// unsafeParamRoles are the roles whose tools a header case must not call:
// their calls have effects (mutation, task, listChanged) or cost (flood).
var unsafeParamRoles = map[string]bool{"mutation": true, "task": true, "listChanged": true, "flood": true}

// findParamTarget lists the tools and returns the first role tool (roles in
// name order) with a top-level parameter of type typ carrying
// x-mcp-header; ok is false when there is none.
func findParamTarget(h *H, c *HConn, typ string) (paramTarget, bool) {
	tools := allTools(rpc{h: h, web: c, sess: c.W.Session()}.walkTools())
	roles := make([]string, 0, len(h.Target().Roles))
	for n := range h.Target().Roles {
		if !unsafeParamRoles[n] {
			roles = append(roles, n)
		}
	}
	slices.Sort(roles)
	for _, role := range roles {
		r := h.Role(role)
		for _, t := range tools {
			if r.Tool == "" || t.Name != r.Tool {
				continue
			}
			for _, p := range headerParams("", t.Def.InputSchema, 0) {
				var pt string
				_ = json.Unmarshal(p.schema["type"], &pt)
				if strings.Contains(p.path, ".") || p.header == "" || pt != typ {
					continue
				}
				args := map[string]any{}
				for k, v := range r.Arguments {
					args[k] = v
				}
				return paramTarget{role: role, tool: t.Name, args: args, param: p.path, header: p.header, schema: p.schema}, true
			}
		}
	}
	return paramTarget{}, false
}

// call POSTs a tools/call of the target's tool with its arguments plus
// param = value, the standard headers, and the Mcp-Param header set to
// header (none when omit), and reads the answer to its id.
func (p paramTarget) call(h *H, c *HConn, v string, value any, header string, omit bool) rpcAnswer {
	args := map[string]any{}
	for k, a := range p.args {
		args[k] = a
	}
	args[p.param] = value
	id := unique("param")
	body, _ := json.Marshal(request(id, "tools/call", map[string]any{"name": p.tool, "arguments": args, "_meta": modernMeta(v)}))
	hd := http.Header{"Mcp-Protocol-Version": {v}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {clients.EncodeHeaderValue(p.tool)}}
	if !omit {
		hd["Mcp-Param-"+p.header] = []string{header}
	}
	resp, raw := rawBody(h, c, body, hd)
	return parseAnswer(resp.StatusCode, answerTo(resp, raw, id))
}

func (p paramTarget) String() string {
	return fmt.Sprintf("%s's tool %s, parameter %s (Mcp-Param-%s)", p.role, p.tool, p.param, p.header)
}

// answerTo returns the JSON-RPC text of the answer to id in an HTTP reply:
// the body, or the data of the SSE event that is the response to id (other
// messages on the stream are passed over); the first event's data when no
// event answers id.
func answerTo(resp *http.Response, body []byte, id string) []byte {
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return body
	}
	want, _ := json.Marshal(id)
	for _, line := range strings.Split(string(body), "\n") {
		d, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "data:")
		if !ok {
			continue
		}
		var env struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal([]byte(d), &env) == nil && env.Method == "" && string(env.ID) == string(want) {
			return []byte(strings.TrimPrefix(d, " "))
		}
	}
	return firstJSON(resp, body)
}

// stringValue is a body value for a string parameter: its schema's first
// enum value when it has one, else def.
func (p paramTarget) stringValue(def string) string {
	var enum []string
	if json.Unmarshal(p.schema["enum"], &enum) == nil && len(enum) > 0 {
		return enum[0]
	}
	return def
}

// paramHeaderMismatch is HTTP-HEADER-MISMATCH's Mcp-Param-{Name} half: a
// header naming another value, and a header left out while the body has
// the value; each must be rejected with 400 and -32020. It returns what was
// seen and what was wrong.
func paramHeaderMismatch(h *H, c *HConn, v string) (seen, bad []string) {
	p, ok := findParamTarget(h, c, "string")
	if !ok {
		return []string{"Mcp-Param-{Name} not tried: no role tool (of a role without effects) has a top-level string parameter marked x-mcp-header"}, nil
	}
	val := p.stringValue("mcp-conform-a")
	for _, tc := range []struct {
		what   string
		header string
		omit   bool
	}{
		{what: fmt.Sprintf("Mcp-Param-%s: %s-other for body value %q", p.header, val, val), header: val + "-other"},
		{what: fmt.Sprintf("no Mcp-Param-%s header for body value %q", p.header, val), omit: true},
	} {
		a := p.call(h, c, v, val, tc.header, tc.omit)
		switch {
		case a.headerMismatch():
			seen = append(seen, tc.what+": "+a.String())
		case a.result != nil:
			bad = append(bad, fmt.Sprintf("%s, %s was run (%s)", p, tc.what, a))
		default:
			bad = append(bad, fmt.Sprintf("%s, %s got %s", p, tc.what, a))
		}
	}
	return seen, bad
}

// paramHeaderDecoded is HTTP-HEADER-DECODED's Mcp-Param-{Name} half: a
// non-ASCII value sent Base64-encoded, as a client must, matches its body
// value once decoded, so it must not be answered HeaderMismatch.
func paramHeaderDecoded(h *H, c *HConn, v string) (seen string, bad string) {
	p, ok := findParamTarget(h, c, "string")
	if !ok {
		return "Mcp-Param-{Name} not tried: no role tool (of a role without effects) has a top-level string parameter marked x-mcp-header", ""
	}
	val := p.stringValue("mcp-conform-ünïcode")
	enc := clients.EncodeHeaderValue(val)
	a := p.call(h, c, v, val, enc, false)
	if a.err != nil && a.err.Code == jsonrpc.CodeHeaderMismatch {
		return "", fmt.Sprintf("%s with %q and Mcp-Param-%s: %s (the same value, encoded as a client must) got %s: the header was compared undecoded", p, val, p.header, enc, a)
	}
	return fmt.Sprintf("Mcp-Param-%s: %s: %s", p.header, enc, a), ""
}

func paramHeaderInvalid(h *H) {
	c, v := modernHTTP(h)
	p, ok := findParamTarget(h, c, "string")
	if !ok {
		h.Skip("no role tool (of a role without effects) has a top-level string parameter marked x-mcp-header")
	}
	if p.stringValue("") != "" {
		h.Skip(fmt.Sprintf("%s takes an enum: no value with invalid characters can be in its body", p))
	}
	const val = "mcp-conform-ünïcode" // raw UTF-8 in a header: bytes outside 0x20-0x7E
	a := p.call(h, c, v, val, val, false)
	switch {
	case a.headerMismatch():
	case a.result != nil:
		h.Failf("%s with Mcp-Param-%s holding raw non-ASCII bytes (%q) was run (%s), want HTTP 400 with HeaderMismatch (-32020)", p, p.header, val, a)
	default:
		h.Failf("%s with Mcp-Param-%s holding raw non-ASCII bytes (%q) got %s, want HTTP 400 with HeaderMismatch (-32020)", p, p.header, val, a)
	}
	h.Notef("%s: raw %q: %s", p, val, a)
}

func paramHeaderNumeric(h *H) {
	c, v := modernHTTP(h)
	p, ok := findParamTarget(h, c, "integer")
	if !ok {
		h.Skip("no role tool (of a role without effects) has a top-level integer parameter marked x-mcp-header")
	}
	n := int64(42)
	var lo, hi *float64
	_ = json.Unmarshal(p.schema["minimum"], &lo)
	_ = json.Unmarshal(p.schema["maximum"], &hi)
	if (lo != nil && float64(n) < *lo) || (hi != nil && float64(n) > *hi) {
		if lo == nil {
			h.Skip(fmt.Sprintf("%s: its schema's bounds leave no obvious integer to send", p))
		}
		n = int64(*lo)
		if float64(n) < *lo {
			n++
		}
	}
	header := fmt.Sprintf("%d.0", n)
	a := p.call(h, c, v, n, header, false)
	if a.err != nil && a.err.Code == jsonrpc.CodeHeaderMismatch {
		h.Failf("%s with %d and Mcp-Param-%s: %s got %s: the values were compared as strings, not numerically", p, n, p.header, header, a)
	}
	h.Notef("%s: %d with header %s: %s", p, n, header, a)
}

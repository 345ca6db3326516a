package suites

// HTTP-RESPONSE-CONTENT-TYPE: a POST carrying a JSON-RPC request is
// answered with Content-Type application/json or text/event-stream (2025
// transports.mdx, "Sending Messages to the Server" 5; 2026-07-28
// streamable-http.mdx, the same section, 6).

import (
	"fmt"
	"mime"
	"net/http"
	"strings"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/reports"
)

var checkResponseContentType = register(&Check{
	ID:    "HTTP-RESPONSE-CONTENT-TYPE",
	Title: "a POST carrying a request is answered with Content-Type application/json or text/event-stream",
	How: "Over Streamable HTTP, every version. Sends a few requests and reads the head of each answer: in 2025 an initialize " +
		"(a new session), ping and tools/list in the session; in 2026-07-28 server/discover and tools/list; in both, when the " +
		"manifest declares the slow role, its tools/call. Each answer with a 2xx status must carry Content-Type " +
		"application/json or text/event-stream (parameters and case aside); any other media type, or none, FAILs, even when " +
		"the body is a JSON-RPC answer a client could read.",
	Rules: merge(
		sameRule(Rule{Level: reports.Must, Spec: httpLegacy,
			Clause: "If the input is a JSON-RPC request, the server MUST either return Content-Type: text/event-stream, to initiate an SSE stream, or Content-Type: application/json, to return one JSON object."},
			legacyVersions...),
		map[string]Rule{v20260728: {Level: reports.Must, Spec: httpModern,
			Clause: "If the body is a JSON-RPC request, the server MUST return either Content-Type: application/json (a single JSON object) or Content-Type: text/event-stream (an SSE response stream)."}},
	),
	Transports: []string{viaHTTP},
	Clauses:    []string{"tr#10", "h#7"},
	Limits: map[string]string{
		"tr#10": contentTypeLimit,
		"h#7":   contentTypeLimit,
	},
})

const contentTypeLimit = "judged on the answers to a few requests (initialize or server/discover, ping, tools/list, the slow role's call); an answer with an error status is not judged"

// answerHead is the status and Content-Type an answer to a request came with.
type answerHead struct {
	what   string
	status int
	ct     string
}

// ok reports whether the head keeps the sentence: an error status is not
// judged; a 2xx must name one of the two media types.
func (a answerHead) ok() bool {
	if a.status < 200 || a.status > 299 {
		return true
	}
	mt, _, err := mime.ParseMediaType(a.ct)
	return err == nil && (mt == "application/json" || mt == "text/event-stream")
}

func (a answerHead) String() string {
	ct := fmt.Sprintf("%q", a.ct)
	if a.ct == "" {
		ct = "none"
	}
	return fmt.Sprintf("%s: HTTP %d, Content-Type %s", a.what, a.status, ct)
}

func responseContentType(h *H) {
	c := h.ConnectHTTP()
	var heads []answerHead
	if c.W.Session().Era == clients.EraLegacy {
		v := h.Version()
		line := []byte(mustJSON(map[string]any{"jsonrpc": "2.0", "id": unique("ct-init"), "method": "initialize", "params": map[string]any{
			"protocolVersion": v, "capabilities": map[string]any{},
			"clientInfo": map[string]any{"name": "mcp-conform", "version": clients.DefaultClientVersion},
		}}))
		resp, _ := rawBody(h, c, line, http.Header{})
		heads = append(heads, answerHead{"initialize (a new session)", resp.StatusCode, resp.Header.Get("Content-Type")})
		heads = append(heads, headOf(h, c, "ping", nil))
	} else {
		heads = append(heads, headOf(h, c, "server/discover", nil))
	}
	heads = append(heads, headOf(h, c, "tools/list", nil))
	if h.Role("slow").Tool != "" {
		call := c.StartRole("slow", jsonrpc.StringID(unique("ct-slow")), nil, nil)
		c.Await(call, "the slow role's tools/call")
		heads = append(heads, answerHead{"tools/call of the slow role", call.Status(), call.Header().Get("Content-Type")})
	}
	var bad, seen []string
	for _, a := range heads {
		seen = append(seen, a.String())
		if !a.ok() {
			bad = append(bad, a.String())
		}
	}
	if len(bad) > 0 {
		h.Failf("a request answered with a 2xx status but a Content-Type that is neither application/json nor text/event-stream: %s", strings.Join(bad, "; "))
	}
	h.Notef("%s", strings.Join(seen, "; "))
}

// headOf sends method on c and waits for its answer (within the exchange
// timeout), returning the head it came with.
func headOf(h *H, c *HConn, method string, params map[string]any) answerHead {
	ctx, cancel := h.Op()
	defer cancel()
	call, err := c.W.Start(h.Ctx(), jsonrpc.StringID(unique("ct")), method, params)
	if err != nil {
		h.FailServer("%s: %v%s", method, err, c.ExitHint())
	}
	if _, err := call.Wait(ctx); err != nil {
		h.FailServer("%s: no answer: %v%s", method, err, c.ExitHint())
	}
	return answerHead{method, call.Status(), call.Header().Get("Content-Type")}
}

package suites

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/reports"
)

const (
	basicLegacy  = "specification/VERSION/basic/index.mdx"
	changelog618 = "specification/2025-06-18/changelog.mdx"
)

// The JSON-RPC sentences the bad-input checks rest on.
const (
	jsonrpcMust = "All messages between MCP clients and servers MUST follow the JSON-RPC 2.0 specification."
	// httpRejectLegacy and httpRejectModern are the HTTP rule for input
	// the server cannot accept.
	httpRejectLegacy = "If the server cannot accept the input, it MUST return an HTTP error status code (e.g., 400 Bad Request)."
	httpRejectModern = "If the server cannot accept it, it MUST return an HTTP error status code (e.g., 400 Bad Request)."
	basicModernPage  = "specification/2026-07-28/basic/index.mdx"
)

var (
	checkParseError = register(&Check{
		ID:    "ROBUST-PARSE-ERROR",
		Title: "a message that is not JSON gets a parse error, and the server lives on",
		How: "stdio: writes a line that is not JSON and expects a JSON-RPC error -32700 with id null (JSON-RPC 2.0's parse " +
			"error), then the server must answer the barrier request. HTTP: POSTs a body that is not JSON and expects an HTTP " +
			"error status, then the barrier.",
		Rules: merge(
			sameRule(Rule{Level: reports.Must, Spec: basicLegacy, Also: []string{transportLegacy},
				Clause: jsonrpcMust + " [JSON-RPC 2.0: invalid JSON gets the error -32700 with id null] [transports.mdx, HTTP] " + httpRejectLegacy},
				legacyVersions...),
			map[string]Rule{"2026-07-28": {Level: reports.Must, Spec: basicModernPage, Also: []string{httpModern},
				Clause: jsonrpcMust + " [JSON-RPC 2.0: invalid JSON gets the error -32700 with id null] [streamable-http.mdx] " + httpRejectModern}},
		),
		Transports: []string{"stdio", "http", "websocket"},
	})
	checkUnknownMethod = register(&Check{
		ID:    "ROBUST-UNKNOWN-METHOD",
		Title: "an unknown method gets the JSON-RPC error -32601 (over HTTP too, not a bare status)",
		How:   "Sends a request for the method mcp-conform/no-such-method and expects a JSON-RPC error response with code -32601 in the body.",
		Rules: merge(
			sameRule(Rule{Level: reports.Must, Spec: basicLegacy,
				Clause: jsonrpcMust + " [JSON-RPC 2.0: a request gets a response; an unknown method gets the error -32601 Method not found]"},
				legacyVersions...),
			map[string]Rule{"2026-07-28": {Level: reports.Must, Spec: basicModernPage,
				Clause: jsonrpcMust + " [JSON-RPC 2.0: a request gets a response; an unknown method gets the error -32601 Method not found]"}},
		),
		On: map[string]map[string]Rule{"http": {"2026-07-28": {Level: reports.Must, Spec: httpModern, Also: []string{basicModernPage},
			Clause: "If the server does not implement the requested RPC method, it MUST respond with 404 Not Found and a JSON-RPC error with code -32601 (Method not found)."}}},
		Transports: []string{"stdio", "http", "websocket"},
	})
	checkBatch = register(&Check{
		ID:    "ROBUST-BATCH-REJECTED",
		Title: "a JSON-RPC batch (removed in 2025-06-18) is not processed",
		How: "Sends a JSON array of two tools/list requests; the server should not answer them as a batch (results for their " +
			"ids): batching left the protocol in 2025-06-18, but no sentence binds the server to refuse one, so processing it " +
			"WARNs (mcp-conform's reading). On stdio, an answer that is itself a JSON array is not a valid MCP message on stdout: " +
			"that MUST NOT FAILs. An error (or, over HTTP, an error status) is the expected answer; silence is tolerated and noted.",
		Rules: merge(
			sameRule(Rule{Level: reports.Should, Spec: changelog618, Source: reports.SourceReading, Also: []string{transportLegacy},
				Clause: "Remove support for JSON-RPC batching (2025-06-18 changelog) — mcp-conform's reading: a server no longer processes a batch. [stdio] \"The server MUST NOT write anything to its stdout that is not a valid MCP message\": an array of replies is not one."},
				legacyVersions...),
			map[string]Rule{"2026-07-28": {Level: reports.Should, Spec: changelog618, Source: reports.SourceReading, Also: []string{stdioModern},
				Clause: "Remove support for JSON-RPC batching (2025-06-18 changelog); \"Each message is a single JSON-RPC request, notification, or response\" (stdio.mdx) — mcp-conform's reading: a server does not process a batch. [stdio] \"The server MUST NOT write anything to its stdout that is not a valid MCP message\": an array of replies is not one."}},
		),
		Transports: []string{"stdio", "http", "websocket"},
	})
	checkStdoutClean = register(&Check{
		ID:    "ROBUST-STDOUT-CLEAN",
		Title: "the server writes nothing but MCP messages on stdout",
		How:   "Starts the server, lists its tools and sends the barrier request, then looks at every line the server wrote on stdout: each must be a JSON-RPC message.",
		Rules: merge(
			sameRule(Rule{Level: reports.Must, Spec: "specification/VERSION/basic/transports.mdx",
				Clause: "The server MUST NOT write anything to its stdout that is not a valid MCP message."}, legacyVersions...),
			map[string]Rule{"2026-07-28": {Level: reports.Must, Spec: stdioModern,
				Clause: "The server MUST NOT write anything to its stdout that is not a valid MCP message."}},
		),
		Transports: []string{"stdio"},
	})
)

func registerRobust() {
	ginkgo.Describe("ROBUST", ginkgo.Label("area:robust"), func() {
		define(checkParseError, parseError)
		define(checkUnknownMethod, unknownMethod)
		define(checkBatch, batchRejected)
		define(checkStdoutClean, stdoutClean)
	})
}

// onTransport runs the stdio or the HTTP body of a check.
func onTransport(h *H, stdio func(*Conn), web func(*HConn)) {
	if h.target.Transport == "http" {
		web(h.ConnectHTTP())
		return
	}
	stdio(h.Connect())
}

// request builds a JSON-RPC request object; nil params are left out (JSON-RPC
// allows an object or an array there, not null).
func request(id, method string, params map[string]any) map[string]any {
	r := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		r["params"] = params
	}
	return r
}

// modernParams returns params with the per-request _meta of 2026-07-28
// when the session is modern (raw messages get no injection).
func modernParams(s clients.Session, params map[string]any) map[string]any {
	if s.Era != clients.EraModern {
		return params
	}
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = modernMeta(s.Version)
	return params
}

func parseError(h *H) {
	const bad = `{"jsonrpc":"2.0","id":"parse-1","method":"tools/list"`
	onTransport(h, func(c *Conn) {
		from := c.W.Len()
		c.SendRaw(bad)
		c.Ping("after a line that is not JSON")
		m, ok := c.WaitFirst(from, h.cfg.OpTimeout, func(m clients.Message) bool { return m.Env.Kind == jsonrpc.ErrorReply })
		switch {
		case !ok:
			h.Failf("no reply to a line that is not JSON (want a JSON-RPC error -32700 with id null)")
		case m.Env.Error == nil || m.Env.Error.Code != -32700:
			h.Failf("the parse error was answered with %s (want code -32700)", m.Raw)
		case m.Env.ID != "null":
			h.Failf("the parse error's id is %s (want null): %s", m.Env.ID, m.Raw)
		}
	}, func(c *HConn) {
		hd := sessionHeaders(c, c.W.SessionID())
		if c.W.Session().Era == clients.EraModern {
			hd["Mcp-Method"] = []string{"tools/list"}
		}
		resp, body := rawBody(h, c, []byte(bad), hd)
		if resp.StatusCode < 400 || resp.StatusCode > 499 {
			h.Failf("a body that is not JSON got HTTP %d, want a 4xx error status: %s", resp.StatusCode, clip(body))
		}
		c.Ping("after a body that is not JSON")
	})
}

func unknownMethod(h *H) {
	const method = "mcp-conform/no-such-method"
	check := func(raw []byte, status string) {
		env := jsonrpc.Parse(raw)
		if env.Kind != jsonrpc.ErrorReply || env.Error == nil {
			h.Failf("unknown method %s was answered%s with %q, not a JSON-RPC error", method, status, clip(raw))
		}
		if env.Error.Code != -32601 {
			h.Failf("unknown method answered with code %d (want -32601): %s", env.Error.Code, clip(raw))
		}
	}
	onTransport(h, func(c *Conn) {
		ctx, cancel := h.op()
		defer cancel()
		m, err := c.W.Call(ctx, method, nil)
		if err != nil {
			h.failServer("no answer to an unknown method: %v%s", err, c.exitHint())
		}
		check(m.Raw, "")
		c.Ping("after the unknown method")
	}, func(c *HConn) {
		hd := sessionHeaders(c, c.W.SessionID())
		if c.W.Session().Era == clients.EraModern {
			hd["Mcp-Method"] = []string{method}
		}
		body, _ := json.Marshal(request("unknown-1", method, modernParams(c.W.Session(), nil)))
		resp, raw := rawBody(h, c, body, hd)
		check(firstJSON(resp, raw), fmt.Sprintf(" (HTTP %d, %s)", resp.StatusCode, resp.Header.Get("Content-Type")))
		c.Ping("after the unknown method")
	})
}

// firstJSON returns the JSON-RPC text of an HTTP answer: the body, or the
// data of its first SSE event carrying data.
func firstJSON(resp *http.Response, body []byte) []byte {
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return body
	}
	for _, line := range strings.Split(string(body), "\n") {
		if d, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "data:"); ok && strings.TrimSpace(d) != "" {
			return []byte(strings.TrimPrefix(d, " "))
		}
	}
	return body
}

func batchRejected(h *H) {
	batch := func(s clients.Session) []byte {
		b, _ := json.Marshal([]any{
			request("batch-1", "tools/list", modernParams(s, nil)),
			request("batch-2", "tools/list", modernParams(s, nil)),
		})
		return b
	}
	judge := func(raw []byte, what string) {
		env := jsonrpc.Parse(raw)
		switch {
		case env.Kind == jsonrpc.Batch && h.target.Transport == "stdio":
			var arr []json.RawMessage
			_ = json.Unmarshal(raw, &arr)
			h.failMust("the batch was processed: answered with an array of %d replies (%d bytes) on stdout, which is not a valid MCP message (the stdio transport MUST NOT carry one)", len(arr), len(raw))
		case env.Kind == jsonrpc.Batch:
			var arr []json.RawMessage
			_ = json.Unmarshal(raw, &arr)
			h.Failf("the batch was processed: answered with an array of %d replies (%d bytes)", len(arr), len(raw))
		case env.Kind == jsonrpc.Response && (env.ID == jsonrpc.StringID("batch-1") || env.ID == jsonrpc.StringID("batch-2")):
			h.Failf("an element of the batch was processed: %s", clip(raw))
		case env.Kind == jsonrpc.ErrorReply:
		default:
			h.Notef("the batch got no JSON-RPC error (%s); not processed, which is what counts", what)
		}
	}
	onTransport(h, func(c *Conn) {
		from := c.W.Len()
		c.SendRaw(string(batch(c.W.Session())))
		c.Ping("after a batch")
		if m, ok := c.WaitFirst(from, h.cfg.OpTimeout, func(m clients.Message) bool {
			id := m.Env.ID
			return m.Env.Kind == jsonrpc.Batch || m.Env.Kind.IsReply() &&
				(id == "null" || id == jsonrpc.StringID("batch-1") || id == jsonrpc.StringID("batch-2"))
		}); ok {
			judge(m.Raw, "")
		} else {
			judge(nil, "no reply")
		}
	}, func(c *HConn) {
		hd := sessionHeaders(c, c.W.SessionID())
		if c.W.Session().Era == clients.EraModern {
			hd["Mcp-Method"] = []string{"tools/list"}
		}
		resp, body := rawBody(h, c, batch(c.W.Session()), hd)
		if resp.StatusCode >= 400 {
			h.Notef("rejected with HTTP %d", resp.StatusCode)
		} else {
			judge(firstJSON(resp, body), fmt.Sprintf("HTTP %d", resp.StatusCode))
		}
		c.Ping("after a batch")
	})
}

func stdoutClean(h *H) {
	c := h.Connect()
	ctx, cancel := h.op()
	defer cancel()
	if _, err := c.W.Call(ctx, "tools/list", nil); err != nil {
		h.failServer("tools/list: %v%s", err, c.exitHint())
	}
	c.Ping("after tools/list")
	if stray := h.strayOutput(); stray != "" {
		h.Failf("%s", stray)
	}
}

// rawBody POSTs exactly body with these headers (plus JSON content type and
// accept) and returns the answer.
func rawBody(h *H, c *HConn, body []byte, header http.Header) (*http.Response, []byte) {
	hd := http.Header{
		"Content-Type": {"application/json"},
		"Accept":       {"application/json, text/event-stream"},
	}
	for k, v := range header {
		hd[k] = v
	}
	ctx, cancel := h.op()
	defer cancel()
	resp, b, err := c.W.RawPOST(ctx, body, hd)
	if err != nil {
		h.failServer("POST failed: %v%s", err, c.exitHint())
	}
	return resp, b
}

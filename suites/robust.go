package suites

// ROBUST, malformed and unknown input: what a server answers to a request it cannot take.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/protocol"
	"github.com/mcp-conform/mcp-conform/reports"
)

var checkParseError = register(&Check{
	ID:    "ROBUST-PARSE-ERROR",
	Title: "a message that is not JSON gets a parse error, and the server lives on",
	How: "stdio: writes a line that is not JSON and expects a JSON-RPC error -32700 with id null (JSON-RPC 2.0's parse " +
		"error), then the server must answer the barrier request. HTTP: POSTs a body that is not JSON and expects an HTTP " +
		"error status, then the barrier.",
	Rules: merge(
		sameRule(Rule{Level: reports.Must, Spec: basicLegacy, Also: []string{transportLegacy},
			Clause: jsonrpcMust + " [JSON-RPC 2.0: invalid JSON gets the error -32700 with id null] [transports.mdx, HTTP] " + httpRejectLegacy},
			legacyVersions...),
		map[string]Rule{v20260728: {Level: reports.Must, Spec: basicModernPage, Also: []string{httpModern},
			Clause: jsonrpcMust + " [JSON-RPC 2.0: invalid JSON gets the error -32700 with id null] [streamable-http.mdx] " + httpRejectModern}},
	),
	Transports: []string{viaStdio, viaHTTP, viaWebSocket},
})

var checkInvalidRequest = register(&Check{
	ID:    "ROBUST-INVALID-REQUEST",
	Title: "an invalid request object gets -32600 (over HTTP an error status), and the server lives on",
	How: "Sends two request objects that are valid JSON but not valid JSON-RPC requests — one without a method, one " +
		"whose jsonrpc is \"1.0\". stdio: each must get a JSON-RPC error -32600 (with its id, or null). HTTP: each POST " +
		"must get a 4xx status. The barrier request must be answered after each.",
	Rules: merge(
		sameRule(Rule{Level: reports.Must, Spec: basicLegacy, Also: []string{transportLegacy},
			Clause: jsonrpcMust + " [JSON-RPC 2.0: a request object without a method, or whose jsonrpc is not exactly \"2.0\", gets the error -32600 Invalid Request] [transports.mdx, HTTP] " + httpRejectLegacy},
			legacyVersions...),
		map[string]Rule{v20260728: {Level: reports.Must, Spec: basicModern, Also: []string{httpModern},
			Clause: jsonrpcMust + " [JSON-RPC 2.0: a request object without a method, or whose jsonrpc is not exactly \"2.0\", gets the error -32600 Invalid Request] [streamable-http.mdx] " + httpRejectModern}},
	),
	Transports: []string{viaStdio, viaHTTP},
})

var checkUnknownMethod = register(&Check{
	ID:    "ROBUST-UNKNOWN-METHOD",
	Title: "an unknown method gets the JSON-RPC error -32601 (over HTTP too, not a bare status)",
	How:   "Sends a request for the method mcp-conform/no-such-method and expects a JSON-RPC error response with code -32601 in the body.",
	Rules: merge(
		sameRule(Rule{Level: reports.Must, Spec: basicLegacy,
			Clause: jsonrpcMust + " [JSON-RPC 2.0: a request gets a response; an unknown method gets the error -32601 Method not found]"},
			legacyVersions...),
		map[string]Rule{v20260728: {Level: reports.Must, Spec: basicModernPage,
			Clause: jsonrpcMust + " [JSON-RPC 2.0: a request gets a response; an unknown method gets the error -32601 Method not found]"}},
	),
	On: map[string]map[string]Rule{viaHTTP: {v20260728: {Level: reports.Must, Spec: httpModern, Also: []string{basicModernPage},
		Clause: "If the server does not implement the requested RPC method, it MUST respond with 404 Not Found and a JSON-RPC error with code -32601 (Method not found)."}}},
	Transports: []string{viaStdio, viaHTTP, viaWebSocket},
})

var checkInvalidParams = register(&Check{
	ID:    "ROBUST-INVALID-PARAMS",
	Title: "a tools/call whose arguments are not an object gets the JSON-RPC error -32602",
	How: "Lists the tools, then calls the first one with arguments that are a string instead of an object (a request " +
		"that fails the CallToolRequest schema). The answer must be a JSON-RPC error with code -32602, not a result; " +
		"then the barrier request.",
	Rules: merge(
		sameRule(Rule{Level: reports.Should, Spec: toolsLegacy, Source: reports.SourceReading,
			Clause: "Protocol Errors: Standard JSON-RPC errors for issues like: [...] Malformed requests (requests that fail to satisfy CallToolRequest schema) — for invalid method parameters JSON-RPC's code is -32602. tools.mdx states this classification without an RFC 2119 keyword: mcp-conform's reading, WARN at most (a server that dies on it FAILs regardless)."},
			legacyVersions...),
		map[string]Rule{v20260728: {Level: reports.Should, Spec: toolsModern, Source: reports.SourceReading,
			Clause: "Protocol Errors indicate issues with the request structure itself [...] Malformed requests (requests that fail to satisfy CallToolRequest schema) — for invalid params JSON-RPC's code is -32602. No RFC 2119 keyword: mcp-conform's reading, WARN at most (a server that dies on it FAILs regardless)."}},
	),
	Transports: []string{viaStdio, viaHTTP},
})

var checkUnknownTool = register(&Check{
	ID:    "ROBUST-UNKNOWN-TOOL",
	Title: "a tools/call naming an unknown tool gets the JSON-RPC error -32602, not a tool result",
	How:   "Calls the tool mcp-conform-no-such-tool; the answer must be a JSON-RPC error with code -32602 (not a result with isError), then the barrier request.",
	Rules: merge(
		sameRule(Rule{Level: reports.Should, Spec: toolsLegacy, Source: reports.SourceReading,
			Clause: "Protocol Errors: Standard JSON-RPC errors for issues like: Unknown tools [...] Example protocol error: {\"code\": -32602, \"message\": \"Unknown tool: invalid_tool_name\"}. Stated without an RFC 2119 keyword: mcp-conform's reading, WARN at most (a server that dies on it FAILs regardless)."},
			legacyVersions...),
		map[string]Rule{v20260728: {Level: reports.Should, Spec: toolsModern, Source: reports.SourceReading,
			Clause: "Protocol Errors indicate issues with the request structure itself [...]: Unknown tool [...] {\"code\": -32602, \"message\": \"Unknown tool: invalid_tool_name\"}. Stated without an RFC 2119 keyword: mcp-conform's reading, WARN at most (a server that dies on it FAILs regardless)."}},
	),
	Transports: []string{viaStdio, viaHTTP},
})

var checkBatch = register(&Check{
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
		map[string]Rule{v20260728: {Level: reports.Should, Spec: changelog618, Source: reports.SourceReading, Also: []string{stdioModern},
			Clause: "Remove support for JSON-RPC batching (2025-06-18 changelog); \"Each message is a single JSON-RPC request, notification, or response\" (stdio.mdx) — mcp-conform's reading: a server does not process a batch. [stdio] \"The server MUST NOT write anything to its stdout that is not a valid MCP message\": an array of replies is not one."}},
	),
	Transports: []string{viaStdio, viaHTTP, viaWebSocket},
})

func registerRobust() {
	ginkgo.Describe("ROBUST", ginkgo.Label("area:robust"), func() {
		define(checkParseError, parseError)
		define(checkUnknownMethod, unknownMethod)
		define(checkBatch, batchRejected)
		define(checkStdoutClean, stdoutClean)
	})
}

func registerRobustInput() {
	ginkgo.Describe("ROBUST input", ginkgo.Label("area:robust"), func() {
		define(checkInvalidRequest, invalidRequest)
		define(checkInvalidParams, invalidParams)
		define(checkUnknownTool, unknownTool)
		define(checkOversize, oversize)
		define(checkInvalidUTF8, invalidUTF8)
		define(checkDuplicateID, duplicateID)
		define(checkIDEcho, idEcho)
		define(checkStrayResponse, strayResponse)
	})
}

// onTransport runs the stdio or the HTTP body of a check.
func onTransport(h *H, stdio func(*Conn), web func(*HConn)) {
	if h.Target().Via() == protocol.TransportHTTP {
		web(h.ConnectHTTP())
		return
	}
	stdio(h.Connect())
}

// rpc is a connection of either transport as the bad-input checks use it.
type rpc struct {
	h    *H
	s    *Conn
	web  *HConn
	sess clients.Session
}

// onEither connects to the target on its transport and runs body with the
// connection.
func onEither(h *H, body func(r rpc)) {
	onTransport(h, func(c *Conn) {
		body(rpc{h: h, s: c, sess: c.W.Session()})
	}, func(c *HConn) {
		body(rpc{h: h, web: c, sess: c.W.Session()})
	})
}

// call sends a request with a fresh id and waits up to d for its reply; a
// server that gives none fails the check.
func (r rpc) call(method string, params map[string]any, d time.Duration) clients.Message {
	m, err := r.try(method, params, d)
	if err != nil {
		r.h.FailServer("%v", err)
	}
	return m
}

// try sends a request with a fresh id and waits up to d for its reply; the
// error says which id got none.
func (r rpc) try(method string, params map[string]any, d time.Duration) (clients.Message, error) {
	ctx, cancel := context.WithTimeout(r.h.Ctx(), d)
	defer cancel()
	var (
		m   clients.Message
		id  jsonrpc.ID
		err error
	)
	if r.s != nil {
		id = r.s.W.NewID()
		var p *clients.Pending
		if p, err = r.s.W.Start(ctx, id, method, params); err == nil {
			m, err = p.Wait(ctx)
		}
	} else {
		id = r.web.W.NewID()
		var c *clients.HTTPCall
		if c, err = r.web.W.Start(ctx, id, method, params); err == nil {
			m, err = c.Wait(ctx)
		}
	}
	if err != nil {
		return m, fmt.Errorf("no response for id %s (%s): %v%s", id, method, err, r.hint())
	}
	return m, nil
}

// ping sends the era's barrier request and fails the check when the
// server does not answer it.
func (r rpc) ping(why string) {
	if r.s != nil {
		r.s.Ping(why)
	} else {
		r.web.Ping(why)
	}
}

// hint says how the server ended, when it has.
func (r rpc) hint() string {
	if r.s != nil {
		return r.s.ExitHint()
	}
	return r.web.ExitHint()
}

// firstTool returns the name of the first tool the server lists, or skips.
func (r rpc) firstTool() string {
	name, why := r.listedTool()
	if name == "" {
		r.h.Skip(why)
	}
	return name
}

// listedTool returns the name of the first tool the server lists, or ""
// and why there is none.
func (r rpc) listedTool() (name, why string) {
	m := r.call("tools/list", nil, r.h.Cfg().OpTimeout)
	var res struct {
		Result struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"result"`
	}
	switch {
	case m.Env.Kind != jsonrpc.Response:
		return "", fmt.Sprintf("tools/list answered %s: the server lists no tool to call", clip(m.Raw))
	case json.Unmarshal(m.Raw, &res) != nil || len(res.Result.Tools) == 0 || res.Result.Tools[0].Name == "":
		return "", "the server lists no tools"
	}
	return res.Result.Tools[0].Name, ""
}

// rawLine marshals a request with id, method and params (with the modern
// _meta when the session is modern); each placeholder string in it is then
// replaced by its raw bytes.
func (r rpc) rawLine(id, method string, params map[string]any, replace map[string]string) []byte {
	b, err := json.Marshal(request(id, method, modernParams(r.sess, params)))
	if err != nil {
		r.h.Errorf("marshal %s: %v", method, err)
	}
	for from, to := range replace {
		b = bytes.ReplaceAll(b, []byte(from), []byte(to))
	}
	return b
}

// postRaw POSTs body with the session's headers (and Mcp-Method/Mcp-Name
// in the modern era when method/name are not "") within d.
func (r rpc) postRaw(body []byte, method, name string, d time.Duration) (*http.Response, []byte) {
	hd := sessionHeaders(r.web, r.web.W.SessionID())
	if r.sess.Era == clients.EraModern {
		if method != "" {
			hd["Mcp-Method"] = []string{method}
		}
		if name != "" {
			hd["Mcp-Name"] = []string{clients.EncodeHeaderValue(name)}
		}
	}
	hd["Content-Type"] = []string{"application/json"}
	hd["Accept"] = []string{"application/json, text/event-stream"}
	ctx, cancel := context.WithTimeout(r.h.Ctx(), d)
	defer cancel()
	resp, b, err := r.web.W.RawPOST(ctx, body, hd)
	if err != nil {
		r.h.FailServer("POST failed: %v%s", err, r.hint())
	}
	return resp, b
}

// replyTo matches a reply whose id is one of ids, or null.
func replyTo(ids ...jsonrpc.ID) func(clients.Message) bool {
	return func(m clients.Message) bool {
		if !m.Env.Kind.IsReply() {
			return false
		}
		if m.Env.ID == "null" {
			return true
		}
		for _, id := range ids {
			if m.Env.ID == id {
				return true
			}
		}
		return false
	}
}

func parseError(h *H) {
	const bad = `{"jsonrpc":"2.0","id":"parse-1","method":"tools/list"`
	onTransport(h, func(c *Conn) {
		from := c.W.Len()
		c.SendRaw(bad)
		c.Ping("after a line that is not JSON")
		m, ok := c.WaitFirst(from, h.Cfg().OpTimeout, func(m clients.Message) bool { return m.Env.Kind == jsonrpc.ErrorReply })
		switch {
		case !ok:
			h.Failf("no reply to a line that is not JSON (want a JSON-RPC error -32700 with id null)")
		case m.Env.Error == nil || m.Env.Error.Code != jsonrpc.CodeParseError:
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

func invalidRequest(h *H) {
	probes := []struct{ id, what, line string }{
		{"invalid-1", "a request object without a method", `{"jsonrpc":"2.0","id":"invalid-1"}`},
		{"invalid-2", `a request whose jsonrpc is "1.0"`, `{"jsonrpc":"1.0","id":"invalid-2","method":"tools/list"}`},
	}
	onEither(h, func(r rpc) {
		for _, p := range probes {
			if r.s != nil {
				from := r.s.W.Len()
				r.s.SendRaw(p.line)
				r.ping("after " + p.what)
				m, ok := r.s.WaitFirst(from, h.Cfg().OpTimeout, replyTo(jsonrpc.StringID(p.id)))
				switch {
				case !ok:
					h.Failf("no reply to %s %s (want a JSON-RPC error -32600)", p.what, p.line)
				case m.Env.Kind != jsonrpc.ErrorReply:
					h.Failf("%s was processed, not rejected: %s (want a JSON-RPC error -32600)", p.what, clip(m.Raw))
				case m.Env.Error == nil || m.Env.Error.Code != jsonrpc.CodeInvalidRequest:
					h.Failf("%s was answered with %s (want code -32600)", p.what, clip(m.Raw))
				}
				continue
			}
			resp, body := r.postRaw([]byte(p.line), "tools/list", "", h.Cfg().OpTimeout)
			if resp.StatusCode < 400 || resp.StatusCode > 499 {
				h.Failf("%s got HTTP %d, want a 4xx error status: %s", p.what, resp.StatusCode, clip(body))
			}
			if env := jsonrpc.Parse(firstJSON(resp, body)); env.Kind == jsonrpc.ErrorReply && env.Error != nil && env.Error.Code != jsonrpc.CodeInvalidRequest {
				h.Notef("%s: HTTP %d with JSON-RPC error code %d (JSON-RPC names -32600)", p.what, resp.StatusCode, env.Error.Code)
			}
			r.ping("after " + p.what)
		}
	})
}

// judgeError fails unless m is a JSON-RPC error with code want.
func judgeError(h *H, m clients.Message, what string, want int) {
	switch {
	case m.Env.Kind == jsonrpc.Response:
		h.Failf("%s was answered with a result, not a JSON-RPC error %d: %s", what, want, clip(m.Raw))
	case m.Env.Kind != jsonrpc.ErrorReply || m.Env.Error == nil:
		h.Failf("%s was answered with %s, not a JSON-RPC error %d", what, clip(m.Raw), want)
	case m.Env.Error.Code != want:
		h.Failf("%s was answered with code %d (want %d): %s", what, m.Env.Error.Code, want, clip(m.Raw))
	}
}

func unknownMethod(h *H) {
	const method = "mcp-conform/no-such-method"
	check := func(raw []byte, status string) {
		env := jsonrpc.Parse(raw)
		if env.Kind != jsonrpc.ErrorReply || env.Error == nil {
			h.Failf("unknown method %s was answered%s with %q, not a JSON-RPC error", method, status, clip(raw))
		}
		if env.Error.Code != jsonrpc.CodeMethodNotFound {
			h.Failf("unknown method answered with code %d (want -32601): %s", env.Error.Code, clip(raw))
		}
	}
	onTransport(h, func(c *Conn) {
		ctx, cancel := h.Op()
		defer cancel()
		m, err := c.W.Call(ctx, method, nil)
		if err != nil {
			h.FailServer("no answer to an unknown method: %v%s", err, c.ExitHint())
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

func invalidParams(h *H) {
	onEither(h, func(r rpc) {
		tool := r.firstTool()
		m := r.call("tools/call", map[string]any{"name": tool, "arguments": "mcp-conform: not an object"}, h.Cfg().OpTimeout)
		judgeError(h, m, fmt.Sprintf("tools/call %s with arguments that are a string", tool), -32602)
		r.ping("after invalid params")
	})
}

func unknownTool(h *H) {
	const tool = "mcp-conform-no-such-tool"
	onEither(h, func(r rpc) {
		m := r.call("tools/call", map[string]any{"name": tool, "arguments": map[string]any{}}, h.Cfg().OpTimeout)
		judgeError(h, m, "tools/call of the unknown tool "+tool, -32602)
		r.ping("after an unknown tool")
	})
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
		case env.Kind == jsonrpc.Batch && h.Target().Via() == protocol.TransportStdio:
			var arr []json.RawMessage
			_ = json.Unmarshal(raw, &arr)
			h.FailMust("the batch was processed: answered with an array of %d replies (%d bytes) on stdout, which is not a valid MCP message (the stdio transport MUST NOT carry one)", len(arr), len(raw))
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
		if m, ok := c.WaitFirst(from, h.Cfg().OpTimeout, func(m clients.Message) bool {
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

package suites

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/reports"
)

// Spec pages the bad-input checks cite.
const (
	toolsLegacy     = "specification/VERSION/server/tools.mdx"
	toolsModern     = "specification/2026-07-28/server/tools.mdx"
	basicModern     = "specification/2026-07-28/basic/index.mdx"
	transportLegacy = "specification/VERSION/basic/transports.mdx"
)

// oversizeBytes is the padding of ROBUST-OVERSIZE: 8 MiB of arguments.
const oversizeBytes = 8 << 20

var (
	checkInvalidRequest = register(&Check{
		ID:    "ROBUST-INVALID-REQUEST",
		Title: "an invalid request object gets -32600 (over HTTP an error status), and the server lives on",
		How: "Sends two request objects that are valid JSON but not valid JSON-RPC requests — one without a method, one " +
			"whose jsonrpc is \"1.0\". stdio: each must get a JSON-RPC error -32600 (with its id, or null). HTTP: each POST " +
			"must get a 4xx status. The barrier request must be answered after each.",
		Rules: merge(
			sameRule(Rule{Level: reports.Must, Spec: basicLegacy, Also: []string{transportLegacy},
				Clause: jsonrpcMust + " [JSON-RPC 2.0: a request object without a method, or whose jsonrpc is not exactly \"2.0\", gets the error -32600 Invalid Request] [transports.mdx, HTTP] " + httpRejectLegacy},
				legacyVersions...),
			map[string]Rule{"2026-07-28": {Level: reports.Must, Spec: basicModern, Also: []string{httpModern},
				Clause: jsonrpcMust + " [JSON-RPC 2.0: a request object without a method, or whose jsonrpc is not exactly \"2.0\", gets the error -32600 Invalid Request] [streamable-http.mdx] " + httpRejectModern}},
		),
		Transports: []string{"stdio", "http"},
	})
	checkInvalidParams = register(&Check{
		ID:    "ROBUST-INVALID-PARAMS",
		Title: "a tools/call whose arguments are not an object gets the JSON-RPC error -32602",
		How: "Lists the tools, then calls the first one with arguments that are a string instead of an object (a request " +
			"that fails the CallToolRequest schema). The answer must be a JSON-RPC error with code -32602, not a result; " +
			"then the barrier request.",
		Rules: merge(
			sameRule(Rule{Level: reports.Should, Spec: toolsLegacy, Source: reports.SourceReading,
				Clause: "Protocol Errors: Standard JSON-RPC errors for issues like: [...] Malformed requests (requests that fail to satisfy CallToolRequest schema) — for invalid method parameters JSON-RPC's code is -32602. tools.mdx states this classification without an RFC 2119 keyword: mcp-conform's reading, WARN at most (a server that dies on it FAILs regardless)."},
				legacyVersions...),
			map[string]Rule{"2026-07-28": {Level: reports.Should, Spec: toolsModern, Source: reports.SourceReading,
				Clause: "Protocol Errors indicate issues with the request structure itself [...] Malformed requests (requests that fail to satisfy CallToolRequest schema) — for invalid params JSON-RPC's code is -32602. No RFC 2119 keyword: mcp-conform's reading, WARN at most (a server that dies on it FAILs regardless)."}},
		),
		Transports: []string{"stdio", "http"},
	})
	checkUnknownTool = register(&Check{
		ID:    "ROBUST-UNKNOWN-TOOL",
		Title: "a tools/call naming an unknown tool gets the JSON-RPC error -32602, not a tool result",
		How:   "Calls the tool mcp-conform-no-such-tool; the answer must be a JSON-RPC error with code -32602 (not a result with isError), then the barrier request.",
		Rules: merge(
			sameRule(Rule{Level: reports.Should, Spec: toolsLegacy, Source: reports.SourceReading,
				Clause: "Protocol Errors: Standard JSON-RPC errors for issues like: Unknown tools [...] Example protocol error: {\"code\": -32602, \"message\": \"Unknown tool: invalid_tool_name\"}. Stated without an RFC 2119 keyword: mcp-conform's reading, WARN at most (a server that dies on it FAILs regardless)."},
				legacyVersions...),
			map[string]Rule{"2026-07-28": {Level: reports.Should, Spec: toolsModern, Source: reports.SourceReading,
				Clause: "Protocol Errors indicate issues with the request structure itself [...]: Unknown tool [...] {\"code\": -32602, \"message\": \"Unknown tool: invalid_tool_name\"}. Stated without an RFC 2119 keyword: mcp-conform's reading, WARN at most (a server that dies on it FAILs regardless)."}},
		),
		Transports: []string{"stdio", "http"},
	})
	checkOversize = register(&Check{
		ID:    "ROBUST-OVERSIZE",
		Title: "an 8 MiB message gets an answer or a clean rejection, and the server lives on",
		How: "Calls the first listed tool with 8 MiB of arguments (one string). stdio: the server must answer the request " +
			"(an error such as -32600, with the id or null, or a result). HTTP: an error status (e.g. 413) or a JSON-RPC " +
			"answer. Then the barrier request.",
		Rules: merge(
			sameRule(Rule{Level: reports.Must, Spec: basicLegacy, Also: []string{transportLegacy},
				Clause: jsonrpcMust + " [JSON-RPC 2.0: a request gets a response — an error, with id null when the id could not be read, when the server cannot process it, e.g. because it is larger than it accepts] [transports.mdx, HTTP] " + httpRejectLegacy},
				legacyVersions...),
			map[string]Rule{"2026-07-28": {Level: reports.Must, Spec: basicModern, Also: []string{httpModern},
				Clause: jsonrpcMust + " [JSON-RPC 2.0: a request gets a response — an error when the server cannot process it, e.g. because it is larger than it accepts] [streamable-http.mdx] " + httpRejectModern}},
		),
		Transports: []string{"stdio", "http"},
	})
	checkInvalidUTF8 = register(&Check{
		ID:    "ROBUST-INVALID-UTF8",
		Title: "bytes that are not UTF-8, and NUL characters, do not take the server down",
		How: "Sends three requests: one whose string holds bytes that are not UTF-8 (0xFF 0xFE), one with a raw NUL byte " +
			"in a string (not valid JSON), one with an escaped \\u0000 (valid JSON). Any error, or silence, is accepted for " +
			"the first two, any answer for the third; after each the barrier request must be answered.",
		Rules: merge(
			sameRule(Rule{Level: reports.Must, Spec: transportLegacy, Also: []string{basicLegacy},
				Clause: "JSON-RPC messages MUST be UTF-8 encoded. [basic/index.mdx] " + jsonrpcMust + " [a message that is not UTF-8, or not valid JSON, is invalid input: the server may answer it with an error or ignore it, and serves the next request]"},
				legacyVersions...),
			map[string]Rule{"2026-07-28": {Level: reports.Must, Spec: "specification/2026-07-28/basic/transports/index.mdx", Also: []string{basicModern},
				Clause: "JSON-RPC messages MUST be UTF-8 encoded. [basic/index.mdx] " + jsonrpcMust + " [a message that is not UTF-8, or not valid JSON, is invalid input: the server may answer it with an error or ignore it, and serves the next request]"}},
		),
		Transports: []string{"stdio", "http"},
	})
	checkDuplicateID = register(&Check{
		ID:    "ROBUST-DUPLICATE-ID",
		Title: "a request reusing the id of one in flight does not take the server down",
		How: "Starts the slow role with id dup-1, then sends the barrier request (ping, or server/discover) with the same id " +
			"while it runs. Reusing the id breaks the client's MUST, not the server's, so the bar for the server is: it stays " +
			"alive and serves the next request (else FAIL). What it does with the duplicate — answer it, reject it, drop it, " +
			"even lose the first call's answer or answer one request twice — breaks no sentence of the server's: it WARNs at most " +
			"(mcp-conform's reading: keep answering the call in flight, each request at most once).",
		Rules: merge(
			sameRule(Rule{Level: reports.Should, Spec: basicLegacy, Source: reports.SourceReading,
				Clause: "\"The request ID MUST NOT have been previously used by the requestor within the same session\" binds the client. mcp-conform's reading of the server's side: it keeps serving (the next request gets its answer), still answers the call in flight, and answers each request at most once."},
				legacyVersions...),
			map[string]Rule{"2026-07-28": {Level: reports.Should, Spec: basicModern, Source: reports.SourceReading,
				Clause: "\"The request ID MUST NOT match the ID of any other request the sender has issued and not yet received a response for\" binds the client. mcp-conform's reading of the server's side: it keeps serving (the next request gets its answer), still answers the call in flight, and answers each request at most once."}},
		),
		Transports: []string{"stdio", "http"},
		Roles:      []string{"slow"},
	})
	checkStrayResponse = register(&Check{
		ID:    "ROBUST-STRAY-RESPONSE",
		Title: "a response to an id the server never sent is ignored: no reply, and the server lives on",
		How: "Sends a result response and an error response whose ids the server never used. stdio: nothing may come " +
			"back for them. HTTP: 202 with no body, or an error status — never a JSON-RPC reply. Then the barrier request.",
		Rules: merge(
			sameRule(Rule{Level: reports.Must, Spec: basicLegacy, Also: []string{transportLegacy},
				Clause: "Result responses MUST include the same ID as the request they correspond to. [...] Error responses MUST include the same ID as the request they correspond to [a reply to the client's response corresponds to no request of the client] [transports.mdx] If the input is a JSON-RPC response or notification: If the server accepts the input, the server MUST return HTTP status code 202 Accepted with no body. If the server cannot accept the input, it MUST return an HTTP error status code"},
				"2025-11-25"),
			sameRule(Rule{Level: reports.Must, Spec: basicLegacy, Also: []string{transportLegacy},
				Clause: "Responses MUST include the same ID as the request they correspond to. [a reply to the client's response corresponds to no request of the client] [transports.mdx] If the input is a JSON-RPC response or notification: If the server accepts the input, the server MUST return HTTP status code 202 Accepted with no body. If the server cannot accept the input, it MUST return an HTTP error status code"},
				"2025-06-18"),
			map[string]Rule{"2026-07-28": {Level: reports.Must, Spec: basicModern, Also: []string{httpModern},
				Clause: "Result responses MUST include the same ID as the request they correspond to. [...] Error responses MUST include the same ID as the request they correspond to [a reply to the client's response corresponds to no request of the client] [streamable-http.mdx] The client MUST NOT send JSON-RPC responses. [...] If the server cannot accept it, it MUST return an HTTP error status code"}},
		),
		Transports: []string{"stdio", "http"},
	})
)

func registerRobustInput() {
	ginkgo.Describe("ROBUST input", ginkgo.Label("area:robust"), func() {
		define(checkInvalidRequest, invalidRequest)
		define(checkInvalidParams, invalidParams)
		define(checkUnknownTool, unknownTool)
		define(checkOversize, oversize)
		define(checkInvalidUTF8, invalidUTF8)
		define(checkDuplicateID, duplicateID)
		define(checkStrayResponse, strayResponse)
	})
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
	ctx, cancel := context.WithTimeout(r.h.ctx, d)
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
		r.h.failServer("no response for id %s (%s): %v%s", id, method, err, r.hint())
	}
	return m
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
		return exitHint(r.s.Link)
	}
	return r.web.exitHint()
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
	m := r.call("tools/list", nil, r.h.cfg.OpTimeout)
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
	ctx, cancel := context.WithTimeout(r.h.ctx, d)
	defer cancel()
	resp, b, err := r.web.W.RawPOST(ctx, body, hd)
	if err != nil {
		r.h.failServer("POST failed: %v%s", err, r.hint())
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
				m, ok := r.s.WaitFirst(from, h.cfg.OpTimeout, replyTo(jsonrpc.StringID(p.id)))
				switch {
				case !ok:
					h.Failf("no reply to %s %s (want a JSON-RPC error -32600)", p.what, p.line)
				case m.Env.Kind != jsonrpc.ErrorReply:
					h.Failf("%s was processed, not rejected: %s (want a JSON-RPC error -32600)", p.what, clip(m.Raw))
				case m.Env.Error == nil || m.Env.Error.Code != -32600:
					h.Failf("%s was answered with %s (want code -32600)", p.what, clip(m.Raw))
				}
				continue
			}
			resp, body := r.postRaw([]byte(p.line), "tools/list", "", h.cfg.OpTimeout)
			if resp.StatusCode < 400 || resp.StatusCode > 499 {
				h.Failf("%s got HTTP %d, want a 4xx error status: %s", p.what, resp.StatusCode, clip(body))
			}
			if env := jsonrpc.Parse(firstJSON(resp, body)); env.Kind == jsonrpc.ErrorReply && env.Error != nil && env.Error.Code != -32600 {
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

func invalidParams(h *H) {
	onEither(h, func(r rpc) {
		tool := r.firstTool()
		m := r.call("tools/call", map[string]any{"name": tool, "arguments": "mcp-conform: not an object"}, h.cfg.OpTimeout)
		judgeError(h, m, fmt.Sprintf("tools/call %s with arguments that are a string", tool), -32602)
		r.ping("after invalid params")
	})
}

func unknownTool(h *H) {
	const tool = "mcp-conform-no-such-tool"
	onEither(h, func(r rpc) {
		m := r.call("tools/call", map[string]any{"name": tool, "arguments": map[string]any{}}, h.cfg.OpTimeout)
		judgeError(h, m, "tools/call of the unknown tool "+tool, -32602)
		r.ping("after an unknown tool")
	})
}

func oversize(h *H) {
	const id = "oversize-1"
	onEither(h, func(r rpc) {
		// A tool the server lists gets the load (it may well read the
		// arguments); without one, any name does: the message is the test.
		tool, _ := r.listedTool()
		if tool == "" {
			tool = "mcp-conform-oversize"
		}
		if r.web != nil && r.web.W.SessionID() != "" {
			// A 2025 client keeps its session's standalone stream open;
			// here it also keeps a short session TTL from running out
			// while 8 MiB are built and taken in by the proxy before the
			// server sees the request.
			ctx, cancel := context.WithTimeout(r.h.ctx, h.cfg.CallTimeout+h.cfg.OpTimeout)
			defer cancel()
			if get, err := r.web.W.OpenGET(ctx, ""); err == nil {
				defer get.Close()
			}
		}
		// The padding goes in after marshalling: 8 MiB copied, not escaped.
		const pad = "MCP-CONFORM-PADDING"
		line := r.rawLine(id, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{"padding": pad}},
			map[string]string{pad: strings.Repeat("a", oversizeBytes)})
		what := fmt.Sprintf("a %d-byte tools/call", len(line))
		if r.s != nil {
			from := r.s.W.Len()
			r.s.SendRaw(string(line))
			m, ok := r.s.WaitFirst(from, h.cfg.CallTimeout, replyTo(jsonrpc.StringID(id)))
			if !ok {
				h.failServer("no response for id %s (%s) %s (want an error such as -32600, or a result)", id, what, r.s.Silence(h.cfg.CallTimeout))
			}
			h.Notef("%s was answered with %s", what, describe(m))
			r.ping("after " + what)
			return
		}
		resp, body := r.postRaw(line, "tools/call", tool, h.cfg.CallTimeout)
		if resp.StatusCode >= 400 {
			h.Notef("%s was rejected with HTTP %d", what, resp.StatusCode)
		} else if env := jsonrpc.Parse(firstJSON(resp, body)); !env.Kind.IsReply() {
			h.Failf("%s got HTTP %d without a JSON-RPC answer (want an error status such as 413, or a reply): %s", what, resp.StatusCode, clip(body))
		} else {
			h.Notef("%s was answered with HTTP %d and %s", what, resp.StatusCode, env.Kind)
		}
		r.ping("after " + what)
	})
}

// describe names a reply briefly: its error code, or "a result".
func describe(m clients.Message) string {
	if m.Env.Kind == jsonrpc.ErrorReply && m.Env.Error != nil {
		return fmt.Sprintf("error %d", m.Env.Error.Code)
	}
	return fmt.Sprintf("%s (%d bytes)", m.Env.Kind, len(m.Raw))
}

func invalidUTF8(h *H) {
	const mark = "MCP-CONFORM-PLACEHOLDER"
	probes := []struct{ id, what, bytes string }{
		{"utf8-1", "a string with bytes that are not UTF-8 (0xFF 0xFE)", "\xff\xfe"},
		{"nul-1", "a raw NUL byte in a string", "a\x00b"},
		{"nul-2", `an escaped NUL (\u0000) in a string`, `a\u0000b`},
	}
	onEither(h, func(r rpc) {
		for _, p := range probes {
			line := r.rawLine(p.id, "tools/list", map[string]any{"cursor": mark}, map[string]string{mark: p.bytes})
			if r.s != nil {
				from := r.s.W.Len()
				r.s.SendRaw(string(line))
				r.ping("after " + p.what)
				if m, ok := r.s.WaitFirst(from, 0, replyTo(jsonrpc.StringID(p.id))); ok {
					h.Notef("%s: %s", p.what, describe(m))
				}
				continue
			}
			resp, _ := r.postRaw(line, "tools/list", "", h.cfg.OpTimeout)
			h.Notef("%s: HTTP %d", p.what, resp.StatusCode)
			r.ping("after " + p.what)
		}
	})
}

func duplicateID(h *H) {
	id := jsonrpc.StringID("dup-1")
	// The client broke its MUST: the server's bar is to stay alive and
	// serve the next request (failServer otherwise). What it did with the
	// duplicate and the call in flight is noted, and WARNs at most.
	var findings []string
	onTransport(h, func(c *Conn) {
		from := c.W.Len()
		c.StartRole("slow", id, nil)
		dup := barrierMethod(c.W.Session())
		line, _ := json.Marshal(request("dup-1", dup, modernParams(c.W.Session(), nil)))
		c.SendRaw(string(line))
		c.Ping("after a request reusing an in-flight id")
		// The duplicate may be answered (its result, or Invalid Request)
		// or dropped; the call in flight should still be answered. An
		// identical control call started now ends after it would have:
		// then it gets the exchange timeout more, no longer.
		ctrl := c.StartRole("slow", jsonrpc.StringID("dup-control"), nil)
		c.Await(ctrl, "the control call")
		n, slowAnswered := 0, false
		_, _ = c.WaitFirst(from, h.cfg.OpTimeout, func(m clients.Message) bool {
			if m.Env.Kind.IsReply() && m.Env.ID == id {
				n++
				slowAnswered = slowAnswered || !answersBarrier(m)
			}
			return slowAnswered
		})
		c.Ping("after the wait for the in-flight request's answer")
		if !slowAnswered {
			findings = append(findings, fmt.Sprintf("no response for id dup-1 from the slow call in flight, though an identical control call started after it was answered (%d answer(s) to the duplicate %s): the duplicate made the server lose the first request",
				n, dup))
		}
		replies := c.RepliesTo(from, id)
		if len(replies) > 2 {
			findings = append(findings, fmt.Sprintf("%d replies for id dup-1, sent by two requests: %s", len(replies), clip(replies[2].Raw)))
		}
		for _, m := range replies {
			h.Notef("id dup-1: %s", describe(m))
		}
	}, func(c *HConn) {
		first := c.StartRole("slow", id, nil, nil)
		ctx, cancel := context.WithTimeout(h.ctx, h.cfg.CallTimeout)
		defer cancel()
		dup := barrierMethod(c.W.Session())
		second, err := c.W.Start(ctx, id, dup, nil)
		if err != nil {
			h.failServer("%s reusing id dup-1: %v%s", dup, err, c.exitHint())
		}
		c.Ping("after a request reusing an in-flight id")
		ctrl := c.StartRole("slow", jsonrpc.StringID("dup-control"), nil, nil)
		c.Await(ctrl, "the control call")
		wctx, wcancel := context.WithTimeout(ctx, h.cfg.OpTimeout)
		defer wcancel()
		m1, err1 := first.Wait(wctx)
		m2, err2 := second.Wait(wctx)
		c.Ping("after the wait for the in-flight request's answer")
		if err1 != nil {
			findings = append(findings, fmt.Sprintf("no response for id dup-1 from the slow call in flight, though an identical control call started after it was answered (%v): the duplicate made the server lose the first request", err1))
		}
		for i, call := range []*clients.HTTPCall{first, second} {
			n := 0
			for _, m := range call.Messages() {
				if m.Env.Kind.IsReply() && m.Env.ID == id {
					n++
				}
			}
			if n > 1 {
				findings = append(findings, fmt.Sprintf("request %d with id dup-1 got %d replies on its stream", i+1, n))
			}
		}
		if err1 == nil {
			h.Notef("the slow call: %s", describe(m1))
		}
		if err2 == nil {
			h.Notef("the duplicate: %s (HTTP %d)", describe(m2), second.Status())
		}
	})
	if len(findings) > 0 {
		h.Warnf("the server stayed alive and served the next request, but %s", strings.Join(findings, "; "))
	}
}

// answersBarrier reports whether m answers the duplicate of
// ROBUST-DUPLICATE-ID (ping, or server/discover in 2026-07-28) rather than
// the slow call: an Invalid Request error, or a result without the content
// of a tool result.
func answersBarrier(m clients.Message) bool {
	if m.Env.Kind == jsonrpc.ErrorReply {
		return m.Env.Error != nil && m.Env.Error.Code == -32600
	}
	var r struct {
		Result struct {
			Content json.RawMessage `json:"content"`
		} `json:"result"`
	}
	return json.Unmarshal(m.Raw, &r) == nil && r.Result.Content == nil
}

func strayResponse(h *H) {
	stray := []struct {
		id   jsonrpc.ID
		line string
	}{
		{jsonrpc.StringID("mcp-conform-never-sent-1"), `{"jsonrpc":"2.0","id":"mcp-conform-never-sent-1","result":{}}`},
		{jsonrpc.IntID(987654321), `{"jsonrpc":"2.0","id":987654321,"error":{"code":-32603,"message":"mcp-conform: stray error response"}}`},
	}
	onEither(h, func(r rpc) {
		for _, s := range stray {
			if r.s != nil {
				from := r.s.W.Len()
				r.s.SendRaw(s.line)
				r.ping("after a response to an id it never sent")
				for _, m := range r.s.W.Since(from) {
					if replyTo(s.id)(m) {
						h.Failf("the server replied to a response from the client (%s): %s", s.line, clip(m.Raw))
					}
				}
				continue
			}
			resp, body := r.postRaw([]byte(s.line), "", "", h.cfg.OpTimeout)
			switch {
			case resp.StatusCode == http.StatusAccepted && len(bytes.TrimSpace(body)) == 0:
			case resp.StatusCode >= 400:
				h.Notef("a response from the client was rejected with HTTP %d", resp.StatusCode)
			default:
				h.Failf("a response from the client (%s) got HTTP %d %s (want 202 with no body, or an error status)", s.line, resp.StatusCode, clip(body))
			}
			r.ping("after a response to an id it never sent")
		}
	})
}

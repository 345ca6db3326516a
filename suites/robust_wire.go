package suites

// ROBUST, the byte stream: what a server writes, and how it bears oversized, undecodable, duplicated and stray messages.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/reports"
)

var checkStdoutClean = register(&Check{
	ID:    "ROBUST-STDOUT-CLEAN",
	Title: "the server writes nothing but MCP messages on stdout",
	How:   "Starts the server, lists its tools and sends the barrier request, then looks at every line the server wrote on stdout: each must be a JSON-RPC message.",
	Rules: merge(
		sameRule(Rule{Level: reports.Must, Spec: "specification/VERSION/basic/transports.mdx",
			Clause: "The server MUST NOT write anything to its stdout that is not a valid MCP message."}, legacyVersions...),
		map[string]Rule{v20260728: {Level: reports.Must, Spec: stdioModern,
			Clause: "The server MUST NOT write anything to its stdout that is not a valid MCP message."}},
	),
	Transports: []string{viaStdio},
})

// oversizeBytes is the padding of ROBUST-OVERSIZE: 8 MiB of arguments.
const oversizeBytes = 8 << 20

var checkOversize = register(&Check{
	ID:    "ROBUST-OVERSIZE",
	Title: "an 8 MiB message gets an answer or a clean rejection, and the server lives on",
	How: "Calls the first listed tool with 8 MiB of arguments (one string). stdio: the server must answer the request " +
		"(an error such as -32600, with the id or null, or a result). HTTP: an error status (e.g. 413) or a JSON-RPC " +
		"answer. Then the barrier request.",
	Rules: merge(
		sameRule(Rule{Level: reports.Must, Spec: basicLegacy, Also: []string{transportLegacy},
			Clause: jsonrpcMust + " [JSON-RPC 2.0: a request gets a response — an error, with id null when the id could not be read, when the server cannot process it, e.g. because it is larger than it accepts] [transports.mdx, HTTP] " + httpRejectLegacy},
			legacyVersions...),
		map[string]Rule{v20260728: {Level: reports.Must, Spec: basicModern, Also: []string{httpModern},
			Clause: jsonrpcMust + " [JSON-RPC 2.0: a request gets a response — an error when the server cannot process it, e.g. because it is larger than it accepts] [streamable-http.mdx] " + httpRejectModern}},
	),
	Transports: []string{viaStdio, viaHTTP},
})

var checkInvalidUTF8 = register(&Check{
	ID:    "ROBUST-INVALID-UTF8",
	Title: "bytes that are not UTF-8, and NUL characters, do not take the server down",
	How: "Sends three requests: one whose string holds bytes that are not UTF-8 (0xFF 0xFE), one with a raw NUL byte " +
		"in a string (not valid JSON), one with an escaped \\u0000 (valid JSON). Any error, or silence, is accepted for " +
		"the first two, any answer for the third; after each the barrier request must be answered.",
	Rules: merge(
		sameRule(Rule{Level: reports.Must, Spec: transportLegacy, Also: []string{basicLegacy},
			Clause: "JSON-RPC messages MUST be UTF-8 encoded. [basic/index.mdx] " + jsonrpcMust + " [a message that is not UTF-8, or not valid JSON, is invalid input: the server may answer it with an error or ignore it, and serves the next request]"},
			legacyVersions...),
		map[string]Rule{v20260728: {Level: reports.Must, Spec: "specification/2026-07-28/basic/transports/index.mdx", Also: []string{basicModern},
			Clause: "JSON-RPC messages MUST be UTF-8 encoded. [basic/index.mdx] " + jsonrpcMust + " [a message that is not UTF-8, or not valid JSON, is invalid input: the server may answer it with an error or ignore it, and serves the next request]"}},
	),
	Transports: []string{viaStdio, viaHTTP},
})

var checkDuplicateID = register(&Check{
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
		map[string]Rule{v20260728: {Level: reports.Should, Spec: basicModern, Source: reports.SourceReading,
			Clause: "\"The request ID MUST NOT match the ID of any other request the sender has issued and not yet received a response for\" binds the client. mcp-conform's reading of the server's side: it keeps serving (the next request gets its answer), still answers the call in flight, and answers each request at most once."}},
	),
	Transports: []string{viaStdio, viaHTTP},
	Roles:      []string{"slow"},
})

var checkStrayResponse = register(&Check{
	ID:    "ROBUST-STRAY-RESPONSE",
	Title: "a response to an id the server never sent is ignored: no reply, and the server lives on",
	How: "Sends a result response and an error response whose ids the server never used. stdio: nothing may come " +
		"back for them. HTTP: 202 with no body, or an error status — never a JSON-RPC reply. Then the barrier request.",
	Rules: merge(
		sameRule(Rule{Level: reports.Must, Spec: basicLegacy, Also: []string{transportLegacy},
			Clause: "Result responses MUST include the same ID as the request they correspond to. [...] Error responses MUST include the same ID as the request they correspond to [a reply to the client's response corresponds to no request of the client] [transports.mdx] If the input is a JSON-RPC response or notification: If the server accepts the input, the server MUST return HTTP status code 202 Accepted with no body. If the server cannot accept the input, it MUST return an HTTP error status code"},
			v20251125),
		sameRule(Rule{Level: reports.Must, Spec: basicLegacy, Also: []string{transportLegacy},
			Clause: "Responses MUST include the same ID as the request they correspond to. [a reply to the client's response corresponds to no request of the client] [transports.mdx] If the input is a JSON-RPC response or notification: If the server accepts the input, the server MUST return HTTP status code 202 Accepted with no body. If the server cannot accept the input, it MUST return an HTTP error status code"},
			v20250618),
		map[string]Rule{v20260728: {Level: reports.Must, Spec: basicModern, Also: []string{httpModern},
			Clause: "Result responses MUST include the same ID as the request they correspond to. [...] Error responses MUST include the same ID as the request they correspond to [a reply to the client's response corresponds to no request of the client] [streamable-http.mdx] The client MUST NOT send JSON-RPC responses. [...] If the server cannot accept it, it MUST return an HTTP error status code"}},
	),
	Transports: []string{viaStdio, viaHTTP},
})

func stdoutClean(h *H) {
	c := h.Connect()
	ctx, cancel := h.Op()
	defer cancel()
	if _, err := c.W.Call(ctx, "tools/list", nil); err != nil {
		h.FailServer("tools/list: %v%s", err, c.ExitHint())
	}
	c.Ping("after tools/list")
	if stray := h.StrayOutput(); stray != "" {
		h.Failf("%s", stray)
	}
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
			ctx, cancel := context.WithTimeout(r.h.Ctx(), h.Cfg().CallTimeout+h.Cfg().OpTimeout)
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
			m, ok := r.s.WaitFirst(from, h.Cfg().CallTimeout, replyTo(jsonrpc.StringID(id)))
			if !ok {
				h.FailServer("no response for id %s (%s) %s (want an error such as -32600, or a result)", id, what, r.s.Silence(h.Cfg().CallTimeout))
			}
			h.Notef("%s was answered with %s", what, describe(m))
			r.ping("after " + what)
			return
		}
		resp, body := r.postRaw(line, "tools/call", tool, h.Cfg().CallTimeout)
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
			resp, _ := r.postRaw(line, "tools/list", "", h.Cfg().OpTimeout)
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
		_, _ = c.WaitFirst(from, h.Cfg().OpTimeout, func(m clients.Message) bool {
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
		ctx, cancel := context.WithTimeout(h.Ctx(), h.Cfg().CallTimeout)
		defer cancel()
		dup := barrierMethod(c.W.Session())
		second, err := c.W.Start(ctx, id, dup, nil)
		if err != nil {
			h.FailServer("%s reusing id dup-1: %v%s", dup, err, c.ExitHint())
		}
		c.Ping("after a request reusing an in-flight id")
		ctrl := c.StartRole("slow", jsonrpc.StringID("dup-control"), nil, nil)
		c.Await(ctrl, "the control call")
		wctx, wcancel := context.WithTimeout(ctx, h.Cfg().OpTimeout)
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
		return m.Env.Error != nil && m.Env.Error.Code == jsonrpc.CodeInvalidRequest
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
			resp, body := r.postRaw([]byte(s.line), "", "", h.Cfg().OpTimeout)
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

var checkIDEcho = register(&Check{
	ID:    "ROBUST-ID-ECHO",
	Title: "a reply carries its request's id exactly: a string stays a string (\"123\" too), an integer an integer",
	How: "Sends the era's barrier request (ping; server/discover in 2026-07-28) three times, one at a time, with the " +
		"ids a string, a string of decimal digits (like the ping page's own example id \"123\") and an integer: the " +
		"first reply after each must carry the same id, of the same JSON type and value.",
	Rules: merge(
		map[string]Rule{v20250618: {Level: reports.Must, Spec: "specification/2025-06-18/basic/index.mdx",
			Clause: "Responses MUST include the same ID as the request they correspond to."}},
		sameRule(Rule{Level: reports.Must, Spec: indexPage,
			Clause: "Result responses MUST include the same ID as the request they correspond to."}, v20260728, v20251125),
	),
	Transports: []string{viaStdio, viaHTTP},
	Clauses:    []string{"basic#5"},
})

func idEcho(h *H) {
	c := connectMsg(h)
	method := barrierMethod(c.session())
	n := time.Now().UnixNano()%1_000_000_000 + 1_000_000_000
	ids := []struct {
		id   jsonrpc.ID
		kind string
	}{
		{jsonrpc.StringID(unique("id-echo")), "a string"},
		{jsonrpc.StringID(strconv.FormatInt(n, 10)), "a string of digits"},
		{jsonrpc.IntID(n + 1), "an integer"},
	}
	for _, x := range ids {
		from := c.length()
		startRequest(h, c, x.id, method, nil)
		m, ok := c.waitFirst(from, h.Cfg().OpTimeout, func(m clients.Message) bool { return m.Env.Kind.IsReply() })
		if !ok {
			h.FailServer("%s with id %s (%s) got no reply %s", method, x.id, x.kind, c.silence(h.Cfg().OpTimeout))
		}
		if m.Env.ID != x.id {
			h.Failf("%s with id %s (%s) was answered with id %s: %s", method, x.id, x.kind, m.Env.ID, m.Raw)
		}
	}
	h.Notef("%s answered with the request's id for a string, a string of digits and an integer id", method)
}

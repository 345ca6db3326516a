package suites

// LIFECYCLE-NO-PRIOR-CONTEXT: 2026-07-28 basic/index.mdx: "Servers MUST NOT
// rely on prior requests over the same connection to establish context."
//
//	stdio: harness ──starts the stdio server──▶ (nothing sent yet)
//	              ──tools/list, full _meta (first line)──▶ server ──▶ a result
//	HTTP:  harness ──new TCP connection: POST tools/list──▶ proxy ──new TCP connection──▶ server
//	              ◀── a result (the response to its id) ──────────────────┘

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/protocol"
	"github.com/mcp-conform/mcp-conform/reports"
)

var checkNoPriorContext = register(&Check{
	ID:    "LIFECYCLE-NO-PRIOR-CONTEXT",
	Title: "2026-07-28: a request is served without any prior request on its connection (no server/discover first)",
	How: "2026-07-28 on stdio and Streamable HTTP. On stdio, starts a fresh server process and sends, as its very first " +
		"line, a tools/list whose _meta carries everything a 2026-07-28 request needs (protocolVersion, " +
		"clientCapabilities, clientInfo) — no server/discover, no other request before it. Over Streamable HTTP, POSTs the " +
		"same tools/list (with its MCP-Protocol-Version and Mcp-Method headers) on a new TCP connection, which the proxy " +
		"carries to the server on a new TCP connection of its own: the first request of that connection. The answer (the " +
		"response to its id) must be a result: an error means the server wanted context from an earlier request on the " +
		"connection. A proxy that cannot give the request a connection of its own to the server (an https upstream) SKIPs.",
	Rules: map[string]Rule{v20260728: {Level: reports.Must, Spec: basicModern,
		Clause: "Servers MUST NOT rely on prior requests over the same connection to establish context."}},
	Transports: []string{viaStdio, viaHTTP},
	Clauses:    []string{"basic#17"},
})

func registerNoPriorContext() {
	ginkgo.Describe("LIFECYCLE no prior context (2026-07-28)", ginkgo.Label("area:lifecycle"), func() {
		define(checkNoPriorContext, noPriorContext)
	})
}

func noPriorContext(h *H) {
	if h.Target().Via() == protocol.TransportHTTP {
		noPriorContextHTTP(h)
		return
	}
	v := h.Version()
	c := h.ConnectBare()
	meta := modernMeta(v)
	meta[clients.MetaClientInfo] = map[string]any{"name": "mcp-conform", "version": "1.0.0"}
	id := jsonrpc.StringID(unique("first"))
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id.Raw(), "method": "tools/list", "params": map[string]any{"_meta": meta}})
	from := c.W.Len()
	c.SendRaw(string(line))
	// The process was just started: its first answer gets the time a
	// server has to start.
	d := h.Cfg().StartTimeout
	m, ok := c.WaitFirst(from, d, func(m clients.Message) bool { return m.Env.Kind.IsReply() && m.Env.ID == id })
	if !ok {
		h.Failf("tools/list, the first line to a fresh server, was not answered %s", c.Silence(d))
	}
	a := parseAnswer(0, m.Raw)
	if a.result == nil {
		h.Failf("tools/list, the first line to a fresh server (full 2026-07-28 _meta, no server/discover before it), got %s: %s", a, clip(m.Raw))
	}
	h.Notef("the first request on a fresh connection was served: %s", clip(m.Raw))
}

// noPriorContextHTTP POSTs tools/list on a new TCP connection (rawClient
// keeps none) and reads the response to its id.
func noPriorContextHTTP(h *H) {
	c, v := modernHTTP(h)
	if !c.Proxy.OwnUpstreamConnections() {
		h.Skip("the proxy reaches this target through a pooled client (not an http:// upstream): a new client connection is not a new connection to the server")
	}
	meta := modernMeta(v)
	meta[clients.MetaClientInfo] = map[string]any{"name": "mcp-conform", "version": "1.0.0"}
	id := unique("first-on-conn")
	body, _ := json.Marshal(request(id, "tools/list", map[string]any{"_meta": meta}))
	ctx, cancel := h.Op()
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Proxy.URL(), bytes.NewReader(body))
	if err != nil {
		h.Errorf("build the tools/list request: %v", err)
	}
	req.Header = http.Header{
		"Content-Type":         {"application/json"},
		"Accept":               {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {v},
		"Mcp-Method":           {"tools/list"},
	}
	resp, err := rawClient.Do(req)
	if err != nil {
		h.FailServer("tools/list on a new connection failed: %v%s", err, c.ExitHint())
	}
	defer func() { _ = resp.Body.Close() }()
	raw, ok := responseTo(resp, id)
	if !ok {
		h.Failf("tools/list, the first request on a new TCP connection, got HTTP %d without a response to its id %q: %s", resp.StatusCode, id, clip(raw))
	}
	a := parseAnswer(resp.StatusCode, raw)
	if a.result == nil {
		h.Failf("tools/list, the first request on a new TCP connection (full 2026-07-28 headers and _meta, no server/discover before it on that connection), got %s: %s", a, clip(raw))
	}
	h.Notef("the first request on a new TCP connection was served (HTTP %d): %s", resp.StatusCode, clip(raw))
}

// responseTo reads an HTTP answer until the JSON-RPC response whose id is
// id: the JSON body, or the first such event of an event stream (other
// messages may come before it). The request's context bounds the read.
func responseTo(resp *http.Response, id string) ([]byte, bool) {
	matches := func(b []byte) bool {
		var env struct {
			ID     any             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		return json.Unmarshal(b, &env) == nil && env.ID == id && (env.Result != nil || env.Error != nil)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var buf bytes.Buffer
		if _, err := buf.ReadFrom(resp.Body); err != nil && buf.Len() == 0 {
			return nil, false
		}
		return buf.Bytes(), matches(buf.Bytes())
	}
	// An event stream: its events until the response to id.
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var data []string
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if d, ok := strings.CutPrefix(line, "data:"); ok {
			data = append(data, strings.TrimPrefix(d, " "))
			continue
		}
		if line == "" && len(data) > 0 {
			ev := []byte(strings.Join(data, "\n"))
			data = nil
			if matches(ev) {
				return ev, true
			}
		}
	}
	return nil, false
}

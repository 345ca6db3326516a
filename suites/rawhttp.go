package suites

// Raw HTTP requests through a connection's proxy, for checks that need exactly these headers and bytes.

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// rawPing POSTs the era's barrier request (ping, or server/discover in
// 2026-07-28) with exactly these headers added to the session's.
func rawPing(h *H, c *HConn, header http.Header, meta map[string]any) (*http.Response, []byte) {
	var params map[string]any
	if meta != nil {
		params = map[string]any{"_meta": meta}
	}
	body, _ := json.Marshal(request("raw-ping", barrierMethod(c.W.Session()), params))
	return rawBody(h, c, body, header)
}

func sessionHeaders(c *HConn, sid string) http.Header {
	hd := http.Header{"Mcp-Protocol-Version": {c.W.Session().Version}}
	if sid != "" {
		hd["Mcp-Session-Id"] = []string{sid}
	}
	return hd
}

// rawRequest sends a request of method with exactly these headers (and no
// body) through the connection's proxy, and returns the status; the body of
// a stream it opens is closed at once.
func rawRequest(h *H, c *HConn, method string, header http.Header) int {
	ctx, cancel := h.Op()
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.Proxy.URL(), nil)
	if err != nil {
		h.Errorf("build %s request: %v", method, err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := rawClient.Do(req)
	if err != nil {
		h.FailServer("%s failed: %v%s", method, err, c.ExitHint())
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// rawClient sends the raw requests of the HTTP checks: no redirects
// followed, no idle connection kept between checks.
var rawClient = &http.Client{
	Transport:     &http.Transport{DisableKeepAlives: true, DisableCompression: true},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

func modernMeta(version string) map[string]any {
	return map[string]any{clients.MetaProtocolVersion: version, clients.MetaClientCapabilities: map[string]any{}}
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
	ctx, cancel := h.Op()
	defer cancel()
	resp, b, err := c.W.RawPOST(ctx, body, hd)
	if err != nil {
		h.FailServer("POST failed: %v%s", err, c.ExitHint())
	}
	return resp, b
}

// firstJSON returns the JSON-RPC text of an HTTP answer: the body, or on an
// event stream the data of its first event that carries a JSON-RPC reply
// (a raw POST carries one request, so that reply is its answer; requests
// and notifications the server sends first do not stand for it), else the
// first event carrying data.
func firstJSON(resp *http.Response, body []byte) []byte {
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return body
	}
	var first []byte
	for _, line := range strings.Split(string(body), "\n") {
		d, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "data:")
		if !ok || strings.TrimSpace(d) == "" {
			continue
		}
		data := []byte(strings.TrimPrefix(d, " "))
		if jsonrpc.Parse(data).Kind.IsReply() {
			return data
		}
		if first == nil {
			first = data
		}
	}
	if first != nil {
		return first
	}
	return body
}

package clients

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// httpReq is one request a scripted server received.
type httpReq struct {
	HTTPMethod string
	Header     http.Header
	Body       []byte
	ID         json.RawMessage
	Method     string
	Params     map[string]any
}

func (r httpReq) meta() map[string]any {
	m, _ := r.Params["_meta"].(map[string]any)
	return m
}

func (r httpReq) isNotification() bool { return r.ID == nil }

func readReq(r *http.Request) (httpReq, error) {
	body, err := io.ReadAll(r.Body)
	hr := httpReq{HTTPMethod: r.Method, Header: r.Header.Clone(), Body: body}
	if err != nil || len(body) == 0 {
		return hr, err
	}
	hr.ID, hr.Method, _, hr.Params, err = decodeReq(body)
	return hr, err
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func rpcResult(id json.RawMessage, result string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result)
}

func rpcError(id json.RawMessage, code int, msg, data string) string {
	if id == nil {
		id = json.RawMessage("null")
	}
	if data == "" {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q}}`, id, code, msg)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q,"data":%s}}`, id, code, msg, data)
}

func progressNote(token any, k, total int) string {
	tok, _ := json.Marshal(token)
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%d,"total":%d}}`, tok, k, total)
}

// sseWriter writes raw SSE text and flushes.
type sseWriter struct {
	w http.ResponseWriter
	f http.Flusher
}

func startSSE(w http.ResponseWriter) *sseWriter {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	s := &sseWriter{w: w, f: w.(http.Flusher)}
	s.f.Flush()
	return s
}

func (s *sseWriter) raw(text string) {
	_, _ = io.WriteString(s.w, text)
	s.f.Flush()
}

func (s *sseWriter) data(id, data string) {
	if id != "" {
		s.raw("id: " + id + "\ndata: " + data + "\n\n")
		return
	}
	s.raw("data: " + data + "\n\n")
}

func intParam(v any, def int) int {
	switch n := v.(type) {
	case json.Number:
		i, err := strconv.Atoi(n.String())
		if err == nil {
			return i
		}
	}
	return def
}

// sleepCtx sleeps d unless the request's context ends first.
func sleepCtx(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-r.Context().Done():
		return false
	case <-t.C:
		return true
	}
}

// recorder keeps the requests a scripted server received.
// read reads and records the JSON-RPC message r posts; a body that is not
// one is answered with a parse error (ok false).
func (rec *recorder) read(w http.ResponseWriter, r *http.Request) (req httpReq, ok bool) {
	req, err := readReq(r)
	rec.add(req)
	if err != nil {
		writeJSON(w, 400, rpcError(nil, jsonrpc.CodeParseError, "Parse error", ""))
		return req, false
	}
	return req, true
}

type recorder struct {
	mu   sync.Mutex
	reqs []httpReq
	// disconnected receives the ids of slow calls whose stream the client
	// closed before the end.
	disconnected chan string
	// cancelled receives the requestId of each notifications/cancelled.
	cancelled chan string
}

func newRecorder() *recorder {
	return &recorder{disconnected: make(chan string, 16), cancelled: make(chan string, 16)}
}

func (rc *recorder) add(r httpReq) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.reqs = append(rc.reqs, r)
}

func (rc *recorder) all() []httpReq {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]httpReq(nil), rc.reqs...)
}

func (rc *recorder) methods() []string {
	var out []string
	for _, r := range rc.all() {
		out = append(out, r.HTTPMethod+" "+r.Method)
	}
	return out
}

func (rc *recorder) find(method string) (httpReq, bool) {
	for _, r := range rc.all() {
		if r.Method == method {
			return r, true
		}
	}
	return httpReq{}, false
}

// serve starts h on an httptest server and returns an HTTPWire for it; the
// wire is closed before the server at cleanup.
func serve(t *testing.T, h http.Handler, opts HTTPOptions) *HTTPWire {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	w := NewHTTPWire(ts.URL+"/mcp", opts)
	t.Cleanup(func() { _ = w.Close() })
	return w
}

// ---- a stateless 2026-07-28 server ----

type modernServer struct {
	rec *recorder
	// unsupportedFirst answers the first server/discover with -32022.
	unsupportedFirst bool
	// supported is what -32022 lists (default ["2026-07-28"]).
	supported string
	// reject answers every POST with this status and body.
	rejectStatus int
	rejectBody   string

	mu        sync.Mutex
	discovers int
}

func (s *modernServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		s.rec.add(httpReq{HTTPMethod: r.Method, Header: r.Header.Clone()})
		w.Header().Set("Allow", "POST")
		writeJSON(w, http.StatusMethodNotAllowed, rpcError(nil, jsonrpc.CodeInvalidRequest, "Method Not Allowed", ""))
		return
	}
	req, ok := s.rec.read(w, r)
	if !ok {
		return
	}
	if s.rejectStatus != 0 {
		writeJSON(w, s.rejectStatus, strings.ReplaceAll(s.rejectBody, "ID", string(req.ID)))
		return
	}
	v := r.Header.Get("Mcp-Protocol-Version")
	first := false
	if req.Method == "server/discover" {
		s.mu.Lock()
		s.discovers++
		first = s.discovers == 1
		s.mu.Unlock()
	}
	supported := s.supported
	if supported == "" {
		supported = `["2026-07-28"]`
	}
	if v != "2026-07-28" || (s.unsupportedFirst && first) {
		writeJSON(w, 400, rpcError(req.ID, jsonrpc.CodeUnsupportedProtocolVersion, "Unsupported protocol version", `{"supported":`+supported+`,"requested":"`+v+`"}`))
		return
	}
	if mv, _ := req.meta()[MetaProtocolVersion].(string); req.Method != "" && !req.isNotification() && mv != v {
		writeJSON(w, 400, rpcError(req.ID, jsonrpc.CodeHeaderMismatch, "Header mismatch: protocol version", ""))
		return
	}
	if r.Header.Get("Mcp-Method") != req.Method {
		writeJSON(w, 400, rpcError(req.ID, jsonrpc.CodeHeaderMismatch, "Header mismatch: Mcp-Method", ""))
		return
	}
	if req.isNotification() {
		if req.Method == "notifications/cancelled" {
			s.rec.cancelled <- fmt.Sprint(req.Params["requestId"])
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	switch req.Method {
	case "server/discover":
		writeJSON(w, 200, rpcResult(req.ID, `{"supportedVersions":["2026-07-28","2025-11-25"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"scripted-modern","version":"1"}}}`))
	case "tools/call":
		name, _ := req.Params["name"].(string)
		if got := r.Header.Get("Mcp-Name"); got != EncodeHeaderValue(name) {
			writeJSON(w, 400, rpcError(nil, jsonrpc.CodeHeaderMismatch, "Header mismatch: Mcp-Name "+got, ""))
			return
		}
		s.tool(w, r, req, name)
	default:
		writeJSON(w, 404, rpcError(req.ID, jsonrpc.CodeMethodNotFound, "Method not found", ""))
	}
}

func (s *modernServer) tool(w http.ResponseWriter, r *http.Request, req httpReq, name string) {
	args, _ := req.Params["arguments"].(map[string]any)
	token := req.meta()[MetaProgressToken]
	switch name {
	case "echo":
		text, _ := args["text"].(string)
		b, _ := json.Marshal(text)
		writeJSON(w, 200, rpcResult(req.ID, `{"resultType":"complete","content":[{"type":"text","text":`+string(b)+`}]}`))
	case "slow":
		steps, stepMs := intParam(args["steps"], 3), intParam(args["stepMs"], 10)
		sw := startSSE(w)
		for k := 1; k <= steps; k++ {
			if !sleepCtx(r, time.Duration(stepMs)*time.Millisecond) {
				s.rec.disconnected <- string(req.ID)
				return
			}
			if token != nil {
				sw.data("", progressNote(token, k, steps))
			}
		}
		sw.data("", rpcResult(req.ID, `{"resultType":"complete","content":[]}`))
	case "cut":
		sw := startSSE(w)
		sw.data("", progressNote("c", 1, 2))
		sw.raw(`data: {"jsonrpc":"2.0",`)
		panic(http.ErrAbortHandler)
	case "cut-between":
		sw := startSSE(w)
		sw.data("", progressNote("c", 1, 2))
		panic(http.ErrAbortHandler)
	case "odd":
		sw := startSSE(w)
		sw.raw(": hello\n\n")
		sw.raw("id: e1\ndata:\n\n")
		sw.raw("event: note\ndata: not json\n\n")
		sw.raw("id: e2\n: inner\ndata: " + progressNote("o", 1, 1) + "\n\n")
		sw.raw("retry: 1500\n\n")
		sw.raw("data: " + rpcResult(req.ID, `{"resultType":"complete","content":[]}`) + "\n\n")
		sw.raw(": after\n\n")
	default:
		writeJSON(w, 200, rpcError(req.ID, jsonrpc.CodeInvalidParams, "unknown tool", ""))
	}
}

// ---- a 2025-11-25 server with sessions ----

type legacyServer struct {
	rec *recorder
	// hangDiscover never answers a POST without a session that is not
	// initialize (the probe), until the client goes away.
	hangDiscover bool
	// initializedStatus answers notifications/initialized (default 202).
	initializedStatus int

	mu       sync.Mutex
	sessions map[string]bool
	nsess    int
	inflight map[string]chan struct{} // request id → closed on cancellation
}

func newLegacyServer() *legacyServer {
	return &legacyServer{rec: newRecorder(), sessions: map[string]bool{}, inflight: map[string]chan struct{}{}}
}

func (s *legacyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if o := r.Header.Get("Origin"); o != "" && o != "http://localhost" {
		s.rec.add(httpReq{HTTPMethod: r.Method, Header: r.Header.Clone()})
		writeJSON(w, 403, rpcError(nil, jsonrpc.CodeServerError, "Forbidden origin", ""))
		return
	}
	sid := r.Header.Get("Mcp-Session-Id")
	s.mu.Lock()
	known := s.sessions[sid]
	s.mu.Unlock()
	switch r.Method {
	case http.MethodDelete:
		s.rec.add(httpReq{HTTPMethod: r.Method, Header: r.Header.Clone()})
		if !known {
			w.WriteHeader(404)
			return
		}
		s.mu.Lock()
		delete(s.sessions, sid)
		s.mu.Unlock()
		w.WriteHeader(200)
		return
	case http.MethodGet:
		s.rec.add(httpReq{HTTPMethod: r.Method, Header: r.Header.Clone()})
		if !known {
			writeJSON(w, 404, rpcError(nil, jsonrpc.CodeSessionNotFound, "Session not found", ""))
			return
		}
		s.get(w, r)
		return
	}
	req, ok := s.rec.read(w, r)
	if !ok {
		return
	}
	if req.Method == "initialize" {
		s.mu.Lock()
		s.nsess++
		sid := fmt.Sprintf("sess-%d", s.nsess)
		s.sessions[sid] = true
		s.mu.Unlock()
		v, _ := req.Params["protocolVersion"].(string)
		if v != "2025-06-18" {
			v = "2025-11-25"
		}
		w.Header().Set("Mcp-Session-Id", sid)
		writeJSON(w, 200, rpcResult(req.ID, `{"protocolVersion":"`+v+`","capabilities":{"tools":{}},"serverInfo":{"name":"scripted-legacy","version":"1"}}`))
		return
	}
	switch {
	case sid == "" && s.hangDiscover:
		<-r.Context().Done()
		return
	case sid == "":
		writeJSON(w, 400, rpcError(nil, jsonrpc.CodeServerError, "Bad Request: No valid session ID provided", ""))
		return
	case !known:
		writeJSON(w, 404, rpcError(nil, jsonrpc.CodeSessionNotFound, "Session not found", ""))
		return
	}
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "2025-11-25" && v != "2025-06-18" {
		writeJSON(w, 400, rpcError(nil, jsonrpc.CodeServerError, "Bad Request: Unsupported protocol version", ""))
		return
	}
	if req.isNotification() {
		switch req.Method {
		case "notifications/initialized":
			if s.initializedStatus != 0 {
				w.WriteHeader(s.initializedStatus)
				return
			}
		case "notifications/cancelled":
			key, _ := json.Marshal(req.Params["requestId"])
			s.mu.Lock()
			if ch, ok := s.inflight[string(key)]; ok {
				close(ch)
				delete(s.inflight, string(key))
			}
			s.mu.Unlock()
			s.rec.cancelled <- fmt.Sprint(req.Params["requestId"])
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	switch req.Method {
	case "ping":
		writeJSON(w, 200, rpcResult(req.ID, `{}`))
	case "tools/call":
		s.slow(w, r, req)
	default:
		writeJSON(w, 200, rpcError(req.ID, jsonrpc.CodeMethodNotFound, "Method not found", ""))
	}
}

// slow streams progress (event ids "<id>-k") until done or cancelled by a
// notifications/cancelled, in which case the stream ends without a response.
func (s *legacyServer) slow(w http.ResponseWriter, r *http.Request, req httpReq) {
	args, _ := req.Params["arguments"].(map[string]any)
	steps, stepMs := intParam(args["steps"], 3), intParam(args["stepMs"], 10)
	token := req.meta()[MetaProgressToken]
	id := string(req.ID)
	cancelled := make(chan struct{})
	s.mu.Lock()
	s.inflight[id] = cancelled
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.inflight, id)
		s.mu.Unlock()
	}()
	sw := startSSE(w)
	sw.raw("id: " + id + "-0\ndata:\n\n") // priming event
	for k := 1; k <= steps; k++ {
		t := time.NewTimer(time.Duration(stepMs) * time.Millisecond)
		select {
		case <-cancelled:
			t.Stop()
			return
		case <-r.Context().Done():
			t.Stop()
			s.rec.disconnected <- id
			return
		case <-t.C:
		}
		if token != nil {
			sw.data(fmt.Sprintf("%s-%d", id, k), progressNote(token, k, steps))
		}
	}
	sw.data(fmt.Sprintf("%s-%d", id, steps+1), rpcResult(req.ID, `{"content":[]}`))
}

// get serves the standalone stream, or replays a response on resumption.
func (s *legacyServer) get(w http.ResponseWriter, r *http.Request) {
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		id, _, _ := strings.Cut(last, "-")
		sw := startSSE(w)
		sw.data(id+"-9", rpcResult(json.RawMessage(id), `{"content":[],"replayed":true}`))
		return
	}
	sw := startSSE(w)
	sw.raw("id: g-0\ndata:\n\n")
	sw.data("g-1", `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}`)
	<-r.Context().Done()
}

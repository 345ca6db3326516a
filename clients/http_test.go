package clients

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/sse"
)

func newModern(t *testing.T, opts HTTPOptions) (*HTTPWire, *modernServer) {
	t.Helper()
	s := &modernServer{rec: newRecorder()}
	return serve(t, s, opts), s
}

func newLegacy(t *testing.T, opts HTTPOptions, tweak func(*legacyServer)) (*HTTPWire, *legacyServer) {
	t.Helper()
	s := newLegacyServer()
	if tweak != nil {
		tweak(s)
	}
	return serve(t, s, opts), s
}

func mustNegotiate(t *testing.T, w *HTTPWire, force string) Session {
	t.Helper()
	s, err := w.Negotiate(testCtx(t), force)
	if err != nil {
		t.Fatalf("Negotiate(%q): %v", force, err)
	}
	return s
}

func TestEncodeHeaderValue(t *testing.T) {
	for in, want := range map[string]string{
		"us-west1":           "us-west1",
		"a b\tc":             "a b\tc",
		"Hello, 世界":          "=?base64?SGVsbG8sIOS4lueVjA==?=",
		" padded ":           "=?base64?IHBhZGRlZCA=?=",
		"line1\nline2":       "=?base64?bGluZTEKbGluZTI=?=",
		"=?base64?literal?=": "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=",
	} {
		if got := EncodeHeaderValue(in); got != want {
			t.Errorf("EncodeHeaderValue(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestHTTPModernNegotiate(t *testing.T) {
	w, srv := newModern(t, HTTPOptions{ClientName: "probe-test", ClientVersion: "9"})
	s := mustNegotiate(t, w, "")
	if s.Era != EraModern || s.Version != "2026-07-28" || !strings.Contains(string(s.ServerInfo), "scripted-modern") ||
		!slices.Equal(s.SupportedVersions, []string{"2026-07-28", "2025-11-25"}) {
		t.Fatalf("session = %+v", s)
	}
	if w.SessionID() != "" {
		t.Fatalf("modern session id %q", w.SessionID())
	}
	if got := srv.rec.methods(); !slices.Equal(got, []string{"POST server/discover"}) {
		t.Fatalf("requests = %v", got)
	}
	r := srv.rec.all()[0]
	h := r.Header
	for k, want := range map[string]string{
		"Mcp-Protocol-Version": "2026-07-28",
		"Mcp-Method":           "server/discover",
		"Content-Type":         "application/json",
		"Accept":               "application/json, text/event-stream",
		"User-Agent":           "probe-test/9",
	} {
		if got := h.Get(k); got != want {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}
	for _, k := range []string{"Mcp-Session-Id", "Mcp-Name", "Last-Event-Id", "Accept-Encoding"} {
		if _, ok := h[k]; ok {
			t.Errorf("unexpected header %s: %q", k, h.Get(k))
		}
	}
	meta := r.meta()
	if meta[MetaProtocolVersion] != "2026-07-28" || meta[MetaClientCapabilities] == nil {
		t.Errorf("probe _meta = %v", meta)
	}
	if ci, _ := meta[MetaClientInfo].(map[string]any); ci["name"] != "probe-test" {
		t.Errorf("probe clientInfo = %v", meta[MetaClientInfo])
	}
}

func TestHTTPModernHeadersAndMeta(t *testing.T) {
	w, srv := newModern(t, HTTPOptions{Header: http.Header{"Authorization": {"Bearer x"}}})
	mustNegotiate(t, w, "")
	ctx := testCtx(t)
	params := map[string]any{
		"name":      "echo",
		"arguments": map[string]any{"text": "hé"},
		"_meta":     map[string]any{MetaClientCapabilities: map[string]any{"mine": true}, "custom": 1},
	}
	m, err := w.Call(ctx, "tools/call", params)
	if err != nil || m.Env.Kind != jsonrpc.Response || !strings.Contains(string(m.Raw), `"hé"`) {
		t.Fatalf("echo = %s, %v", m.Raw, err)
	}
	if m.Stream != m.Env.ID.String() || m.EventID != "" {
		t.Errorf("JSON body message stream %q event id %q", m.Stream, m.EventID)
	}
	if _, ok := params["_meta"].(map[string]any)[MetaProtocolVersion]; ok {
		t.Fatal("caller's _meta modified")
	}
	r, _ := srv.rec.find("tools/call")
	if r.Header.Get("Mcp-Name") != "echo" || r.Header.Get("Mcp-Method") != "tools/call" || r.Header.Get("Authorization") != "Bearer x" {
		t.Errorf("headers = %v", r.Header)
	}
	meta := r.meta()
	if meta[MetaProtocolVersion] != "2026-07-28" || meta["custom"] != json.Number("1") {
		t.Errorf("_meta = %v", meta)
	}
	if caps, _ := meta[MetaClientCapabilities].(map[string]any); caps["mine"] != true {
		t.Errorf("caller's clientCapabilities overwritten: %v", meta[MetaClientCapabilities])
	}
	if bytes.HasSuffix(r.Body, []byte("\n")) {
		t.Error("body ends with a newline")
	}

	// A name that needs the Base64 sentinel; the server compares it.
	m, err = w.Call(ctx, "tools/call", map[string]any{"name": "naïve", "arguments": map[string]any{}})
	if err != nil || m.Env.Error == nil || m.Env.Error.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("naïve = %s, %v", m.Raw, err)
	}

	// StartHeader overrides a computed header: the server rejects the
	// mismatch with an id-less JSON-RPC error, which Wait returns.
	c, err := w.StartHeader(ctx, jsonrpc.StringID("x"), "tools/call", map[string]any{"name": "echo"}, http.Header{"Mcp-Name": {"other"}})
	if err != nil {
		t.Fatal(err)
	}
	m, err = c.Wait(ctx)
	if err != nil || c.Status() != 400 || m.Env.Error == nil || m.Env.Error.Code != jsonrpc.CodeHeaderMismatch || m.Stream != `"x"` {
		t.Fatalf("mismatch = %d %s (stream %q), %v", c.Status(), m.Raw, m.Stream, err)
	}
	if c.RequestHeader().Get("Mcp-Name") != "other" || !bytes.Contains(c.Request(), []byte(`"id":"x"`)) {
		t.Errorf("request = %v %s", c.RequestHeader(), c.Request())
	}

	// An unknown method: 404 with -32601.
	m, err = w.Call(ctx, "nope/nope", nil)
	if err != nil || m.Env.Error == nil || m.Env.Error.Code != jsonrpc.CodeMethodNotFound {
		t.Fatalf("nope = %s, %v", m.Raw, err)
	}
}

func TestHTTPModernProgressSSE(t *testing.T) {
	w, _ := newModern(t, HTTPOptions{})
	mustNegotiate(t, w, "")
	ctx := testCtx(t)
	from := w.Len()
	c, err := w.Start(ctx, jsonrpc.IntID(42), "tools/call", w.ProgressParams("tok", map[string]any{"name": "slow", "arguments": map[string]any{"steps": 3, "stepMs": 5}}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Status() != 200 || !c.IsSSE() || c.Header().Get("X-Accel-Buffering") != "no" {
		t.Fatalf("status %d header %v", c.Status(), c.Header())
	}
	m, err := c.Wait(ctx)
	if err != nil || m.Env.Kind != jsonrpc.Response || m.Env.ID != jsonrpc.IntID(42) {
		t.Fatalf("slow = %s, %v", m.Raw, err)
	}
	select {
	case <-c.Ended():
	case <-ctx.Done():
		t.Fatal("stream did not end")
	}
	if err := c.EndErr(); err != nil {
		t.Fatalf("EndErr = %v", err)
	}
	evs := c.StreamEvents()
	if len(evs) != 4 {
		t.Fatalf("%d events", len(evs))
	}
	for i := 1; i < len(evs); i++ {
		if evs[i].At.Before(evs[i-1].At) {
			t.Fatal("event times go backwards")
		}
	}
	msgs := w.Since(from)
	if len(msgs) != 4 || len(c.Messages()) != 4 {
		t.Fatalf("%d messages, %d on the call", len(msgs), len(c.Messages()))
	}
	for i, m := range msgs[:3] {
		if m.Env.Method != "notifications/progress" || m.Env.ProgressToken != jsonrpc.StringID("tok") || m.Stream != "42" || evs[i].Seq != m.Seq {
			t.Fatalf("message %d = %+v (event seq %d)", i, m, evs[i].Seq)
		}
	}
	// WaitFor sees the already-received response.
	if got, err := w.WaitFor(ctx, from, func(m Message) bool { return m.Env.Kind.IsReply() }); err != nil || got.Seq != msgs[3].Seq {
		t.Fatalf("WaitFor = %+v, %v", got, err)
	}
}

func TestHTTPOddEvents(t *testing.T) {
	w, _ := newModern(t, HTTPOptions{})
	mustNegotiate(t, w, "")
	ctx := testCtx(t)
	c, err := w.Start(ctx, jsonrpc.IntID(7), "tools/call", map[string]any{"name": "odd"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.Wait(ctx)
	if err != nil || m.Env.Kind != jsonrpc.Response || m.EventID != "" {
		t.Fatalf("odd = %+v, %v", m, err)
	}
	<-c.Ended()
	evs := c.StreamEvents()
	if len(evs) != 7 {
		t.Fatalf("%d events: %+v", len(evs), evs)
	}
	if !evs[0].IsComment || evs[0].Comment != "hello" || evs[0].Seq != -1 {
		t.Errorf("comment event = %+v", evs[0])
	}
	if !evs[1].HasID || evs[1].ID != "e1" || !evs[1].HasData || evs[1].Data != "" || evs[1].Seq != -1 {
		t.Errorf("priming event = %+v", evs[1])
	}
	if evs[4].Retry != 1500 || !evs[4].HasRetry || evs[4].Seq != -1 {
		t.Errorf("retry event = %+v", evs[4])
	}
	if !evs[6].IsComment || evs[6].Comment != "after" {
		t.Errorf("trailing comment = %+v", evs[6])
	}
	msgs := c.Messages()
	if len(msgs) != 3 {
		t.Fatalf("%d messages", len(msgs))
	}
	if msgs[0].Env.Kind != jsonrpc.Invalid || string(msgs[0].Raw) != "not json" || msgs[0].EventType != "note" {
		t.Errorf("invalid message = %+v", msgs[0])
	}
	if msgs[1].EventID != "e2" || msgs[1].Env.Method != "notifications/progress" || !slices.Equal(evs[3].InnerComments, []string{"inner"}) {
		t.Errorf("progress = %+v, event %+v", msgs[1], evs[3])
	}
	if c.LastEventID() != "e2" {
		t.Errorf("LastEventID = %q", c.LastEventID())
	}
	if got := c.Events(); len(got) != 7 || !bytes.Equal(got[2].Raw, []byte("event: note\ndata: not json\n\n")) {
		t.Errorf("Events()[2].Raw = %q", got[2].Raw)
	}
	// WaitEvent finds an already-read comment and reports the end.
	if e, err := c.WaitEvent(ctx, 1, func(e StreamEvent) bool { return e.IsComment }); err != nil || e.Comment != "after" {
		t.Errorf("WaitEvent = %+v, %v", e, err)
	}
	if _, err := c.WaitEvent(ctx, 0, func(StreamEvent) bool { return false }); !errors.Is(err, ErrConnEnded) {
		t.Errorf("WaitEvent past the end = %v", err)
	}
}

func TestHTTPCutMidEvent(t *testing.T) {
	w, _ := newModern(t, HTTPOptions{})
	mustNegotiate(t, w, "")
	ctx := testCtx(t)
	c, err := w.Start(ctx, w.NewID(), "tools/call", map[string]any{"name": "cut"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Wait(ctx); !errors.Is(err, ErrNoResponse) || !errors.Is(err, sse.ErrIncomplete) {
		t.Fatalf("Wait = %v", err)
	}
	err = c.EndErr()
	if !errors.Is(err, sse.ErrIncomplete) || !errors.Is(err, ErrStreamCut) {
		t.Fatalf("EndErr = %v", err)
	}
	if got := string(c.PartialEvent()); got != `data: {"jsonrpc":"2.0",` {
		t.Errorf("partial = %q", got)
	}
	if len(c.Events()) != 1 || len(c.Messages()) != 1 {
		t.Errorf("%d events, %d messages", len(c.Events()), len(c.Messages()))
	}

	// Cut at an event boundary: not incomplete, but still cut.
	c, err = w.Start(ctx, w.NewID(), "tools/call", map[string]any{"name": "cut-between"})
	if err != nil {
		t.Fatal(err)
	}
	<-c.Ended()
	if err := c.EndErr(); errors.Is(err, sse.ErrIncomplete) || !errors.Is(err, ErrStreamCut) {
		t.Fatalf("EndErr = %v", err)
	}
}

func TestHTTPModernCancelClosesStream(t *testing.T) {
	w, srv := newModern(t, HTTPOptions{})
	mustNegotiate(t, w, "")
	ctx := testCtx(t)
	from := w.Len()
	c, err := w.Start(ctx, jsonrpc.IntID(5), "tools/call", w.ProgressParams(1, map[string]any{"name": "slow", "arguments": map[string]any{"steps": 200, "stepMs": 10}}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WaitFor(ctx, from, func(m Message) bool { return m.Env.Method == "notifications/progress" }); err != nil {
		t.Fatal(err)
	}
	how, err := w.Cancel(ctx, c, "test")
	if err != nil || how != "stream-close" {
		t.Fatalf("Cancel = %q, %v", how, err)
	}
	select {
	case <-c.Ended():
	default:
		t.Fatal("Cancel returned before the stream ended")
	}
	if err := c.EndErr(); err != ErrClosedByClient {
		t.Fatalf("EndErr = %v", err)
	}
	select {
	case id := <-srv.rec.disconnected:
		if id != "5" {
			t.Fatalf("disconnected %s", id)
		}
	case <-ctx.Done():
		t.Fatal("the server did not see the disconnect")
	}
	if _, err := c.Wait(ctx); !errors.Is(err, ErrNoResponse) || !errors.Is(err, ErrClosedByClient) {
		t.Fatalf("Wait = %v", err)
	}
	if _, ok := srv.rec.find("notifications/cancelled"); ok {
		t.Fatal("notifications/cancelled sent in the modern era")
	}
	c.Close() // idempotent
}

func TestHTTPContextEndClosesStream(t *testing.T) {
	w, srv := newModern(t, HTTPOptions{})
	mustNegotiate(t, w, "")
	ctx, cancel := context.WithCancel(testCtx(t))
	c, err := w.Start(ctx, jsonrpc.IntID(9), "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"steps": 200, "stepMs": 10}})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	<-c.Ended()
	if err := c.EndErr(); !errors.Is(err, ErrClosedByClient) || !errors.Is(err, context.Canceled) {
		t.Fatalf("EndErr = %v", err)
	}
	select {
	case <-srv.rec.disconnected:
	case <-time.After(testTimeout):
		t.Fatal("the server did not see the disconnect")
	}
}

func TestHTTPModernGETAndDelete405(t *testing.T) {
	w, srv := newModern(t, HTTPOptions{})
	mustNegotiate(t, w, "")
	ctx := testCtx(t)
	c, err := w.OpenGET(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	<-c.Ended()
	if c.Status() != 405 || c.Stream() != "GET#1" || c.EndErr() != nil {
		t.Fatalf("GET = %d %q %v", c.Status(), c.Stream(), c.EndErr())
	}
	if _, err := c.Wait(ctx); err == nil {
		t.Fatal("Wait on a GET stream succeeded")
	}
	if st, err := w.Delete(ctx); err != nil || st != 405 {
		t.Fatalf("DELETE = %d, %v", st, err)
	}
	reqs := srv.rec.all()
	get := reqs[len(reqs)-2]
	if get.HTTPMethod != "GET" || get.Header.Get("Accept") != "text/event-stream" || get.Header.Get("Mcp-Protocol-Version") != "2026-07-28" {
		t.Fatalf("GET request = %+v", get)
	}
	if _, ok := get.Header["Last-Event-Id"]; ok {
		t.Fatal("Last-Event-ID sent without being asked")
	}
	// The 405 bodies are recorded as messages of their streams.
	var streams []string
	for _, m := range w.Messages() {
		streams = append(streams, m.Stream)
	}
	if !slices.Contains(streams, "GET#1") || !slices.Contains(streams, "DELETE#1") {
		t.Errorf("streams = %v", streams)
	}
}

func TestHTTPUnsupportedVersionRetry(t *testing.T) {
	s := &modernServer{rec: newRecorder(), unsupportedFirst: true}
	w := serve(t, s, HTTPOptions{})
	sess := mustNegotiate(t, w, "")
	if sess.Era != EraModern || sess.Version != "2026-07-28" {
		t.Fatalf("session = %+v", sess)
	}
	if got := s.rec.methods(); !slices.Equal(got, []string{"POST server/discover", "POST server/discover"}) {
		t.Fatalf("requests = %v", got)
	}
}

func TestHTTPModernErrorsNeverFallBack(t *testing.T) {
	for name, srv := range map[string]*modernServer{
		"unsupported": {rejectStatus: 400, rejectBody: `{"jsonrpc":"2.0","id":ID,"error":{"code":-32022,"message":"Unsupported","data":{"supported":["2099-01-01"]}}}`},
		"mismatch":    {rejectStatus: 400, rejectBody: `{"jsonrpc":"2.0","id":ID,"error":{"code":-32020,"message":"Header mismatch"}}`},
		"capability":  {rejectStatus: 400, rejectBody: `{"jsonrpc":"2.0","id":ID,"error":{"code":-32021,"message":"Missing capability"}}`},
	} {
		t.Run(name, func(t *testing.T) {
			srv.rec = newRecorder()
			w := serve(t, srv, HTTPOptions{})
			s, err := w.Negotiate(testCtx(t), "")
			if !errors.Is(err, ErrNegotiation) || s.Era != "" || w.Session().Era != "" {
				t.Fatalf("Negotiate = %+v, %v", s, err)
			}
			if _, ok := srv.rec.find("initialize"); ok {
				t.Fatal("fell back to initialize")
			}
		})
	}
}

func TestHTTPServerErrorIsNotLegacy(t *testing.T) {
	srv := &modernServer{rec: newRecorder(), rejectStatus: 503, rejectBody: "busy"}
	w := serve(t, srv, HTTPOptions{})
	if _, err := w.Negotiate(testCtx(t), ""); !errors.Is(err, ErrUnexpectedStatus) {
		t.Fatalf("Negotiate = %v", err)
	}
	if _, ok := srv.rec.find("initialize"); ok {
		t.Fatal("fell back to initialize")
	}
}

func TestHTTPForceModernOnLegacyFails(t *testing.T) {
	w, srv := newLegacy(t, HTTPOptions{}, nil)
	if _, err := w.Negotiate(testCtx(t), "2026-07-28"); !errors.Is(err, ErrNegotiation) {
		t.Fatalf("Negotiate = %v", err)
	}
	if _, ok := srv.rec.find("initialize"); ok {
		t.Fatal("forced modern fell back to initialize")
	}
}

func TestHTTPRawPOST(t *testing.T) {
	w, srv := newLegacy(t, HTTPOptions{Header: http.Header{"Authorization": {"Bearer x"}}}, nil)
	mustNegotiate(t, w, "")
	ctx := testCtx(t)
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	resp, got, err := w.RawPOST(ctx, body, http.Header{"Origin": {"http://evil.example"}, "Content-Type": {"application/json"}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 403 || !strings.Contains(string(got), "Forbidden origin") {
		t.Fatalf("RawPOST = %d %s", resp.StatusCode, got)
	}
	if again, _ := readAllString(resp); again != string(got) {
		t.Errorf("resp.Body = %q", again)
	}
	reqs := srv.rec.all()
	h := reqs[len(reqs)-1].Header
	for k := range h {
		if k != "Origin" && k != "Content-Type" && k != "Content-Length" {
			t.Errorf("RawPOST added header %s: %q", k, h.Get(k))
		}
	}
	msgs := w.Messages()
	if last := msgs[len(msgs)-1]; last.Stream != "RAW#1" || last.Env.Kind != jsonrpc.ErrorReply {
		t.Errorf("last message = %+v", last)
	}

	// An SSE answer is read up to its first data event (the priming event
	// does not count), not to its end.
	slow := []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"steps":100,"stepMs":20},"_meta":{"progressToken":1}}}`)
	start := time.Now()
	resp, got, err = w.RawPOST(ctx, slow, http.Header{
		"Content-Type":         {"application/json"},
		"Accept":               {"application/json, text/event-stream"},
		"Mcp-Session-Id":       {w.SessionID()},
		"Mcp-Protocol-Version": {"2025-11-25"},
	})
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("RawPOST slow = %v, %v", resp, err)
	}
	if !strings.HasPrefix(string(got), "id: 2-0\ndata:\n\nid: 2-1\ndata: {") || time.Since(start) > time.Second {
		t.Fatalf("RawPOST SSE = %q after %v", got, time.Since(start))
	}
}

func readAllString(resp *http.Response) (string, error) {
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func TestHTTPCloseEndsEverything(t *testing.T) {
	s := newLegacyServer()
	w := serve(t, s, HTTPOptions{})
	mustNegotiate(t, w, "")
	ctx := testCtx(t)
	g, err := w.OpenGET(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := w.Start(ctx, w.NewID(), "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"steps": 500, "stepMs": 10}})
	if err != nil {
		t.Fatal(err)
	}
	waitErr := make(chan error, 1)
	go func() {
		_, err := w.WaitFor(ctx, w.Len()+1000, func(Message) bool { return true })
		waitErr <- err
	}()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, x := range []*HTTPCall{g, c} {
		select {
		case <-x.Ended():
		default:
			t.Fatalf("%s still open after Close", x.Stream())
		}
		if x.EndErr() != ErrClosedByClient {
			t.Fatalf("%s EndErr = %v", x.Stream(), x.EndErr())
		}
	}
	if err := <-waitErr; !errors.Is(err, ErrClosed) {
		t.Fatalf("WaitFor = %v", err)
	}
	if _, err := w.Start(ctx, w.NewID(), "ping", nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Start after Close = %v", err)
	}
	if _, err := w.Notify(ctx, "x", nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Notify after Close = %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestHTTPConcurrentCalls(t *testing.T) {
	w, _ := newModern(t, HTTPOptions{})
	mustNegotiate(t, w, "")
	ctx := testCtx(t)
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			m, err := w.Call(ctx, "tools/call", w.ProgressParams(i, map[string]any{"name": "slow", "arguments": map[string]any{"steps": 3, "stepMs": 2}}))
			if err == nil && m.Env.Kind != jsonrpc.Response {
				err = errors.New(string(m.Raw))
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	seqs := map[int]bool{}
	for i, m := range w.Messages() {
		if m.Seq != i || seqs[m.Seq] {
			t.Fatalf("bad seq %d at %d", m.Seq, i)
		}
		seqs[m.Seq] = true
	}
	if n := len(w.Messages()); n != 1+8*4 {
		t.Fatalf("%d messages", n)
	}
}

func TestHTTPConnectionRefused(t *testing.T) {
	w := NewHTTPWire("http://127.0.0.1:1/mcp", HTTPOptions{})
	defer w.Close()
	if _, err := w.Negotiate(testCtx(t), ""); err == nil || errors.Is(err, ErrNegotiation) {
		t.Fatalf("Negotiate = %v", err)
	}
}

func TestHTTPRawPOSTHost(t *testing.T) {
	got := make(chan string, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Host
		w.WriteHeader(403)
	})
	w := serve(t, h, HTTPOptions{})
	resp, body, err := w.RawPOST(testCtx(t), nil, http.Header{"Host": {"evil.example:80"}})
	if err != nil || resp.StatusCode != 403 || len(body) != 0 {
		t.Fatalf("RawPOST = %v %q %v", resp, body, err)
	}
	if h := <-got; h != "evil.example:80" {
		t.Fatalf("Host = %q", h)
	}
	if n := w.Len(); n != 0 {
		t.Fatalf("%d messages from an empty body", n)
	}
}

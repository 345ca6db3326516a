package faultproxy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/sse"
)

// exchange is one HTTP request through the proxy and its response.
type exchange struct {
	p    *HTTP
	w    http.ResponseWriter
	r    *http.Request
	name string
	uri  string // the request target, as forwarded
	body []byte
	rec  *exchangeRecord // the heads and messages recorded
	// cctx ends when the client goes away.
	cctx context.Context
	pend sync.WaitGroup
	// upCtx is the upstream request's context: &own on the proxy's own
	// server (sc set), else a child of the request's context (upCancel).
	upCtx    context.Context
	sc       *srvConn
	own      exchangeCtx
	upCancel context.CancelFunc

	mu          sync.Mutex
	forwarded   bool
	resp        *http.Response
	fwdErr      error
	replaced    int
	replaceBody []byte
	headersSent bool
	cut         bool
	cutFlag     atomic.Bool // cut, for isCut
	reset       bool
	bufLimit    int
	buf         []byte
	bps         int
	// tStart and tSent pace a throttled stream: tSent bytes since tStart.
	tStart time.Time
	tSent  int64
	// early holds bytes injected toward the client before the response
	// head was sent; they open the event stream, if there is one.
	early []byte
	// unflushed are events relayed (written) but not yet flushed; they
	// count as passed at the flush. See relay and flushingBody.
	unflushed      []*Message
	unflushedBytes int
	// headUnflushed: the response head is written, not yet flushed.
	headUnflushed bool
	// bsink is the JSON response body's sink (relayBody), part of the
	// exchange to save an allocation per exchange.
	bsink bodySink
}

var _ StreamControl = (*exchange)(nil)

// upStop ends the upstream request: its context, and on the proxy's own
// server the connection's upstream connection if the request is using it
// (interruptUp).
func (ex *exchange) upStop() {
	if ex.sc == nil {
		ex.upCancel()
		return
	}
	ex.own.stop()
	ex.sc.interruptUp()
}

// forward sends the request upstream once.
func (ex *exchange) forward(body []byte) (*http.Response, error) {
	// The connection-per-connection path (httpupstream.go) sends the
	// client's head as it is; a request that gets credentials added
	// (Authorize, which needs the upstream URL: OAuth discovery) takes
	// the http.Client below.
	if w, ok := ex.w.(*responseWriter); ok && ex.p.opts.Authorize == nil {
		if resp, ok, err := w.sc.roundTrip(ex.upCtx, ex.r, ex.uri, body); ok {
			return resp, err
		}
	}
	u := *ex.p.upstream
	u.Path, u.RawPath, u.RawQuery = ex.r.URL.Path, ex.r.URL.RawPath, ex.r.URL.RawQuery
	req, err := http.NewRequestWithContext(ex.upCtx, ex.r.Method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = ex.r.Header.Clone()
	for _, h := range hopHeaders {
		req.Header.Del(h)
	}
	if err := ex.p.authorize(req); err != nil {
		return nil, err
	}
	if len(body) == 0 && ex.r.Method != http.MethodPost {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	return ex.p.client.Do(req)
}

// lost answers the client when its request never reached the server: a
// notification or response gets 202 (as if accepted), a request a response
// stream that ends before any event from the server (the request was lost
// in transit); events a fault injected toward the client go out on it.
func (ex *exchange) lost(msg *Message) {
	env := msg.Envelope()
	if env.Kind == jsonrpc.Request {
		ex.p.tr.Add(Entry{Kind: EntryNote, Stream: ex.name, Text: "request never reached the server: answered with an event stream of the proxy's own"})
		ex.mu.Lock()
		ex.w.Header().Set("Content-Type", "text/event-stream")
		ex.w.WriteHeader(http.StatusOK)
		ex.headersSent = true
		ex.mu.Unlock()
		if early := ex.takeEarly(); len(early) > 0 {
			_ = ex.write(early, true)
		}
		return
	}
	ex.discardEarly()
	ex.p.tr.Add(Entry{Kind: EntryNote, Stream: ex.name, Text: "message never reached the server: answered 202"})
	ex.w.WriteHeader(http.StatusAccepted)
}

// takeEarly returns, and forgets, the bytes injected toward the client
// before the response head was sent.
func (ex *exchange) takeEarly() []byte {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	b := ex.early
	ex.early = nil
	return b
}

// discardEarly records that bytes injected toward the client before the
// response head had no event stream to go to.
func (ex *exchange) discardEarly() {
	if early := ex.takeEarly(); len(early) > 0 {
		ex.p.tr.Add(Entry{Kind: EntryNote, Dir: ServerToClient, Stream: ex.name, Raw: early, Text: "injected event discarded: the response is not an event stream"})
	}
}

func (ex *exchange) writeReplacement() {
	ex.discardEarly()
	ex.mu.Lock()
	code, body := ex.replaced, ex.replaceBody
	ex.headersSent = true
	ex.mu.Unlock()
	ex.p.tr.Add(Entry{Kind: EntryHTTP, Dir: ServerToClient, Stream: ex.name, HTTP: &HTTPInfo{Status: code}, Text: "replaced by the proxy"})
	if len(body) > 0 {
		ex.w.Header().Set("Content-Type", "application/json")
	}
	ex.w.WriteHeader(code)
	_, _ = ex.w.Write(body)
}

// copyHeaders sends the upstream response head to the client.
func (ex *exchange) copyHeaders(resp *http.Response, dropLength bool) {
	if w, ok := ex.w.(*responseWriter); ok && w.header == nil {
		w.adopt(resp.Header, dropLength)
		ex.w.WriteHeader(resp.StatusCode)
		ex.headersSent = true
		return
	}
	h := ex.w.Header()
	for k, v := range resp.Header {
		h[k] = append([]string(nil), v...)
	}
	for _, k := range hopHeaders {
		h.Del(k)
	}
	if dropLength {
		h.Del("Content-Length")
	}
	ex.w.WriteHeader(resp.StatusCode)
	ex.headersSent = true
}

// isCut reports whether the stream was cut, without the lock (the relay
// asks before every event).
func (ex *exchange) isCut() bool { return ex.cutFlag.Load() }

// reqSink delivers the client's message by forwarding it upstream.
type reqSink struct{ ex *exchange }

var _ sink = reqSink{}

func (s reqSink) deliver(msg *Message, _ bool) error {
	ex := s.ex
	ex.mu.Lock()
	first := !ex.forwarded
	ex.forwarded = true
	ex.mu.Unlock()
	resp, err := ex.forward(msg.Raw)
	ex.p.markPassed(msg)
	if first {
		ex.mu.Lock()
		ex.resp, ex.fwdErr = resp, err
		ex.mu.Unlock()
		return err
	}
	// A duplicate: its answer is recorded and discarded.
	if err != nil {
		ex.p.tr.Add(Entry{Kind: EntryNote, Stream: ex.name, Text: "duplicate delivery failed: " + err.Error()})
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	ex.p.tr.Add(Entry{Kind: EntryNote, Dir: ServerToClient, Stream: ex.name, Raw: b, Text: fmt.Sprintf("answer to the duplicate (status %d), not passed on", resp.StatusCode)})
	return nil
}

func (s reqSink) inject(dir Direction, raw []byte) error { return s.ex.inject(dir, raw) }
func (s reqSink) pending() *sync.WaitGroup               { return &s.ex.pend }
func (s reqSink) stream() StreamControl                  { return s.ex }

// bodySink delivers a JSON response body.
type bodySink struct {
	ex        *exchange
	resp      *http.Response
	delivered bool
}

var _ sink = (*bodySink)(nil)

func (s *bodySink) deliver(msg *Message, _ bool) error {
	ex := s.ex
	ex.mu.Lock()
	if ex.cut {
		ex.mu.Unlock()
		return errClosed
	}
	if !ex.headersSent {
		ex.copyHeaders(s.resp, len(msg.Raw) != int(s.resp.ContentLength))
	}
	s.delivered = true
	_, err := ex.w.Write(msg.Raw)
	ex.mu.Unlock()
	ex.p.markPassed(msg)
	return err
}

func (s *bodySink) inject(dir Direction, raw []byte) error { return s.ex.inject(dir, raw) }
func (s *bodySink) pending() *sync.WaitGroup               { return &s.ex.pend }
func (s *bodySink) stream() StreamControl                  { return s.ex }

// streamSink delivers SSE events.
type streamSink struct{ ex *exchange }

var _ sink = streamSink{}

func (s streamSink) deliver(msg *Message, flush bool) error {
	if !flush {
		// No fault acted on it: relayed as it came, flushed with the
		// events that arrived with it.
		return s.ex.relay(msg)
	}
	if err := s.ex.write(msg.Raw, true); err != nil {
		return err
	}
	s.ex.p.markPassed(msg)
	return nil
}

func (s streamSink) inject(dir Direction, raw []byte) error { return s.ex.inject(dir, raw) }
func (s streamSink) pending() *sync.WaitGroup               { return &s.ex.pend }
func (s streamSink) stream() StreamControl                  { return s.ex }

// inject sends a synthetic message: toward the client as an SSE event on
// this exchange's stream, toward the server as a POST with this exchange's
// headers (its answer is recorded, not passed on).
func (ex *exchange) inject(dir Direction, raw []byte) error {
	msg := &Message{Seq: ex.p.seq.Add(1), Dir: dir, Raw: raw, At: ex.p.tr.Since(), Synthetic: true, Stream: ex.name}
	ex.p.tr.Add(Entry{At: msg.At, Kind: EntryMessage, Dir: dir, Seq: msg.Seq, Raw: raw, Stream: ex.name, Fault: "inject", Outcome: OutcomeInjected})
	if dir == ServerToClient {
		ev := sse.Encode(sse.Event{Data: string(raw), HasData: true})
		if err := ex.write(ev, true); err != nil {
			return err
		}
		ex.p.markPassed(msg)
		return nil
	}
	req, err := http.NewRequestWithContext(ex.p.ctx, http.MethodPost, ex.p.upstream.String(), bytes.NewReader(raw))
	if err != nil {
		return err
	}
	req.Header = ex.r.Header.Clone()
	for _, h := range hopHeaders {
		req.Header.Del(h)
	}
	if err := ex.p.authorize(req); err != nil {
		ex.p.tr.Add(Entry{Kind: EntryNote, Stream: ex.name, Text: "injected POST: " + err.Error()})
		return err
	}
	resp, err := ex.p.client.Do(req)
	if err != nil {
		ex.p.tr.Add(Entry{Kind: EntryNote, Stream: ex.name, Text: "injected POST failed: " + err.Error()})
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	ex.p.markPassed(msg)
	ex.p.tr.Add(Entry{Kind: EntryNote, Dir: ServerToClient, Stream: ex.name, Raw: b, Text: fmt.Sprintf("answer to the injected message (status %d), not passed on", resp.StatusCode)})
	return nil
}

// Cut implements StreamControl: the client's stream ends now, and the
// upstream request is cancelled with it.
func (ex *exchange) Cut(reason string) {
	ex.mu.Lock()
	ex.flushPendingLocked() // what was relayed before the cut goes out
	ex.cut = true
	ex.cutFlag.Store(true)
	ex.buf = nil
	ex.mu.Unlock()
	ex.p.tr.Add(Entry{Kind: EntryNote, Stream: ex.name, Text: "stream cut: " + reason})
	ex.upStop()
}

// Reset implements StreamControl: the client's connection is closed
// abruptly, mid-stream.
func (ex *exchange) Reset(reason string) {
	ex.mu.Lock()
	ex.reset = true
	ex.mu.Unlock()
	ex.Cut("connection reset: " + reason)
}

// Buffer implements StreamControl.
func (ex *exchange) Buffer(n int) {
	ex.mu.Lock()
	ex.bufLimit = n
	ex.mu.Unlock()
}

// Throttle implements StreamControl.
func (ex *exchange) Throttle(bps int) {
	ex.mu.Lock()
	ex.bps = bps
	ex.tStart, ex.tSent = time.Now(), 0
	ex.mu.Unlock()
}

// ReplaceStatus implements StreamControl.
func (ex *exchange) ReplaceStatus(code int, body []byte) bool {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.headersSent {
		return false
	}
	ex.replaced, ex.replaceBody = code, body
	return true
}

// authorize lets the proxy's Authorize hook add its credentials to an
// upstream request.
func (p *HTTP) authorize(req *http.Request) error {
	if p.opts.Authorize == nil {
		return nil
	}
	if err := p.opts.Authorize(req); err != nil {
		return fmt.Errorf("credentials for the upstream request: %w", err)
	}
	return nil
}

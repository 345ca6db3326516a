package faultproxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/sse"
)

// HTTPOptions configures a Streamable HTTP link.
type HTTPOptions struct {
	Options
	// Upstream is the server's MCP endpoint URL.
	Upstream string
	// Listen is the proxy's address; empty means 127.0.0.1:0.
	Listen string
	// Rules is the rule set to start with; nil means none.
	Rules *Rules
	// Transport carries requests upstream; nil means a clone of
	// http.DefaultTransport with compression left to the endpoints.
	Transport http.RoundTripper
	// Signal, when set, reaches the process group of a server the harness
	// started, for crash and pause faults.
	Signal func(Signal) error
	// Redact lists header names whose values the transcript hides;
	// Authorization and Cookie are always hidden.
	Redact []string
	// Transcript, when set, is used instead of a new one (to share it with
	// the server process's output).
	Transcript *Transcript
}

// HTTP is a fault proxy in front of a Streamable HTTP server: each POST
// body, each JSON response and each SSE event is a message that goes
// through the rules; with no rule active it relays bytes unchanged and
// flushes at every event boundary.
type HTTP struct {
	*core
	opts     HTTPOptions
	upstream *url.URL
	srv      *http.Server
	ln       net.Listener
	client   *http.Client
	exch     atomic.Int64
	handlers sync.WaitGroup
	redact   map[string]bool

	liveMu sync.Mutex
	live   map[*exchange]struct{} // event streams being relayed
}

// StartHTTP starts a proxy listening on opts.Listen in front of
// opts.Upstream.
func StartHTTP(ctx context.Context, opts HTTPOptions) (*HTTP, error) {
	up, err := url.Parse(opts.Upstream)
	if err != nil || up.Scheme == "" || up.Host == "" {
		return nil, fmt.Errorf("faultproxy: upstream %q is not an absolute URL", opts.Upstream)
	}
	if opts.MaxFrame <= 0 {
		opts.MaxFrame = DefaultMaxFrame
	}
	if opts.Listen == "" {
		opts.Listen = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", opts.Listen)
	if err != nil {
		return nil, fmt.Errorf("faultproxy: listen %s: %w", opts.Listen, err)
	}
	rt := opts.Transport
	if rt == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.DisableCompression = true
		t.MaxIdleConnsPerHost = 64
		d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: fixedRecvBuffer}
		t.DialContext = d.DialContext
		rt = t
	}
	tr := opts.Transcript
	if tr == nil {
		tr = NewTranscript(opts.TranscriptSink)
	}
	p := &HTTP{
		core:     newCore(ctx, tr, opts.Rules, opts.Signal),
		opts:     opts,
		upstream: up,
		ln:       ln,
		client:   &http.Client{Transport: rt, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		redact:   map[string]bool{"Authorization": true, "Cookie": true, "Set-Cookie": true, "Proxy-Authorization": true},
	}
	for _, h := range opts.Redact {
		p.redact[http.CanonicalHeaderKey(h)] = true
	}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(fixedSendBuffers{ln}) }()
	p.tr.Add(Entry{Kind: EntryNote, Text: fmt.Sprintf("proxy %s → %s", p.URL(), opts.Upstream)})
	return p, nil
}

// URL is the proxy's endpoint: the upstream URL with the proxy's address.
func (p *HTTP) URL() string {
	u := *p.upstream
	u.Scheme = "http"
	u.Host = p.ln.Addr().String()
	return u.String()
}

// CutStreams cuts every event stream being relayed, at once (as Cut does
// for one: the client sees its stream end, the upstream request is
// cancelled), and returns how many it cut. A herd test calls it when a
// message barrier says every client has its stream open.
func (p *HTTP) CutStreams(reason string) int {
	p.liveMu.Lock()
	exs := make([]*exchange, 0, len(p.live))
	for ex := range p.live {
		exs = append(exs, ex)
	}
	p.liveMu.Unlock()
	for _, ex := range exs {
		ex.Cut(reason)
	}
	return len(exs)
}

// Addr is the proxy's listening address.
func (p *HTTP) Addr() string { return p.ln.Addr().String() }

// Close stops held messages, closes every open stream and the listener,
// and waits (bounded) for the handlers to end.
func (p *HTTP) Close() error {
	p.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_ = p.srv.Shutdown(ctx)
	_ = p.srv.Close()
	done := make(chan struct{})
	go func() { p.handlers.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		p.tr.Note("proxy handlers did not drain within 3s")
	}
	// Keep-alive connections to the upstream would otherwise stay open
	// (with their goroutines) until the server times them out.
	p.client.CloseIdleConnections()
	return nil
}

// exchange is one HTTP request through the proxy and its response.
type exchange struct {
	p      *HTTP
	w      http.ResponseWriter
	r      *http.Request
	name   string
	body   []byte
	pend   sync.WaitGroup
	upCtx  context.Context
	upStop context.CancelFunc

	mu          sync.Mutex
	forwarded   bool
	resp        *http.Response
	fwdErr      error
	replaced    int
	replaceBody []byte
	headersSent bool
	cut         bool
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
	unflushed []*Message
}

// ServeHTTP relays one exchange.
func (p *HTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.handlers.Add(1)
	defer p.handlers.Done()
	n := p.exch.Add(1)
	ex := &exchange{p: p, w: w, r: r, name: fmt.Sprintf("%s#%d", r.Method, n)}
	ex.upCtx, ex.upStop = context.WithCancel(r.Context())
	defer ex.upStop()
	stop := context.AfterFunc(p.ctx, ex.upStop)
	defer stop()

	body, err := io.ReadAll(io.LimitReader(r.Body, int64(p.opts.MaxFrame)+1))
	if err != nil {
		p.tr.Add(Entry{Kind: EntryNote, Stream: ex.name, Text: "reading the request body: " + err.Error()})
		return
	}
	if len(body) > p.opts.MaxFrame {
		p.tr.Add(Entry{Kind: EntryNote, Stream: ex.name, Text: fmt.Sprintf("request body over %d bytes refused with 413", p.opts.MaxFrame)})
		http.Error(w, "request too large for the proxy", http.StatusRequestEntityTooLarge)
		return
	}
	ex.body = body
	p.tr.Add(Entry{Kind: EntryHTTP, Dir: ClientToServer, Stream: ex.name, HTTP: &HTTPInfo{Method: r.Method, Path: r.URL.RequestURI(), Header: p.headers(r.Header)}})
	msg := &Message{Seq: p.seq.Add(1), Dir: ClientToServer, Raw: body, At: p.tr.Since(), Stream: ex.name, HTTPMethod: r.Method}
	p.record(msg)
	p.apply(msg, reqSink{ex})
	ex.pend.Wait()

	ex.mu.Lock()
	forwarded, resp, fwdErr, replaced, reset := ex.forwarded, ex.resp, ex.fwdErr, ex.replaced, ex.reset
	ex.mu.Unlock()
	if reset {
		// Reset on the client's own message: no answer at all.
		if resp != nil {
			resp.Body.Close()
		}
		panic(http.ErrAbortHandler)
	}
	switch {
	case replaced != 0:
		ex.writeReplacement()
		return
	case !forwarded:
		ex.lost(msg)
		return
	case fwdErr != nil:
		ex.discardEarly()
		p.tr.Add(Entry{Kind: EntryNote, Stream: ex.name, Text: "upstream: " + fwdErr.Error()})
		if r.Context().Err() == nil {
			http.Error(w, "mcp-conform proxy: upstream unreachable: "+fwdErr.Error(), http.StatusBadGateway)
		}
		return
	}
	defer resp.Body.Close()
	p.tr.Add(Entry{Kind: EntryHTTP, Dir: ServerToClient, Stream: ex.name, HTTP: &HTTPInfo{Status: resp.StatusCode, Header: p.headers(resp.Header)}})
	if isEventStream(resp.Header) {
		ex.relaySSE(resp)
	} else {
		ex.relayBody(resp)
	}
	if ex.reset {
		panic(http.ErrAbortHandler)
	}
}

func isEventStream(h http.Header) bool {
	mt, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	return mt == "text/event-stream"
}

// headers copies h for the transcript, hiding secrets.
func (p *HTTP) headers(h http.Header) map[string][]string {
	out := make(map[string][]string, len(h))
	for k, v := range h {
		if p.redact[http.CanonicalHeaderKey(k)] {
			out[k] = []string{"[redacted]"}
			continue
		}
		out[k] = append([]string(nil), v...)
	}
	return out
}

var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// forward sends the request upstream once.
func (ex *exchange) forward(body []byte) (*http.Response, error) {
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

// relayBody relays a non-SSE response: the whole body is one message.
func (ex *exchange) relayBody(resp *http.Response) {
	ex.discardEarly()
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(ex.p.opts.MaxFrame)+1))
	if err != nil {
		// The upstream broke off: the client gets what came, then a
		// broken connection too, not a complete shorter body.
		ex.p.tr.Add(Entry{Kind: EntryNote, Dir: ServerToClient, Stream: ex.name, Text: "reading the response body: " + err.Error() + "; the client's connection is reset after what arrived"})
		ex.mu.Lock()
		ex.reset = true
		ex.mu.Unlock()
	}
	if len(body) == 0 {
		ex.mu.Lock()
		ex.copyHeaders(resp, false)
		ex.mu.Unlock()
		return
	}
	msg := &Message{Seq: ex.p.seq.Add(1), Dir: ServerToClient, Raw: body, At: ex.p.tr.Since(), Stream: ex.name, HTTPMethod: ex.r.Method}
	ex.p.record(msg)
	s := &bodySink{ex: ex, resp: resp}
	ex.p.apply(msg, s)
	ex.pend.Wait()
	ex.mu.Lock()
	defer ex.mu.Unlock()
	switch {
	case ex.replaced != 0 && !ex.headersSent:
		ex.mu.Unlock()
		ex.writeReplacement()
		ex.mu.Lock()
	case !s.delivered && !ex.headersSent:
		ex.p.tr.Add(Entry{Kind: EntryNote, Stream: ex.name, Text: "response lost in transit: the client gets an event stream that ends with no event"})
		ex.w.Header().Set("Content-Type", "text/event-stream")
		ex.w.WriteHeader(http.StatusOK)
		ex.headersSent = true
	case ex.reset && ex.headersSent:
		// What arrived goes out before the connection breaks.
		_ = ex.flushLocked()
	}
}

// relaySSE relays an event stream event by event.
func (ex *exchange) relaySSE(resp *http.Response) {
	ex.p.liveMu.Lock()
	if ex.p.live == nil {
		ex.p.live = map[*exchange]struct{}{}
	}
	ex.p.live[ex] = struct{}{}
	ex.p.liveMu.Unlock()
	defer func() {
		ex.p.liveMu.Lock()
		delete(ex.p.live, ex)
		ex.p.liveMu.Unlock()
	}()
	ex.mu.Lock()
	ex.copyHeaders(resp, true)
	ex.flushLocked()
	ex.mu.Unlock()
	if early := ex.takeEarly(); len(early) > 0 {
		_ = ex.write(early, true)
	}
	rd := sse.NewReader(flushingBody{ex: ex, r: resp.Body}, sse.Options{MaxEventSize: ex.p.opts.MaxFrame})
	s := streamSink{ex}
	var err error
	for {
		var ev sse.Event
		ev, err = rd.Next()
		if err != nil {
			break
		}
		if ex.isCut() {
			continue
		}
		msg := &Message{Seq: ex.p.seq.Add(1), Dir: ServerToClient, Raw: ev.Raw, At: ex.p.tr.Since(), Stream: ex.name,
			HTTPMethod: ex.r.Method, Comment: ev.IsComment, Payload: []byte(ev.Data)}
		ex.p.record(msg)
		ex.p.apply(msg, s)
	}
	// The reader reads no more (its last read may have brought the end
	// of the stream with the last events): flush what it relayed.
	ex.mu.Lock()
	ex.flushPendingLocked()
	ex.mu.Unlock()
	ex.pend.Wait()
	var inc *sse.IncompleteError
	switch {
	case errors.Is(err, io.EOF):
		if t := rd.Trailing(); len(t) > 0 {
			ex.write(t, true)
		}
	case errors.As(err, &inc):
		ex.p.tr.Add(Entry{Kind: EntryNote, Dir: ServerToClient, Stream: ex.name, Raw: inc.Partial, Text: "incomplete event at end of stream (passed on as it came)"})
		ex.write(inc.Partial, true)
	case ex.isCut():
	case ex.r.Context().Err() != nil:
		ex.p.tr.Add(Entry{Kind: EntryNote, Stream: ex.name, Text: "client closed the stream; upstream request cancelled"})
	default:
		// The upstream broke off (or the proxy is closing): pass on the
		// bytes read since the last event, then break the client's
		// connection too, so that it sees a failure and not a clean end.
		t := rd.Trailing()
		ex.p.tr.Add(Entry{Kind: EntryNote, Dir: ServerToClient, Stream: ex.name, Raw: t, Text: "event stream ended: " + err.Error() + "; the client's connection is reset after what arrived"})
		if len(t) > 0 {
			_ = ex.write(t, true)
		}
		ex.mu.Lock()
		ex.reset = true
		ex.mu.Unlock()
	}
	ex.mu.Lock()
	ex.flushBufferLocked()
	ex.flushPendingLocked()
	ex.mu.Unlock()
}

// flushingBody is the upstream event stream as the sse.Reader reads it:
// before each read it flushes the events relayed since the last flush.
// The reader reads only when it holds no complete line, so the events that
// arrived together in one read leave together in one flush (one write to
// the client instead of one per event), while an event that was the last
// one buffered is flushed before the proxy waits for more: none waits for
// the next one.
type flushingBody struct {
	ex *exchange
	r  io.Reader
}

func (b flushingBody) Read(p []byte) (int, error) {
	b.ex.mu.Lock()
	b.ex.flushPendingLocked()
	b.ex.mu.Unlock()
	return b.r.Read(p)
}

// relay writes an event that no fault acted on, leaving the flush to
// flushingBody's next read (or to any earlier flush); the event counts as
// passed when flushed. With a buffer or throttle fault on the stream it
// writes as write does.
func (ex *exchange) relay(msg *Message) error {
	ex.mu.Lock()
	if ex.cut {
		ex.mu.Unlock()
		return errClosed
	}
	if !ex.headersSent || ex.bufLimit > 0 || ex.bps > 0 {
		ex.mu.Unlock()
		if err := ex.write(msg.Raw, true); err != nil {
			return err
		}
		ex.p.markPassed(msg)
		return nil
	}
	defer ex.mu.Unlock()
	if _, err := ex.w.Write(msg.Raw); err != nil {
		return err
	}
	ex.unflushed = append(ex.unflushed, msg)
	return nil
}

// flushPendingLocked flushes events relayed but not yet flushed, even on a
// cut stream (they were relayed before the cut).
func (ex *exchange) flushPendingLocked() {
	if len(ex.unflushed) > 0 {
		_ = ex.flushLocked()
	}
}

func (ex *exchange) isCut() bool {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	return ex.cut
}

// write sends bytes toward the client, honouring cut, buffer and throttle.
func (ex *exchange) write(b []byte, flush bool) error {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.cut {
		return errClosed
	}
	if !ex.headersSent {
		ex.early = append(ex.early, b...)
		return nil
	}
	if ex.bufLimit > 0 {
		ex.buf = append(ex.buf, b...)
		if len(ex.buf) >= ex.bufLimit {
			return ex.flushBufferLocked()
		}
		return nil
	}
	return ex.writeLocked(b)
}

func (ex *exchange) flushBufferLocked() error {
	if len(ex.buf) == 0 || ex.cut {
		return nil
	}
	b := ex.buf
	ex.buf = nil
	return ex.writeLocked(b)
}

// writeLocked writes and flushes; with a throttle it paces the bytes.
func (ex *exchange) writeLocked(b []byte) error {
	if ex.bps <= 0 {
		if _, err := ex.w.Write(b); err != nil {
			return err
		}
		return ex.flushLocked()
	}
	// Pace on the average: sleep only when ahead of the schedule by more
	// than a timer's resolution, so that the rate holds for small events.
	chunk := max(1, ex.bps/20)
	for len(b) > 0 {
		n := min(chunk, len(b))
		if _, err := ex.w.Write(b[:n]); err != nil {
			return err
		}
		if err := ex.flushLocked(); err != nil {
			return err
		}
		b = b[n:]
		ex.tSent += int64(n)
		due := ex.tStart.Add(time.Duration(float64(ex.tSent) / float64(ex.bps) * float64(time.Second)))
		wait := time.Until(due)
		if wait < -throttleCredit {
			// Idle for a while: no burst of saved-up credit.
			ex.tStart, ex.tSent = time.Now(), 0
		}
		if wait <= throttleSlack {
			continue
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ex.r.Context().Done():
			t.Stop()
			return ex.r.Context().Err()
		case <-ex.p.ctx.Done():
			t.Stop()
			return ex.p.ctx.Err()
		}
	}
	return nil
}

// Throttle pacing: sleeps shorter than throttleSlack are deferred (timers
// are coarse under load); credit older than throttleCredit is forgotten.
const (
	throttleSlack  = 2 * time.Millisecond
	throttleCredit = 50 * time.Millisecond
)

// flushLocked flushes what was written to the client; the relayed events
// this sends count as passed.
func (ex *exchange) flushLocked() error {
	err := http.NewResponseController(ex.w).Flush()
	if len(ex.unflushed) > 0 {
		if err == nil {
			for _, msg := range ex.unflushed {
				ex.p.markPassed(msg)
			}
		}
		clear(ex.unflushed)
		ex.unflushed = ex.unflushed[:0]
	}
	return err
}

// reqSink delivers the client's message by forwarding it upstream.
type reqSink struct{ ex *exchange }

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
	ex.p.tr.Add(Entry{At: msg.At, Kind: EntryMessage, Dir: dir, Seq: msg.Seq, Raw: raw, Stream: ex.name, Fault: "inject"})
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

// upstreamRecvBuffer is the receive buffer of the proxy's upstream
// connections. It is fixed (setting it turns the kernel's autotuning off):
// a throttled stream is read slowly, and an autotuned buffer would grow to
// tens of MiB, letting the server write a whole flood into the kernel as
// though the consumer were fast. Fixed, backpressure reaches the server
// after a few hundred KiB, as it would from a real slow consumer.
const upstreamRecvBuffer = 256 << 10

// fixedRecvBuffer sets upstreamRecvBuffer on a new upstream socket.
func fixedRecvBuffer(_, _ string, c syscall.RawConn) error {
	var serr error
	if err := c.Control(func(fd uintptr) {
		serr = setRecvBuffer(fd, upstreamRecvBuffer)
	}); err != nil {
		return err
	}
	return serr
}

// downstreamSendBuffer is the send buffer of the connections the proxy
// accepts from clients, fixed for the reason upstreamRecvBuffer is: a
// client that reads slowly must hold the relay back within a few hundred
// KiB, not after megabytes of autotuned kernel buffer.
const downstreamSendBuffer = 256 << 10

// fixedSendBuffers sets downstreamSendBuffer on every accepted connection.
type fixedSendBuffers struct{ net.Listener }

func (l fixedSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(downstreamSendBuffer)
	}
	return c, err
}

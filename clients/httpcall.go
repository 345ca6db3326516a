package clients

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/sse"
)

// StreamEvent is one SSE event of a response stream, as parsed, with its
// arrival time.
type StreamEvent struct {
	sse.Event
	// At is when the event was parsed (it carries a monotonic reading).
	At time.Time
	// Seq is the Message.Seq of the message the event carried, -1 for an
	// event without data (a comment, a priming event, a retry field...).
	Seq int
}

// HTTPCall is one HTTP exchange whose response body is streamed: a POSTed
// request (Start) or a GET stream (OpenGET). Status, Header and the request
// accessors are fixed when it is returned; the rest fills in as the body is
// read. All methods are safe for concurrent use.
type HTTPCall struct {
	w          *HTTPWire
	id         jsonrpc.ID
	stream     string
	httpMethod string
	reqBody    []byte
	reqHeader  http.Header
	status     int
	proto      string
	header     http.Header
	isSSE      bool
	at         time.Time
	cancel     context.CancelCauseFunc
	gotResp    chan struct{} // closed when resp is set
	ended      chan struct{} // closed when the body reader finished

	// raw, when non-nil, receives the body bytes (bounded); only the
	// goroutine reading the body touches it.
	raw *bytes.Buffer

	// Guarded by w.mu. Both logs are bounded by HTTPOptions.MaxMessages
	// (oldest evicted first; event indexes keep counting).
	events      boundedLog[StreamEvent]
	msgs        boundedLog[Message]
	body        []byte
	partial     []byte
	resp        *Message
	endErr      error
	lastEventID string
}

func (w *HTTPWire) newCall(method string, body []byte, reqHeader http.Header, id jsonrpc.ID, stream string, resp *http.Response) *HTTPCall {
	return &HTTPCall{
		w:          w,
		id:         id,
		stream:     stream,
		httpMethod: method,
		reqBody:    body,
		reqHeader:  reqHeader,
		status:     resp.StatusCode,
		proto:      resp.Proto,
		header:     resp.Header,
		isSSE:      mediaType(resp.Header.Get("Content-Type")) == "text/event-stream",
		at:         time.Now(),
		gotResp:    make(chan struct{}),
		ended:      make(chan struct{}),
		events:     boundedLog[StreamEvent]{max: w.opts.MaxMessages},
		msgs:       boundedLog[Message]{max: w.opts.MaxMessages},
	}
}

// ID returns the request's id (zero for a GET stream).
func (c *HTTPCall) ID() jsonrpc.ID { return c.id }

// Stream returns the stream's name, as in Message.Stream.
func (c *HTTPCall) Stream() string { return c.stream }

// Status returns the HTTP status code.
func (c *HTTPCall) Status() int { return c.status }

// Proto returns the response's protocol, e.g. "HTTP/1.1".
func (c *HTTPCall) Proto() string { return c.proto }

// Header returns the response headers. Callers must not modify them.
func (c *HTTPCall) Header() http.Header { return c.header }

// HeaderAt returns when the response headers arrived.
func (c *HTTPCall) HeaderAt() time.Time { return c.at }

// IsSSE reports whether the response is an SSE stream (Content-Type
// text/event-stream, parameters and case ignored).
func (c *HTTPCall) IsSSE() bool { return c.isSSE }

// Request returns the request body that was sent (nil for GET). Callers must
// not modify it.
func (c *HTTPCall) Request() []byte { return c.reqBody }

// RequestHeader returns the request headers that were sent (Go's transport
// adds Host and Content-Length). Callers must not modify them.
func (c *HTTPCall) RequestHeader() http.Header { return c.reqHeader }

// Events returns every SSE event of the stream so far (the most recent
// MaxMessages of them), in order, comments included; empty for a response
// that is not SSE.
func (c *HTTPCall) Events() []sse.Event {
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	held, _ := c.events.view(0)
	out := make([]sse.Event, len(held))
	for i, e := range held {
		out[i] = e.Event
	}
	return out
}

// StreamEvents returns Events with their arrival times and message Seqs.
func (c *HTTPCall) StreamEvents() []StreamEvent {
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	return c.events.since(0)
}

// EventsEvicted returns how many of the stream's oldest events (and
// messages) were dropped to keep its logs within MaxMessages.
func (c *HTTPCall) EventsEvicted() int {
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	return c.events.evicted
}

// WaitEvent returns the first event with index >= from (in StreamEvents,
// counting evicted events too) for which pred is true, already received or
// arriving later. It fails with
// ctx's error, or with an error wrapping ErrConnEnded once the stream ended
// and no event matched.
func (c *HTTPCall) WaitEvent(ctx context.Context, from int, pred func(StreamEvent) bool) (StreamEvent, error) {
	next := max(from, 0)
	for {
		c.w.mu.Lock()
		batch, start := c.events.view(next)
		next = start
		// finish closes ended under the same lock, after the last event.
		sig, ended := c.w.signal, c.isEnded()
		c.w.mu.Unlock()
		for _, e := range batch {
			if pred(e) {
				return e, nil
			}
		}
		next += len(batch)
		if ended {
			return StreamEvent{}, fmt.Errorf("%w: stream %s ended (%v) without a matching event", ErrConnEnded, c.stream, c.EndErr())
		}
		select {
		case <-sig:
		case <-c.ended:
		case <-ctx.Done():
			return StreamEvent{}, ctx.Err()
		}
	}
}

// Messages returns the JSON-RPC messages of this stream so far, in order.
func (c *HTTPCall) Messages() []Message {
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	return c.msgs.since(0)
}

// Body returns the body of a response that is not SSE, once read (at most
// MaxEventSize bytes); nil for SSE. Callers must not modify it.
func (c *HTTPCall) Body() []byte {
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	return c.body
}

// PartialEvent returns the bytes read after the last complete SSE event when
// the stream ended with an error (sse.Reader.Trailing): the partial event of a
// cut stream, for instance; nil otherwise.
func (c *HTTPCall) PartialEvent() []byte {
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	return c.partial
}

// LastEventID returns the SSE last-event-id buffer after the last event read
// (what a resuming client would send as Last-Event-ID).
func (c *HTTPCall) LastEventID() string {
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	return c.lastEventID
}

// Response returns the response for the request if it already arrived.
func (c *HTTPCall) Response() (Message, bool) {
	select {
	case <-c.gotResp:
		return *c.resp, true
	default:
		return Message{}, false
	}
}

// Wait returns the JSON-RPC response (result or error, see Message.Env.Kind)
// carrying the request's id on this call's own stream: the JSON body or an
// SSE event. For a body that is not SSE, a JSON-RPC error with a null or
// absent id also counts (the server rejected the HTTP request, e.g. a 400
// HeaderMismatch). A response delivered on another stream (e.g. replayed on a
// resumed GET stream) is not seen here: use HTTPWire.WaitFor. Wait fails with
// an error wrapping ErrNoResponse (and EndErr, if any) when the stream ended
// without one, or with ctx's error. Wait may be called again.
func (c *HTTPCall) Wait(ctx context.Context) (Message, error) {
	if c.id.IsZero() {
		return Message{}, fmt.Errorf("clients: stream %s has no request to wait for", c.stream)
	}
	select {
	case <-c.gotResp:
		return *c.resp, nil
	default:
	}
	select {
	case <-c.gotResp:
		return *c.resp, nil
	case <-c.ended:
		select {
		case <-c.gotResp:
			return *c.resp, nil
		default:
		}
		return Message{}, c.noResponseErr()
	case <-ctx.Done():
		return Message{}, ctx.Err()
	}
}

func (c *HTTPCall) noResponseErr() error {
	ct := c.header.Get("Content-Type")
	if err := c.EndErr(); err != nil {
		return fmt.Errorf("%w (HTTP %d, Content-Type %q; the stream ended: %w)", ErrNoResponse, c.status, ct, err)
	}
	return fmt.Errorf("%w (HTTP %d, Content-Type %q)", ErrNoResponse, c.status, ct)
}

// Ended is closed when the response body ended: at its end, cut, on Close
// (or HTTPWire.Close), or when the request's context ended.
func (c *HTTPCall) Ended() <-chan struct{} { return c.ended }

func (c *HTTPCall) isEnded() bool {
	select {
	case <-c.ended:
		return true
	default:
		return false
	}
}

// EndErr reports how the body ended (nil while it is still read):
//   - nil: the HTTP response ended normally, at an event boundary;
//   - wraps sse.ErrIncomplete: the body ended in the middle of an SSE event
//     (wrapping ErrStreamCut too when the HTTP response itself was cut);
//   - wraps ErrStreamCut: the connection was cut before the end of the HTTP
//     response, between events;
//   - ErrClosedByClient: Close, Cancel (modern) or HTTPWire.Close; an error
//     wrapping it and the context's error when Start's context ended;
//   - wraps ErrBodyTooLarge, or the parser's or transport's error.
func (c *HTTPCall) EndErr() error {
	if !c.isEnded() {
		return nil
	}
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	return c.endErr
}

// Close closes the response stream (in 2026-07-28 this is the request's
// cancellation) and waits until its reader has stopped. A stream that already
// ended is left as it was. Idempotent.
func (c *HTTPCall) Close() {
	if c.cancel != nil {
		c.cancel(ErrClosedByClient)
	}
	<-c.ended
}

// ---- reading ----

// run reads the body until it ends, then records how it ended.
func (c *HTTPCall) run(rctx context.Context, body io.ReadCloser, done func()) {
	defer done()
	var err error
	if c.isSSE {
		err = c.readSSE(body, false)
	} else {
		err = c.readBody(body)
	}
	_ = body.Close()
	c.finish(rctx, err)
}

func (c *HTTPCall) finish(rctx context.Context, err error) {
	switch {
	case err == nil, errors.Is(err, io.EOF) && !errors.Is(err, sse.ErrIncomplete) && !errors.Is(err, ErrStreamCut):
		err = nil
	case rctx.Err() != nil:
		if cause := context.Cause(rctx); errors.Is(cause, ErrClosedByClient) {
			err = ErrClosedByClient
		} else {
			err = fmt.Errorf("%w (request context: %w)", ErrClosedByClient, cause)
		}
	}
	w := c.w
	w.mu.Lock()
	c.endErr = err
	if c.resp == nil && !c.isSSE && !c.id.IsZero() {
		// A rejected HTTP request: its JSON-RPC error has no usable id.
		held, _ := c.msgs.view(0)
		for i := range held {
			if m := held[i]; m.Env.Kind == jsonrpc.ErrorReply && (m.Env.ID.IsZero() || m.Env.ID == "null") {
				c.resp = &m
				close(c.gotResp)
				break
			}
		}
	}
	close(c.ended)
	w.broadcastLocked()
	w.mu.Unlock()
}

// bodyReader turns a transport's io.ErrUnexpectedEOF (a cut HTTP response)
// into io.EOF for the parser, remembering it, and copies what it reads into
// raw when set.
type bodyReader struct {
	r     io.Reader
	cut   bool
	raw   *bytes.Buffer
	limit int
}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if b.raw != nil && n > 0 {
		if room := b.limit - b.raw.Len(); room > 0 {
			b.raw.Write(p[:min(n, room)])
		}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		b.cut = true
		err = io.EOF
	}
	return n, err
}

// errStopRead ends readSSE at the first data event when asked to.
var errStopRead = errors.New("clients: stopped at the first data event")

// readSSE parses the body as SSE, recording every event.
func (c *HTTPCall) readSSE(body io.Reader, stopAtData bool) error {
	br := &bodyReader{r: body, raw: c.raw, limit: c.w.opts.MaxEventSize}
	r := sse.NewReader(br, sse.Options{MaxEventSize: c.w.opts.MaxEventSize, Lenient: c.w.opts.LenientSSE})
	for {
		ev, err := r.Next()
		at := time.Now()
		if err != nil {
			if t := r.Trailing(); len(t) > 0 {
				c.w.mu.Lock()
				c.partial = t
				c.w.mu.Unlock()
			}
			if br.cut {
				if errors.Is(err, io.EOF) && !errors.Is(err, sse.ErrIncomplete) {
					return fmt.Errorf("%w: %w", ErrStreamCut, io.ErrUnexpectedEOF)
				}
				return fmt.Errorf("%w: %w", ErrStreamCut, err)
			}
			return err
		}
		if c.recordEvent(ev, at, r.LastEventID()) && stopAtData {
			return errStopRead
		}
	}
}

// recordEvent records one SSE event, and the message its data carries (any
// non-empty data, JSON or not). It reports whether there was a message.
func (c *HTTPCall) recordEvent(ev sse.Event, at time.Time, lastEventID string) bool {
	hasMsg := ev.HasData && ev.Data != "" && !ev.IsComment
	var m Message
	if hasMsg {
		raw := []byte(ev.Data)
		m = Message{At: at, Raw: raw, Env: jsonrpc.Parse(raw), Stream: c.stream, EventType: ev.Type}
		if ev.HasID {
			m.EventID = ev.ID
		}
	}
	w := c.w
	w.mu.Lock()
	defer w.mu.Unlock()
	se := StreamEvent{Event: ev, At: at, Seq: -1}
	if hasMsg {
		m = w.recordLocked(m)
		se.Seq = m.Seq
		c.addMsgLocked(m)
	}
	c.events.add(se)
	c.lastEventID = lastEventID
	w.broadcastLocked()
	return hasMsg
}

// addMsgLocked adds a recorded message to the call, fulfilling Wait when it
// is the first response carrying the request's id.
func (c *HTTPCall) addMsgLocked(m Message) {
	c.msgs.add(m)
	if c.resp == nil && !c.id.IsZero() && m.Env.Kind.IsReply() && m.Env.ID == c.id {
		c.resp = &m
		close(c.gotResp)
	}
}

// readBody reads a body that is not SSE (bounded by MaxEventSize) and
// records it as one message when it is JSON (by Content-Type, or because it
// starts with '{' or '[').
func (c *HTTPCall) readBody(body io.Reader) error {
	limit := c.w.opts.MaxEventSize
	br := &bodyReader{r: body, raw: c.raw, limit: limit}
	data, err := io.ReadAll(io.LimitReader(br, int64(limit)+1))
	at := time.Now()
	tooLarge := len(data) > limit
	if tooLarge {
		data = data[:limit]
	}
	var rerr error
	switch {
	case tooLarge:
		rerr = fmt.Errorf("%w (%d bytes)", ErrBodyTooLarge, limit)
	case err != nil:
		rerr = err
	case br.cut:
		rerr = fmt.Errorf("%w: %w", ErrStreamCut, io.ErrUnexpectedEOF)
	}
	trimmed := bytes.TrimSpace(data)
	isJSON := mediaType(c.header.Get("Content-Type")) == "application/json" ||
		(len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '['))
	w := c.w
	w.mu.Lock()
	defer w.mu.Unlock()
	c.body = data
	if len(trimmed) > 0 && isJSON {
		m := w.recordLocked(Message{At: at, Raw: data, Env: jsonrpc.Parse(data), Stream: c.stream, Partial: rerr != nil})
		c.addMsgLocked(m)
	}
	return rerr
}

// rawBytes returns what was copied of the body (exchange only).
func (c *HTTPCall) rawBytes() []byte {
	if c.raw == nil {
		return nil
	}
	return c.raw.Bytes()
}

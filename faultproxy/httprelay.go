package faultproxy

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/mcp-conform/mcp-conform/sse"
)

// relayBody relays a non-SSE response: the whole body is one message.
func (ex *exchange) relayBody(resp *http.Response) {
	ex.discardEarly()
	body, err := readBody(resp.Body, resp.ContentLength, ex.p.opts.MaxFrame)
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
	msg := &ex.rec.msgs[1]
	*msg = Message{Seq: ex.p.seq.Add(1), Dir: ServerToClient, Raw: body, At: ex.p.tr.Since(), Stream: ex.name, HTTPMethod: ex.r.Method}
	ex.p.record(msg)
	s := &ex.bsink
	*s = bodySink{ex: ex, resp: resp}
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
		if len(ex.p.live) == 0 {
			for _, ch := range ex.p.idle {
				close(ch)
			}
			ex.p.idle = nil
		}
		ex.p.liveMu.Unlock()
	}()
	fb := flushingBody{ex: ex, r: resp.Body}
	if ub, ok := resp.Body.(*upBody); ok {
		fb.up, fb.chunked = ub, len(resp.TransferEncoding) > 0
	}
	ex.mu.Lock()
	ex.copyHeaders(resp, true)
	// The head goes out with the first event when that event has
	// arrived with it, else before the proxy waits for it.
	ex.headUnflushed = true
	if !fb.ready() {
		ex.flushLocked()
	}
	ex.mu.Unlock()
	if early := ex.takeEarly(); len(early) > 0 {
		_ = ex.write(early, true)
	}
	opts := sse.Options{MaxEventSize: ex.p.opts.MaxFrame}
	if cw, ok := ex.w.(*responseWriter); ok {
		// The connection's streams take turns: one buffer serves them all.
		if cw.sc.sseBuf == nil {
			cw.sc.sseBuf = make([]byte, 16<<10)
		}
		opts.Buffer = cw.sc.sseBuf
	}
	rd := sse.NewReader(fb, opts)
	s := streamSink{ex}
	var (
		err  error
		msgs []Message // where the events' Messages are carved from
		next = 1       // the size of the next slab of them: 1, 2, 4 … messageSlab
	)
	for {
		var f sse.Frame
		f, err = rd.NextFrame()
		if err != nil {
			break
		}
		if ex.isCut() {
			continue
		}
		if len(msgs) == 0 {
			msgs = make([]Message, next)
			next = min(2*next, messageSlab)
		}
		msg := &msgs[0]
		msgs = msgs[1:]
		payload := f.Data
		if payload == nil {
			payload = f.Raw[:0:0] // not nil: nil would mean Raw
		}
		*msg = Message{Seq: ex.p.seq.Add(1), Dir: ServerToClient, Raw: f.Raw, At: ex.p.tr.Since(), Stream: ex.name,
			HTTPMethod: ex.r.Method, Comment: f.IsComment, Payload: payload}
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
	case ex.cctx.Err() != nil:
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

// messageSlab is how many Messages of a stream's events one allocation
// holds at most (they are kept as long as any of them is: the transcript,
// the record hold-until looks back on); the first holds one (an answer on
// a stream of one event), each next one twice as many.
const messageSlab = 32

// flushingBody is the upstream event stream as the sse.Reader reads it:
// before each read it flushes the events relayed since the last flush.
// The reader reads only when it holds no complete line, so the events that
// arrived together in one read leave together in one flush (one write to
// the client instead of one per event), while an event that was the last
// one buffered is flushed before the proxy waits for more: none waits for
// the next one.
//
// When the next read is sure to return bytes that have already arrived
// (they are in the upstream connection's buffer), the flush waits for
// them: what arrived together still leaves together, and nothing waits for
// bytes that have not arrived. Up to coalesceMax bytes are held so.
type flushingBody struct {
	ex      *exchange
	r       io.Reader
	up      *upBody // the body on the proxy's own upstream connection, or nil
	chunked bool
}

// coalesceMax bounds the relayed bytes a flush waits for.
const coalesceMax = 32 << 10

func (b flushingBody) Read(p []byte) (int, error) {
	b.ex.mu.Lock()
	if b.ex.unflushedBytes >= coalesceMax || !b.ready() {
		b.ex.flushPendingLocked()
	}
	b.ex.mu.Unlock()
	return b.r.Read(p)
}

// ready reports whether the next read returns without waiting: bytes of
// the body are in the upstream connection's buffer. For a chunked body
// that means a whole chunk-size line (after the CRLF that ends the
// previous chunk) and a byte after it: mid-chunk the test is stricter
// than needed, never looser.
func (b flushingBody) ready() bool {
	if b.up == nil {
		return false
	}
	buf := peekBuffered(b.up.uc.br)
	if !b.chunked {
		return len(buf) > 0
	}
	buf = bytes.TrimPrefix(buf, []byte("\r\n"))
	i := bytes.Index(buf, []byte("\r\n"))
	return i >= 0 && len(buf) > i+2
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
	ex.unflushedBytes += len(msg.Raw)
	return nil
}

// flushPendingLocked flushes events relayed but not yet flushed, even on a
// cut stream (they were relayed before the cut).
func (ex *exchange) flushPendingLocked() {
	if len(ex.unflushed) > 0 || ex.headUnflushed {
		_ = ex.flushLocked()
	}
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
		case <-ex.cctx.Done():
			t.Stop()
			return ex.cctx.Err()
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
	var err error
	if f, ok := ex.w.(interface{ FlushError() error }); ok {
		err = f.FlushError()
	} else {
		err = http.NewResponseController(ex.w).Flush()
	}
	ex.headUnflushed, ex.unflushedBytes = false, 0
	if len(ex.unflushed) > 0 {
		if err == nil {
			ex.p.markPassed(ex.unflushed...)
		}
		clear(ex.unflushed)
		ex.unflushed = ex.unflushed[:0]
	}
	return err
}

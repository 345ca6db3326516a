package faultproxy

import (
	"context"
	"fmt"
)

// Cut closes the HTTP response stream at the matched message: the message
// is not delivered (Deliver true hands it over first), the client sees its
// stream end, and the upstream request is cancelled (the server sees the
// disconnect). On stdio, where there is no per-request stream, Cut drops
// the message and says so.
type Cut struct {
	// Deliver hands the matched message over before cutting.
	Deliver bool
}

// Apply cuts the stream of msg.
func (cf Cut) Apply(_ context.Context, c Conduit, msg *Message) {
	st := c.Stream()
	if st == nil {
		c.Record(msg, "cut", "no response stream on this transport; message dropped instead")
		return
	}
	if cf.Deliver {
		_ = c.Deliver(msg)
		c.Record(msg, "cut", "delivered, then the stream was closed")
	} else {
		c.Record(msg, "cut", "stream closed before this message")
	}
	st.Cut("rule " + c.Rule())
}

// Reset closes the client's connection abruptly at the matched message (a
// network failure rather than a clean end of stream).
type Reset struct{}

// Apply resets the connection of msg's exchange.
func (Reset) Apply(_ context.Context, c Conduit, msg *Message) {
	st := c.Stream()
	if st == nil {
		c.Record(msg, "reset", "no connection of its own on this transport; message dropped instead")
		return
	}
	c.Record(msg, "reset", "connection closed abruptly")
	st.Reset("rule " + c.Rule())
}

// Buffer makes the response stream of the matched message accumulate its
// bytes until Bytes have gathered or the stream ends, as a buffering reverse
// proxy does. The matched message is delivered into the buffer.
type Buffer struct {
	// Bytes is the threshold; zero means hold everything until the end.
	Bytes int
}

// Apply buffers msg's stream.
func (b Buffer) Apply(_ context.Context, c Conduit, msg *Message) {
	st := c.Stream()
	if st == nil {
		c.Record(msg, "buffer", "no response stream on this transport; delivered as is")
		_ = c.Deliver(msg)
		return
	}
	n := b.Bytes
	if n <= 0 {
		n = int(^uint(0) >> 1)
	}
	st.Buffer(n)
	c.Record(msg, "buffer", fmt.Sprintf("stream buffered until %d bytes or its end", b.Bytes))
	_ = c.Deliver(msg)
}

// Throttle limits the response stream of the matched message to a number
// of bytes per second toward the client (a slow consumer).
type Throttle struct {
	BytesPerSecond int
}

// Apply throttles msg's stream and delivers msg.
func (t Throttle) Apply(_ context.Context, c Conduit, msg *Message) {
	if st := c.Stream(); st != nil && t.BytesPerSecond > 0 {
		st.Throttle(t.BytesPerSecond)
		c.Record(msg, "throttle", fmt.Sprintf("stream limited to %d bytes/s", t.BytesPerSecond))
	}
	_ = c.Deliver(msg)
}

// Status answers the client with an HTTP status (and optional body) instead
// of the server's response: 404 for a session, 202 with no body, 503 ...
// Matched on a client message it answers without forwarding; matched on a
// JSON response it replaces it. On an event stream whose head was already
// sent it cuts the stream instead, and says so.
type Status struct {
	Code int
	Body []byte
}

// Apply replaces the response of msg's exchange.
func (s Status) Apply(_ context.Context, c Conduit, msg *Message) {
	st := c.Stream()
	if st == nil {
		c.Record(msg, "status", "no HTTP response on this transport; message dropped instead")
		return
	}
	if st.ReplaceStatus(s.Code, s.Body) {
		c.Record(msg, "status", fmt.Sprintf("answered %d by the proxy", s.Code))
		return
	}
	c.Record(msg, "status", fmt.Sprintf("headers already sent; stream cut instead of answering %d", s.Code))
	st.Cut("rule " + c.Rule())
}

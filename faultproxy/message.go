package faultproxy

import (
	"sync"
	"time"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// Direction says which way a message travels.
type Direction string

// The two directions of a link.
const (
	ClientToServer Direction = "c2s"
	ServerToClient Direction = "s2c"
)

// Reverse returns the other direction.
func (d Direction) Reverse() Direction {
	if d == ClientToServer {
		return ServerToClient
	}
	return ClientToServer
}

// Message is one framed message crossing a link: on stdio, one line without
// its newline.
type Message struct {
	// Seq is the arrival order at the proxy, across both directions,
	// starting at 1. Synthetic messages get their own sequence numbers.
	Seq int64
	// Dir is where the message is going.
	Dir Direction
	// Raw is the message exactly as read, without the frame delimiter.
	Raw []byte
	// At is the arrival time since the link started (monotonic).
	At time.Duration
	// Stream names the HTTP exchange the message belongs to; empty on
	// stdio.
	Stream string
	// HTTPMethod is the request method of the exchange, on HTTP.
	HTTPMethod string
	// Session is the Mcp-Session-Id header of the exchange's request, on
	// HTTP (empty when it had none): a fault that tells clients apart by
	// their session reads it here, since a GET has no body.
	Session string
	// Payload is the JSON-RPC text when it differs from Raw (the data of
	// an SSE event); nil means Raw.
	Payload []byte

	// The flags are kept together, next to once, so that they share one
	// word with it: a Message is 152 bytes instead of 168 (an event
	// stream keeps one per event).

	// Synthetic is true for messages a fault injected.
	Synthetic bool
	// NoDelimiter is true for a final fragment that ended without a
	// newline; it is delivered without one too.
	NoDelimiter bool
	// Comment is true for an SSE comment block (a heartbeat).
	Comment bool
	// Binary is true for a WebSocket binary frame (false: a text frame);
	// it is delivered as the same frame type.
	Binary bool

	once sync.Once
	// env is allocated at the first Envelope: a message relayed with no
	// rule is never parsed, and the delivered history keeps thousands.
	env *jsonrpc.Envelope
}

// Envelope parses the JSON-RPC envelope on first use.
func (m *Message) Envelope() jsonrpc.Envelope {
	m.once.Do(func() {
		var env jsonrpc.Envelope
		if m.Payload != nil {
			env = jsonrpc.Parse(m.Payload)
		} else {
			env = jsonrpc.Parse(m.Raw)
		}
		m.env = &env
	})
	return *m.env
}

// clone returns a copy that shares the bytes (they are never mutated).
func (m *Message) clone() *Message {
	return &Message{Seq: m.Seq, Dir: m.Dir, Raw: m.Raw, At: m.At, Synthetic: m.Synthetic, NoDelimiter: m.NoDelimiter,
		Stream: m.Stream, HTTPMethod: m.HTTPMethod, Session: m.Session, Comment: m.Comment, Payload: m.Payload, Binary: m.Binary}
}

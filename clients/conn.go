// Package clients holds the MCP clients the conformance suites drive.
//
// A wire client sees everything on its connection: every inbound message
// is recorded, in arrival order and byte for byte, whether or not it is
// valid JSON and whether or not anyone waits for it. Outbound, a check
// chooses exactly what is sent: requests with explicit ids, raw bytes, the
// convenience Call. Negotiate picks the protocol era the server speaks; in
// the modern era every request carries the per-request _meta fields the
// 2026-07-28 specification requires.
//
// Every wire client is a Conn:
//
//	Transport.Connect ──► Conn ─┬─ *Wire      line- or frame-delimited JSON-RPC:
//	                            │               stdio (NewWire), WebSocket (DialWebSocket)
//	                            └─ *HTTPWire  Streamable HTTP (NewHTTPWire)
//
// and every Conn is built from the same parts: one message log (inbox,
// with its waiters), one negotiation (negotiation, which drives the wire's
// handshake steps), one session and id counter (core). A transport adds
// only how bytes travel: a frame reader and writer for a Wire, or the HTTP
// exchanges of HTTPWire. The reliable client (clients/reliable) is built on
// top of these.
package clients

import (
	"context"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/protocol"
)

// A Transport opens wire-level client connections to one MCP server.
//
// Name may be called at any time, concurrently. Connect returns an open,
// not yet negotiated Conn (call Conn.Negotiate or Conn.SetSession before
// the first request); whether it may be called more than once is the
// transport's to say (one over an existing byte stream opens it once, one
// that dials opens a new connection each time).
type Transport interface {
	// Name is the transport's name, as in a manifest's transport field.
	Name() protocol.Transport
	// Connect opens a connection; ctx bounds the opening only, never the
	// connection's life (Close ends that).
	Connect(ctx context.Context) (Conn, error)
}

// A Log is a connection's one inbound message log: every JSON-RPC message
// received on any stream, in arrival order, numbered by Message.Seq.
//
// Messages are recorded by the connection's own reader goroutines, never
// by a caller; every method may be called concurrently with them and with
// each other.
type Log interface {
	// Since returns a snapshot of the held messages with Seq >= seq (the
	// oldest are evicted beyond the connection's MaxMessages).
	Since(seq int) []Message
	// Len returns the Seq the next message will get.
	Len() int
	// WaitFor returns the first message with Seq >= fromSeq for which
	// pred is true, already received or arriving later. pred runs on the
	// caller's goroutine, never under a lock, so it may call the Conn. It
	// fails with ctx's error, or with why the connection ended (ErrClosed,
	// or an error wrapping ErrConnEnded) once no message can match.
	WaitFor(ctx context.Context, fromSeq int, pred func(Message) bool) (Message, error)
}

// A Conn is one wire-level client connection to an MCP server, whichever
// transport carries it: *Wire (stdio; WebSocket, frames for lines) or
// *HTTPWire (Streamable HTTP). It holds what every transport offers; what
// only one has (raw bytes, HTTP headers and streams, the HTTP status of a
// notification) stays on the concrete type.
//
// Concurrency: every method may be called concurrently with every other,
// Close included. Close unblocks every method waiting on the connection
// (they return ErrClosed or an error wrapping ErrConnEnded, or ctx's error
// if that came first); afterwards sends fail with ErrClosed and the log
// keeps what it holds. Waits are bounded by their ctx only.
type Conn interface {
	Log

	// NewID returns an integer id this Conn never returned before.
	NewID() jsonrpc.ID
	// Send sends a request with an explicit id (any id, reused ones too)
	// and returns it in flight. In the modern era params gets the
	// per-request _meta; the caller's maps are never modified.
	Send(ctx context.Context, id jsonrpc.ID, method string, params map[string]any) (InFlight, error)
	// Call sends a request with a fresh id and waits for its response; a
	// JSON-RPC error response is a Message, not an error.
	Call(ctx context.Context, method string, params map[string]any) (Message, error)

	// Negotiate determines the protocol version and era with the rules of
	// the transport's "Backward Compatibility" section, and installs the
	// Session. force is "" (the newest version the server accepts) or one
	// of KnownVersions. It must not run concurrently with requests whose
	// _meta should follow the new session.
	Negotiate(ctx context.Context, force string) (Session, error)
	// Session returns the negotiated session (zero before Negotiate).
	Session() Session
	// SetSession installs a session without negotiating.
	SetSession(Session)

	// Close ends the connection and waits for its goroutines. It is
	// idempotent and safe to call concurrently.
	Close() error
}

// InFlight is a request sent on a Conn, awaiting its response: a *Pending
// on a Wire, an *HTTPCall on an HTTPWire. Its methods may be called
// concurrently, and Wait again after a ctx failure.
type InFlight interface {
	// ID returns the request's id.
	ID() jsonrpc.ID
	// Wait returns the response carrying the request's id (a result or a
	// JSON-RPC error, see Message.Env.Kind). It fails with ctx's error, or
	// when the connection (HTTP: the request's stream) ended first.
	Wait(ctx context.Context) (Message, error)
}

// The wire clients are Conns, their requests InFlights, and the
// transports in this package Transports.
var (
	_ Conn      = (*Wire)(nil)
	_ Conn      = (*HTTPWire)(nil)
	_ InFlight  = (*Pending)(nil)
	_ InFlight  = (*HTTPCall)(nil)
	_ Transport = (*StdioTransport)(nil)
	_ Transport = (*HTTPTransport)(nil)
	_ Transport = (*WebSocketTransport)(nil)
)

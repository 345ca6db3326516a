package protocol

import "slices"

// Transport names how messages travel between a client and a server: the
// value of a manifest's transport field, of a check's transport list and of
// the report's target.transport.
type Transport string

// The transports mcp-conform drives.
const (
	// TransportStdio is newline-delimited JSON-RPC on a child process's
	// stdin and stdout (basic/transports/stdio.mdx, basic/transports.mdx
	// before 2026-07-28).
	TransportStdio Transport = "stdio"
	// TransportHTTP is Streamable HTTP, with SSE response streams
	// (basic/transports/streamable-http.mdx).
	TransportHTTP Transport = "http"
	// TransportWebSocket is a custom transport: one JSON-RPC message per
	// WebSocket frame, with stdio's message patterns (2026-07-28
	// basic/transports/index.mdx, "Custom Transports").
	TransportWebSocket Transport = "websocket"
)

var transports = []Transport{TransportStdio, TransportHTTP, TransportWebSocket}

// Transports returns every transport, stdio first (a fresh slice each call).
func Transports() []Transport { return slices.Clone(transports) }

// String returns the transport's name.
func (t Transport) String() string { return string(t) }

// Known reports whether t is one of Transports.
func (t Transport) Known() bool { return slices.Contains(transports, t) }

// Framed reports whether t carries one whole message per frame (a line on
// stdio, a frame on WebSocket) on one bidirectional connection, so that
// stdio's negotiation and message patterns apply; false for HTTP, whose
// messages travel in request bodies and response streams.
func (t Transport) Framed() bool { return t == TransportStdio || t == TransportWebSocket }

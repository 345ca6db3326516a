package clients

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"

	"github.com/mcp-conform/mcp-conform/protocol"
)

// StdioTransport connects over one existing newline-delimited byte stream:
// a server's stdin and stdout joined, or a fault proxy's link to them. It
// can be connected once: the Wire owns the stream from then on.
type StdioTransport struct {
	// Stream carries the messages; the Wire closes it.
	Stream io.ReadWriteCloser
	// Options configures the Wire.
	Options WireOptions

	used atomic.Bool
}

// Name returns protocol.TransportStdio.
func (*StdioTransport) Name() protocol.Transport { return protocol.TransportStdio }

// Connect returns a Wire on Stream (NewWire). A second call fails.
func (t *StdioTransport) Connect(ctx context.Context) (Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !t.used.CompareAndSwap(false, true) {
		return nil, errors.New("clients: stdio transport already connected (its stream has one reader)")
	}
	return NewWire(t.Stream, t.Options), nil
}

// HTTPTransport connects to a Streamable HTTP endpoint. Every Connect
// returns a new HTTPWire, with its own session.
type HTTPTransport struct {
	// Endpoint is the MCP endpoint URL.
	Endpoint string
	// Options configures every HTTPWire.
	Options HTTPOptions
}

// Name returns protocol.TransportHTTP.
func (*HTTPTransport) Name() protocol.Transport { return protocol.TransportHTTP }

// Connect returns a new HTTPWire on Endpoint (NewHTTPWire); no request is
// sent until the Conn is used.
func (t *HTTPTransport) Connect(ctx context.Context) (Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return NewHTTPWire(t.Endpoint, t.Options), nil
}

// WebSocketTransport dials a WebSocket endpoint that carries one JSON-RPC
// message per frame. Every Connect dials a new connection.
type WebSocketTransport struct {
	// URL is the ws:// or wss:// URL.
	URL string
	// Header holds extra headers of the opening handshake.
	Header http.Header
	// Options configures every Wire.
	Options WireOptions
}

// Name returns protocol.TransportWebSocket.
func (*WebSocketTransport) Name() protocol.Transport { return protocol.TransportWebSocket }

// Connect dials URL (DialWebSocket); ctx bounds the opening handshake.
func (t *WebSocketTransport) Connect(ctx context.Context) (Conn, error) {
	w, err := DialWebSocket(ctx, t.URL, t.Header, t.Options)
	if err != nil {
		return nil, err
	}
	return w, nil
}

package clients

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/gorilla/websocket"
)

// JSON-RPC over WebSocket: some MCP servers and gateways carry one JSON-RPC
// message per text frame. The MCP specification lets custom transports
// exist and asks them to keep the JSON-RPC message format and the message
// patterns (specification/2026-07-28/basic/transports/index.mdx §Custom
// Transports), which are those of stdio with the frame in place of the
// line. The WebSocket wire client is therefore the stdio Wire itself, with
// frames instead of lines: the same ordered log, the same awaits, the same
// negotiation.

// DialWebSocket opens a WebSocket connection to url (ws:// or wss://) with
// the extra request header, and returns a Wire on it. Close the Wire to
// close the connection (with a normal-closure close frame).
func DialWebSocket(ctx context.Context, url string, header http.Header, opts WireOptions) (*Wire, error) {
	d := websocket.Dialer{HandshakeTimeout: 10 * time.Second}
	conn, resp, err := d.DialContext(ctx, url, header)
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("clients: websocket %s: %w (HTTP %s)", url, err, resp.Status)
		}
		return nil, fmt.Errorf("clients: websocket %s: %w", url, err)
	}
	return NewWebSocketWire(conn, opts), nil
}

// NewWebSocketWire returns a Wire on an open WebSocket connection: every
// inbound frame (text or binary) is one Message, byte for byte; every
// outbound message is one text frame (SendRaw's trailing newline, the stdio
// delimiter, is not sent). The Wire owns conn.
func NewWebSocketWire(conn *websocket.Conn, opts WireOptions) *Wire {
	opts = opts.withDefaults()
	conn.SetReadLimit(int64(opts.MaxLine) + 1)
	ws := &wsStream{conn: conn}
	return newWire(ws, opts, ws.readFrame)
}

// wsStream adapts a WebSocket connection to what Wire writes and closes.
type wsStream struct {
	conn *websocket.Conn
}

// readFrame returns the next data frame; a normal close is the end of the
// stream (io.EOF).
func (s *wsStream) readFrame(max int) ([]byte, bool, error) {
	_, data, err := s.conn.ReadMessage()
	switch {
	case err == nil && len(data) > max:
		return nil, false, fmt.Errorf("%w: a frame of more than %d bytes", ErrLineTooLong, max)
	case err == nil:
		return data, false, nil
	case errors.Is(err, websocket.ErrReadLimit):
		return nil, false, fmt.Errorf("%w: a frame of more than %d bytes", ErrLineTooLong, max)
	case websocket.IsCloseError(err, websocket.CloseNormalClosure, websocket.CloseGoingAway):
		return nil, false, io.EOF
	default:
		return nil, false, err
	}
}

// Write sends p, less one trailing newline, as one text frame.
func (s *wsStream) Write(p []byte) (int, error) {
	frame := p
	if n := len(frame); n > 0 && frame[n-1] == '\n' {
		frame = frame[:n-1]
	}
	if err := s.conn.WriteMessage(websocket.TextMessage, frame); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Read is not used: Wire reads frames with readFrame.
func (s *wsStream) Read([]byte) (int, error) {
	return 0, errors.New("clients: a WebSocket is read by frames")
}

// SetWriteDeadline bounds the frame being written (Wire's SendRaw uses it
// to honour its context).
func (s *wsStream) SetWriteDeadline(t time.Time) error { return s.conn.SetWriteDeadline(t) }

// Close sends a normal-closure close frame (briefly bounded) and closes
// the connection, which ends the reader.
func (s *wsStream) Close() error {
	_ = s.conn.WriteControl(websocket.CloseMessage,
		websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(200*time.Millisecond))
	return s.conn.Close()
}

package clients

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// isModernErrorCode reports whether code is one of the protocol errors only a
// modern server sends (2026-07-28 basic/index.mdx "Error Codes").
func isModernErrorCode(code int) bool {
	switch code {
	case jsonrpc.CodeHeaderMismatch, jsonrpc.CodeMissingRequiredClientCapability, jsonrpc.CodeUnsupportedProtocolVersion:
		return true
	}
	return false
}

// Negotiate determines the protocol version and era over Streamable HTTP
// (2026-07-28 basic/transports/streamable-http.mdx "Backward Compatibility")
// and installs the resulting Session; it first forgets any previous session
// and session id.
//
// force is "" (the newest version the server accepts) or one of
// KnownVersions. Unless force is a legacy version, the client POSTs a modern
// server/discover (MCP-Protocol-Version and _meta protocolVersion set to the
// newest modern version or the forced one, Mcp-Method, _meta clientInfo and
// clientCapabilities), bounded by HTTPOptions.ProbeTimeout and ctx:
//   - a DiscoverResult (JSON body or SSE): the newest version common to
//     supportedVersions and KnownVersions; modern → done; only legacy in
//     common → initialize with the newest of them; none → error.
//   - UnsupportedProtocolVersionError (-32022, any status): server/discover
//     is re-sent with the newest known modern version of data.supported; none
//     → error, never a fallback.
//   - another recognised modern error (-32020 HeaderMismatch, -32021
//     MissingRequiredClientCapability): a modern server that rejected the
//     probe → error, no fallback.
//   - any other 2xx or 4xx answer (an empty body, a non-modern JSON-RPC error
//     such as -32000 "no session", a body that is not JSON-RPC), or no
//     answer within the probe timeout: a legacy server → initialize with the
//     newest legacy version.
//   - a 1xx/3xx/5xx status without a recognised body, or a transport error:
//     error.
//
// The legacy handshake POSTs initialize (no MCP-Protocol-Version or session
// header), keeps the Mcp-Session-Id of the response's headers (if any), then
// POSTs notifications/initialized with both headers, which must get a 2xx
// (202 expected). force = a modern version: the probe must succeed with that
// version, no fallback. force = a legacy version: no probe; initialize with
// that version, and the server must answer the same version.
//
// On error the Session and session id are left empty.
func (w *HTTPWire) Negotiate(ctx context.Context, force string) (Session, error) {
	return newNegotiation(httpHandshake{w}, w.opts.ClientName, w.opts.ClientVersion, w.opts.ProbeTimeout).run(ctx, force)
}

func (w *HTTPWire) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.session = Session{}
	w.sessionID = ""
}

// httpHandshake is the handshake over Streamable HTTP: each request is a
// POST, its answer a JSON body or an SSE stream, with an HTTP status.
type httpHandshake struct{ *HTTPWire }

func (h httpHandshake) discover(ctx context.Context, version string, params map[string]any) (answer, error) {
	c, err := h.startAs(ctx, Session{Version: version, Era: EraModern}, "", h.NewID(), "server/discover", params, nil)
	if err != nil {
		return answer{}, err
	}
	defer c.Close()
	a := answer{status: c.Status(), ct: c.Header().Get("Content-Type")}
	m, err := c.Wait(ctx)
	switch {
	case err == nil:
		a.msg, a.hasMsg = m, true
		return a, nil
	case errors.Is(err, ErrNoResponse):
		return a, nil
	}
	return answer{}, err
}

// rejectProbe: a modern error code is a modern server that rejected the
// probe; a status that is neither 2xx nor 4xx is no answer at all.
func (httpHandshake) rejectProbe(a answer, want string) error {
	if e := a.msg.Env.Error; a.hasMsg && e != nil && isModernErrorCode(e.Code) {
		return fmt.Errorf("%w: a modern server rejected server/discover at %s: %s", ErrNegotiation, want, a.describe())
	}
	if a.status < 200 || (a.status >= 300 && a.status < 400) || a.status >= 500 {
		return fmt.Errorf("%w: %w: server/discover probe got %s", ErrNegotiation, ErrUnexpectedStatus, a.describe())
	}
	return nil
}

func (h httpHandshake) initialize(ctx context.Context, version string, params map[string]any) (answer, error) {
	c, err := h.startAs(ctx, Session{}, "", h.NewID(), "initialize", params, nil)
	if err != nil {
		return answer{}, fmt.Errorf("clients: initialize: %w", err)
	}
	m, err := c.Wait(ctx)
	if err != nil {
		if errors.Is(err, ErrNoResponse) {
			return answer{}, fmt.Errorf("%w: initialize at %s: %w", ErrNegotiation, version, err)
		}
		return answer{}, fmt.Errorf("clients: initialize: %w", err)
	}
	return answer{msg: m, hasMsg: true, status: c.Status(), ct: c.Header().Get("Content-Type"), sid: c.Header().Get(HeaderSessionID)}, nil
}

// initialized installs the session and the session id the initialize
// response set, so that notifications/initialized carries both headers,
// and wants a 2xx for it.
func (h httpHandshake) initialized(ctx context.Context, s Session, a answer) error {
	h.mu.Lock()
	h.session = s
	h.sessionID = a.sid
	h.mu.Unlock()
	status, err := h.Notify(ctx, "notifications/initialized", nil)
	if err != nil {
		return fmt.Errorf("clients: notifications/initialized: %w", err)
	}
	if status < 200 || status > 299 {
		return fmt.Errorf("%w: %w: notifications/initialized answered HTTP %d (want 202)", ErrNegotiation, ErrUnexpectedStatus, status)
	}
	return nil
}

// Cancel cancels an in-flight request the way the negotiated era requires:
//   - modern (2026-07-28): close the request's response stream (c.Close);
//     no notifications/cancelled is ever sent. Returns "stream-close".
//   - legacy (or before negotiation): POST notifications/cancelled
//     {requestId, reason (omitted when "")}; the response stream stays open,
//     so a check can watch it end without a response. Returns
//     "notification"; the error wraps ErrUnexpectedStatus when the server did
//     not answer a 2xx (one other than 202 delivered the cancellation).
func (w *HTTPWire) Cancel(ctx context.Context, c *HTTPCall, reason string) (string, error) {
	if c == nil || c.id.IsZero() {
		return "", errors.New("clients: Cancel needs a request's call (not a GET stream)")
	}
	if w.Session().Era == EraModern {
		c.Close()
		return "stream-close", nil
	}
	params := map[string]any{"requestId": json.RawMessage(c.id)}
	if reason != "" {
		params["reason"] = reason
	}
	status, err := w.Notify(ctx, "notifications/cancelled", params)
	if err != nil {
		return "notification", err
	}
	// Any 2xx delivered the cancellation; a status other than 202 breaks
	// the transport's rule for notifications, which is judged on its own.
	if status < 200 || status > 299 {
		return "notification", fmt.Errorf("%w: notifications/cancelled answered HTTP %d, want 202", ErrUnexpectedStatus, status)
	}
	return "notification", nil
}

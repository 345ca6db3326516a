package clients

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// Modern JSON-RPC error codes that identify a 2026-07-28 server
// (2026-07-28 basic/index.mdx "Error Codes").
const (
	headerMismatchCode          = -32020
	missingClientCapabilityCode = -32021
)

// isModernErrorCode reports whether code is one of the protocol errors only a
// modern server sends.
func isModernErrorCode(code int) bool {
	switch code {
	case headerMismatchCode, missingClientCapabilityCode, unsupportedVersionCode:
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
	if force != "" && !IsKnownVersion(force) {
		return Session{}, fmt.Errorf("%w: forced version %q is not one of %v", ErrNegotiation, force, KnownVersions)
	}
	w.reset()
	var (
		s   Session
		err error
	)
	if force != "" && EraOf(force) == EraLegacy {
		s, err = w.initialize(ctx, force, true)
	} else {
		s, err = w.probe(ctx, force)
	}
	if err != nil {
		w.reset()
		return Session{}, err
	}
	w.SetSession(s)
	return s, nil
}

func (w *HTTPWire) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.session = Session{}
	w.sessionID = ""
}

func (w *HTTPWire) clientInfo() map[string]any {
	return map[string]any{"name": w.opts.ClientName, "version": w.opts.ClientVersion}
}

// probeAnswer is what came back for a server/discover.
type probeAnswer struct {
	msg      Message
	hasMsg   bool
	status   int
	ct       string
	timedOut bool
}

// discover POSTs server/discover at version and waits at most the probe
// timeout for its answer.
func (w *HTTPWire) discover(ctx context.Context, version string) (probeAnswer, error) {
	pctx, cancel := context.WithTimeout(ctx, w.opts.ProbeTimeout)
	defer cancel()
	params := map[string]any{"_meta": map[string]any{
		MetaProtocolVersion:    version,
		MetaClientCapabilities: map[string]any{},
		MetaClientInfo:         w.clientInfo(),
	}}
	s := Session{Version: version, Era: EraModern}
	c, err := w.startAs(pctx, s, "", w.NewID(), "server/discover", params, nil)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return probeAnswer{}, ctx.Err()
		case pctx.Err() != nil && !errors.Is(err, ErrClosed):
			return probeAnswer{timedOut: true}, nil
		}
		return probeAnswer{}, err
	}
	defer c.Close()
	a := probeAnswer{status: c.Status(), ct: c.Header().Get("Content-Type")}
	m, err := c.Wait(pctx)
	switch {
	case err == nil:
		a.msg, a.hasMsg = m, true
		return a, nil
	case errors.Is(err, ErrNoResponse):
		return a, nil
	case ctx.Err() != nil:
		return probeAnswer{}, ctx.Err()
	case pctx.Err() != nil:
		return probeAnswer{timedOut: true}, nil
	}
	return probeAnswer{}, err
}

func (a probeAnswer) describe() string {
	if a.hasMsg {
		return fmt.Sprintf("HTTP %d, %s", a.status, describe(a.msg))
	}
	return fmt.Sprintf("HTTP %d (Content-Type %q) without a JSON-RPC answer", a.status, a.ct)
}

func (w *HTTPWire) probe(ctx context.Context, force string) (Session, error) {
	want := force
	if want == "" {
		want = newestKnown(KnownVersions, EraModern)
	}
	a, err := w.discover(ctx, want)
	if err != nil {
		return Session{}, fmt.Errorf("clients: server/discover probe: %w", err)
	}
	legacy := newestKnown(KnownVersions, EraLegacy)
	if a.timedOut {
		if force != "" {
			return Session{}, fmt.Errorf("%w: no answer to server/discover within %v (forced %s, no initialize fallback)", ErrNegotiation, w.opts.ProbeTimeout, force)
		}
		return w.initialize(ctx, legacy, false)
	}
	if a.hasMsg {
		if dr, ok := asDiscoverResult(a.msg); ok {
			versions := *dr.SupportedVersions
			if force != "" {
				if !slices.Contains(versions, force) {
					return Session{}, fmt.Errorf("%w: server supports %v, not the forced %s", ErrNegotiation, versions, force)
				}
				return modernSession(force, dr), nil
			}
			switch v := newestKnown(versions, ""); {
			case v == "":
				return Session{}, fmt.Errorf("%w: server supports %v, none of which mcp-conform knows (%v)", ErrNegotiation, versions, KnownVersions)
			case EraOf(v) == EraModern:
				return modernSession(v, dr), nil
			default:
				return w.initialize(ctx, v, false)
			}
		}
		if e := a.msg.Env.Error; e != nil && e.Code == unsupportedVersionCode {
			return w.retryModern(ctx, force, a.msg)
		}
		if e := a.msg.Env.Error; e != nil && isModernErrorCode(e.Code) {
			return Session{}, fmt.Errorf("%w: a modern server rejected server/discover at %s: %s", ErrNegotiation, want, a.describe())
		}
	}
	if a.status < 200 || (a.status >= 300 && a.status < 400) || a.status >= 500 {
		return Session{}, fmt.Errorf("%w: %w: server/discover probe got %s", ErrNegotiation, ErrUnexpectedStatus, a.describe())
	}
	if force != "" {
		return Session{}, fmt.Errorf("%w: server/discover at forced %s was not answered with a DiscoverResult: %s", ErrNegotiation, force, a.describe())
	}
	return w.initialize(ctx, legacy, false)
}

// retryModern handles an UnsupportedProtocolVersionError to the probe.
func (w *HTTPWire) retryModern(ctx context.Context, force string, m Message) (Session, error) {
	var data struct {
		Supported []string `json:"supported"`
	}
	_ = json.Unmarshal(m.Env.Error.Data, &data)
	v := newestKnown(data.Supported, EraModern)
	if force != "" {
		v = ""
		if slices.Contains(data.Supported, force) {
			v = force
		}
	}
	if v == "" {
		return Session{}, fmt.Errorf("%w: server is modern but supports %v, no modern version mcp-conform accepts (%v, forced %q)", ErrNegotiation, data.Supported, KnownVersions, force)
	}
	a, err := w.discover(ctx, v)
	if err != nil {
		return Session{}, fmt.Errorf("clients: server/discover retry at %s: %w", v, err)
	}
	if a.timedOut {
		return Session{}, fmt.Errorf("%w: no answer to server/discover retried at %s (listed as supported) within %v", ErrNegotiation, v, w.opts.ProbeTimeout)
	}
	dr, ok := asDiscoverResult(a.msg)
	if !a.hasMsg || !ok {
		return Session{}, fmt.Errorf("%w: server listed %s as supported but rejected server/discover at it: %s", ErrNegotiation, v, a.describe())
	}
	return modernSession(v, dr), nil
}

// initialize runs the legacy handshake at version. strict: the server must
// answer that same version.
func (w *HTTPWire) initialize(ctx context.Context, version string, strict bool) (Session, error) {
	c, err := w.startAs(ctx, Session{}, "", w.NewID(), "initialize", map[string]any{
		"protocolVersion": version,
		"capabilities":    map[string]any{},
		"clientInfo":      w.clientInfo(),
	}, nil)
	if err != nil {
		return Session{}, fmt.Errorf("clients: initialize: %w", err)
	}
	m, err := c.Wait(ctx)
	if err != nil {
		if errors.Is(err, ErrNoResponse) {
			return Session{}, fmt.Errorf("%w: initialize at %s: %w", ErrNegotiation, version, err)
		}
		return Session{}, fmt.Errorf("clients: initialize: %w", err)
	}
	var ir initializeResult
	if m.Env.Kind != jsonrpc.Response || json.Unmarshal(m.Env.Result, &ir) != nil {
		return Session{}, fmt.Errorf("%w: initialize at %s failed: HTTP %d, %s", ErrNegotiation, version, c.Status(), describe(m))
	}
	switch {
	case strict && ir.ProtocolVersion != version:
		return Session{}, fmt.Errorf("%w: forced %s but the server chose protocol version %q", ErrNegotiation, version, ir.ProtocolVersion)
	case !IsKnownVersion(ir.ProtocolVersion) || EraOf(ir.ProtocolVersion) != EraLegacy:
		return Session{}, fmt.Errorf("%w: the server chose protocol version %q in initialize, which is not a legacy version mcp-conform knows (%v)", ErrNegotiation, ir.ProtocolVersion, KnownVersions)
	}
	s := Session{
		Version:      ir.ProtocolVersion,
		Era:          EraLegacy,
		ServerInfo:   ir.ServerInfo,
		Capabilities: ir.Capabilities,
		Instructions: ir.Instructions,
	}
	w.mu.Lock()
	w.session = s
	w.sessionID = c.Header().Get(HeaderSessionID)
	w.mu.Unlock()
	status, err := w.Notify(ctx, "notifications/initialized", nil)
	if err != nil {
		return Session{}, fmt.Errorf("clients: notifications/initialized: %w", err)
	}
	if status < 200 || status > 299 {
		return Session{}, fmt.Errorf("%w: %w: notifications/initialized answered HTTP %d (want 202)", ErrNegotiation, ErrUnexpectedStatus, status)
	}
	return s, nil
}

// Cancel cancels an in-flight request the way the negotiated era requires:
//   - modern (2026-07-28): close the request's response stream (c.Close);
//     no notifications/cancelled is ever sent. Returns "stream-close".
//   - legacy (or before negotiation): POST notifications/cancelled
//     {requestId, reason (omitted when "")}; the response stream stays open,
//     so a check can watch it end without a response. Returns
//     "notification"; the error wraps ErrUnexpectedStatus when the server did
//     not answer 202.
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
	if status != 202 {
		return "notification", fmt.Errorf("%w: notifications/cancelled answered HTTP %d, want 202", ErrUnexpectedStatus, status)
	}
	return "notification", nil
}

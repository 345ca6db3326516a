package clients

import (
	"context"
	"fmt"
)

// Negotiate determines the protocol version and era following the stdio
// rules of 2026-07-28 (basic/transports/stdio.mdx, "Backward
// Compatibility"), and installs the resulting Session.
//
// force is "" (the newest version the server accepts) or one of
// KnownVersions. Unless force is a legacy version, the client probes with
// server/discover at the newest modern version (or the forced one), bounded
// by WireOptions.ProbeTimeout and ctx:
//   - a DiscoverResult: the newest version common to supportedVersions and
//     KnownVersions is chosen; modern → done; only legacy versions in common
//     → initialize with the newest of them; none → error.
//   - an UnsupportedProtocolVersionError (-32022): the newest known modern
//     version in data.supported is chosen and server/discover is re-sent
//     with it (its DiscoverResult fills the Session); none → error, never an
//     initialize fallback.
//   - any other error, a result that is not a DiscoverResult, or no answer
//     within the probe timeout: a legacy server; initialize with the newest
//     legacy version, then notifications/initialized. The server's answered
//     version is accepted if it is a known legacy version.
//
// force = a modern version: the probe must succeed with that version, there
// is no initialize fallback. force = a legacy version: no probe; initialize
// with that version, and the server must answer the same version.
//
// The legacy initialize is bounded only by ctx. On error the Session is left
// zero (nothing is injected into later requests).
func (w *Wire) Negotiate(ctx context.Context, force string) (Session, error) {
	return newNegotiation(wireHandshake{w}, w.opts.ClientName, w.opts.ClientVersion, w.opts.ProbeTimeout).run(ctx, force)
}

// wireHandshake is the handshake on a framed connection: every request
// and answer is one message on the one stream.
type wireHandshake struct{ *Wire }

func (h wireHandshake) discover(ctx context.Context, _ string, params map[string]any) (answer, error) {
	p, err := h.Start(ctx, h.NewID(), "server/discover", params)
	if err != nil {
		return answer{}, err
	}
	m, err := p.Wait(ctx)
	if err != nil {
		return answer{}, err
	}
	return answer{msg: m, hasMsg: true}, nil
}

// rejectProbe: on a framed transport any other answer means a legacy
// server.
func (wireHandshake) rejectProbe(answer, string) error { return nil }

func (h wireHandshake) initialize(ctx context.Context, _ string, params map[string]any) (answer, error) {
	m, err := h.Call(ctx, "initialize", params)
	if err != nil {
		return answer{}, fmt.Errorf("clients: initialize: %w", err)
	}
	return answer{msg: m, hasMsg: true}, nil
}

func (h wireHandshake) initialized(ctx context.Context, _ Session, _ answer) error {
	if err := h.Notify(ctx, "notifications/initialized", nil); err != nil {
		return fmt.Errorf("clients: notifications/initialized: %w", err)
	}
	return nil
}

func (h wireHandshake) reset() { h.SetSession(Session{}) }

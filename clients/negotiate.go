package clients

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// Era is a protocol era: how version, identity and capabilities travel.
type Era string

// The two eras (2026-07-28 basic/versioning.mdx, "Terminology").
const (
	// EraLegacy versions establish a session with an initialize handshake
	// (2025-11-25 and earlier).
	EraLegacy Era = "legacy"
	// EraModern versions carry version and capabilities in every request's
	// _meta (2026-07-28 and later).
	EraModern Era = "modern"
)

// KnownVersions lists the protocol versions the client speaks, newest first.
var KnownVersions = []string{"2026-07-28", "2025-11-25", "2025-06-18"}

// firstModern is the first modern revision; versions are dates, so a
// version string comparing >= it is modern.
const firstModern = "2026-07-28"

// IsKnownVersion reports whether v is in KnownVersions.
func IsKnownVersion(v string) bool { return slices.Contains(KnownVersions, v) }

// EraOf returns the era of protocol version v: modern for 2026-07-28 and
// later, legacy otherwise.
func EraOf(v string) Era {
	if v >= firstModern {
		return EraModern
	}
	return EraLegacy
}

// ErrNegotiation is wrapped by every error Negotiate returns for a server
// answer it cannot accept (as opposed to ctx or connection errors).
var ErrNegotiation = errors.New("clients: version negotiation failed")

// Session is what negotiation established.
type Session struct {
	// Version is the protocol version in use.
	Version string
	// Era is EraModern or EraLegacy ("" before negotiation).
	Era Era
	// ServerInfo is the server's Implementation: InitializeResult.serverInfo
	// (legacy) or DiscoverResult._meta["io.modelcontextprotocol/serverInfo"]
	// (modern; a non-schema top-level serverInfo is used when _meta has
	// none); nil when absent.
	ServerInfo json.RawMessage
	// Capabilities is the server's capabilities object, nil when absent.
	Capabilities json.RawMessage
	// Instructions is the server's instructions, if any.
	Instructions string
	// SupportedVersions is DiscoverResult.supportedVersions (modern only).
	SupportedVersions []string
}

// Session returns the negotiated session (zero before Negotiate).
func (w *Wire) Session() Session {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.session
}

// SetSession installs a session without negotiating, e.g. to reuse a cached
// era determination (2026-07-28 basic/versioning.mdx allows caching it for
// the lifetime of the server process). Start injects _meta when s.Era is
// EraModern.
func (w *Wire) SetSession(s Session) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.session = s
}

type discoverResult struct {
	SupportedVersions *[]string       `json:"supportedVersions"`
	Capabilities      json.RawMessage `json:"capabilities"`
	Instructions      string          `json:"instructions"`
	// ServerInfo at the top level is not in the 2026-07-28 schema; it is
	// only a fallback for servers that put it there instead of in _meta.
	ServerInfo json.RawMessage `json:"serverInfo"`
	Meta       struct {
		ServerInfo json.RawMessage `json:"io.modelcontextprotocol/serverInfo"`
	} `json:"_meta"`
}

type initializeResult struct {
	ProtocolVersion string          `json:"protocolVersion"`
	Capabilities    json.RawMessage `json:"capabilities"`
	ServerInfo      json.RawMessage `json:"serverInfo"`
	Instructions    string          `json:"instructions"`
}

// unsupportedVersionCode is UnsupportedProtocolVersionError's code.
const unsupportedVersionCode = -32022

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
	if force != "" && !IsKnownVersion(force) {
		return Session{}, fmt.Errorf("%w: forced version %q is not one of %v", ErrNegotiation, force, KnownVersions)
	}
	w.SetSession(Session{}) // nothing injected into the handshake itself
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
		return Session{}, err
	}
	w.SetSession(s)
	return s, nil
}

func newestKnown(versions []string, era Era) string {
	for _, v := range KnownVersions {
		if (era == "" || EraOf(v) == era) && slices.Contains(versions, v) {
			return v
		}
	}
	return ""
}

func (w *Wire) clientInfo() map[string]any {
	return map[string]any{"name": w.opts.ClientName, "version": w.opts.ClientVersion}
}

// discover sends server/discover at version and waits at most the probe
// timeout. timedOut reports that no answer came in time (ctx still live).
func (w *Wire) discover(ctx context.Context, version string) (m Message, timedOut bool, err error) {
	pctx, cancel := context.WithTimeout(ctx, w.opts.ProbeTimeout)
	defer cancel()
	params := map[string]any{"_meta": map[string]any{
		MetaProtocolVersion:    version,
		MetaClientCapabilities: map[string]any{},
		MetaClientInfo:         w.clientInfo(),
	}}
	p, err := w.Start(pctx, w.NewID(), "server/discover", params)
	if err == nil {
		m, err = p.Wait(pctx)
	}
	if err != nil && ctx.Err() == nil && pctx.Err() != nil {
		return Message{}, true, nil
	}
	if err != nil && ctx.Err() != nil {
		return Message{}, false, ctx.Err()
	}
	return m, false, err
}

// asDiscoverResult decodes a response as a DiscoverResult; ok is false for an
// error response or a result without supportedVersions.
func asDiscoverResult(m Message) (discoverResult, bool) {
	var dr discoverResult
	if m.Env.Kind != jsonrpc.Response || json.Unmarshal(m.Env.Result, &dr) != nil || dr.SupportedVersions == nil {
		return dr, false
	}
	return dr, true
}

func modernSession(version string, dr discoverResult) Session {
	info := dr.Meta.ServerInfo
	if info == nil {
		info = dr.ServerInfo
	}
	return Session{
		Version:           version,
		Era:               EraModern,
		ServerInfo:        info,
		Capabilities:      dr.Capabilities,
		Instructions:      dr.Instructions,
		SupportedVersions: *dr.SupportedVersions,
	}
}

func (w *Wire) probe(ctx context.Context, force string) (Session, error) {
	want := force
	if want == "" {
		want = newestKnown(KnownVersions, EraModern)
	}
	m, timedOut, err := w.discover(ctx, want)
	if err != nil {
		return Session{}, fmt.Errorf("clients: server/discover probe: %w", err)
	}
	if timedOut {
		if force != "" {
			return Session{}, fmt.Errorf("%w: no answer to server/discover within %v (forced %s, no initialize fallback)", ErrNegotiation, w.opts.ProbeTimeout, force)
		}
		return w.initialize(ctx, newestKnown(KnownVersions, EraLegacy), false)
	}
	if dr, ok := asDiscoverResult(m); ok {
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
	if m.Env.Error != nil && m.Env.Error.Code == unsupportedVersionCode {
		return w.retryModern(ctx, force, m)
	}
	if force != "" {
		return Session{}, fmt.Errorf("%w: server/discover at forced %s was not answered with a DiscoverResult: %s", ErrNegotiation, force, describe(m))
	}
	return w.initialize(ctx, newestKnown(KnownVersions, EraLegacy), false)
}

// retryModern handles an UnsupportedProtocolVersionError to the probe.
func (w *Wire) retryModern(ctx context.Context, force string, m Message) (Session, error) {
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
	m2, timedOut, err := w.discover(ctx, v)
	if err != nil {
		return Session{}, fmt.Errorf("clients: server/discover retry at %s: %w", v, err)
	}
	if timedOut {
		return Session{}, fmt.Errorf("%w: no answer to server/discover retried at %s (listed as supported) within %v", ErrNegotiation, v, w.opts.ProbeTimeout)
	}
	dr, ok := asDiscoverResult(m2)
	if !ok {
		return Session{}, fmt.Errorf("%w: server listed %s as supported but rejected server/discover at it: %s", ErrNegotiation, v, describe(m2))
	}
	return modernSession(v, dr), nil
}

// initialize runs the legacy handshake at version. strict: the server must
// answer that same version.
func (w *Wire) initialize(ctx context.Context, version string, strict bool) (Session, error) {
	m, err := w.Call(ctx, "initialize", map[string]any{
		"protocolVersion": version,
		"capabilities":    map[string]any{},
		"clientInfo":      w.clientInfo(),
	})
	if err != nil {
		return Session{}, fmt.Errorf("clients: initialize: %w", err)
	}
	var ir initializeResult
	if m.Env.Kind != jsonrpc.Response || json.Unmarshal(m.Env.Result, &ir) != nil {
		return Session{}, fmt.Errorf("%w: initialize at %s failed: %s", ErrNegotiation, version, describe(m))
	}
	switch {
	case strict && ir.ProtocolVersion != version:
		return Session{}, fmt.Errorf("%w: forced %s but the server chose protocol version %q", ErrNegotiation, version, ir.ProtocolVersion)
	case !IsKnownVersion(ir.ProtocolVersion) || EraOf(ir.ProtocolVersion) != EraLegacy:
		return Session{}, fmt.Errorf("%w: the server chose protocol version %q in initialize, which is not a legacy version mcp-conform knows (%v)", ErrNegotiation, ir.ProtocolVersion, KnownVersions)
	}
	if err := w.Notify(ctx, "notifications/initialized", nil); err != nil {
		return Session{}, fmt.Errorf("clients: notifications/initialized: %w", err)
	}
	return Session{
		Version:      ir.ProtocolVersion,
		Era:          EraLegacy,
		ServerInfo:   ir.ServerInfo,
		Capabilities: ir.Capabilities,
		Instructions: ir.Instructions,
	}, nil
}

// describe summarises a reply for an error message.
func describe(m Message) string {
	if m.Env.Error != nil {
		return fmt.Sprintf("error %d %q", m.Env.Error.Code, m.Env.Error.Message)
	}
	s := strings.TrimSpace(string(m.Raw))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return "reply " + s
}

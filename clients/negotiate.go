package clients

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/protocol"
)

// Era is a protocol era: how version, identity and capabilities travel
// (protocol.Era).
type Era = protocol.Era

// The two eras (2026-07-28 basic/versioning.mdx, "Terminology").
const (
	// EraLegacy versions establish a session with an initialize handshake
	// (2025-11-25 and earlier).
	EraLegacy = protocol.EraLegacy
	// EraModern versions carry version and capabilities in every request's
	// _meta (2026-07-28 and later).
	EraModern = protocol.EraModern
)

// KnownVersions lists the protocol versions the client speaks, newest
// first: protocol.Versions as strings.
var KnownVersions = func() []string {
	var out []string
	for _, v := range protocol.Versions() {
		out = append(out, string(v))
	}
	return out
}()

// IsKnownVersion reports whether v is in KnownVersions.
func IsKnownVersion(v string) bool { return slices.Contains(KnownVersions, v) }

// EraOf returns the era of protocol version v (protocol.Version.Era):
// modern for 2026-07-28 and later, legacy otherwise.
func EraOf(v string) Era { return protocol.Version(v).Era() }

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

// handshake is what the one negotiation needs of a wire: its two
// exchanges, sent the way the wire's transport sends them, and what the
// transport adds to the verdicts. The negotiation is run by Negotiate
// only, on the caller's goroutine.
type handshake interface {
	// discover sends server/discover with params at version (a transport
	// that also carries the version outside the body puts it there) with
	// no session, and returns its answer. ctx carries the probe timeout;
	// an error is classified by probeOutcome.
	discover(ctx context.Context, version string, params map[string]any) (answer, error)
	// rejectProbe judges an answer to the probe that is neither a
	// DiscoverResult nor an UnsupportedProtocolVersionError: an error
	// ends the negotiation, nil means a legacy server (or, forced, a
	// failed probe).
	rejectProbe(a answer, want string) error
	// initialize sends the legacy initialize request with params and no
	// session; its errors are returned as they are.
	initialize(ctx context.Context, version string, params map[string]any) (answer, error)
	// initialized ends the legacy handshake that established s: it sends
	// notifications/initialized, with whatever the transport needs of s
	// and of the initialize answer a.
	initialized(ctx context.Context, s Session, a answer) error
	// reset forgets the session (and what the transport keeps with it).
	reset()
	// SetSession installs the negotiated session.
	SetSession(Session)
}

// answer is what came back for one handshake request.
type answer struct {
	msg      Message
	hasMsg   bool   // a JSON-RPC answer arrived (always, unless HTTP)
	status   int    // the HTTP status; 0 on a framed transport
	ct       string // the HTTP Content-Type
	sid      string // the Mcp-Session-Id the HTTP response set
	timedOut bool   // no answer within the probe timeout
}

// describe summarises the answer for an error message.
func (a answer) describe() string {
	switch {
	case !a.hasMsg:
		return fmt.Sprintf("HTTP %d (Content-Type %q) without a JSON-RPC answer", a.status, a.ct)
	case a.status == 0:
		return describe(a.msg)
	}
	return fmt.Sprintf("HTTP %d, %s", a.status, describe(a.msg))
}

// probeOutcome classifies an error of the probe bounded by pctx, a child
// of ctx: ctx's end is an error, the probe timeout (unless the client was
// closed) means no answer.
func probeOutcome(ctx, pctx context.Context, err error) (answer, error) {
	switch {
	case ctx.Err() != nil:
		return answer{}, ctx.Err()
	case pctx.Err() != nil && !errors.Is(err, ErrClosed):
		return answer{timedOut: true}, nil
	}
	return answer{}, err
}

// negotiation is the one version negotiation of every wire client: the
// "Backward Compatibility" rules that stdio (basic/transports/stdio.mdx)
// and Streamable HTTP (basic/transports/streamable-http.mdx) share in
// 2026-07-28, over the wire's own handshake steps.
type negotiation struct {
	h            handshake
	clientInfo   map[string]any
	probeTimeout time.Duration
}

func newNegotiation(h handshake, name, version string, probeTimeout time.Duration) negotiation {
	return negotiation{h: h, clientInfo: map[string]any{"name": name, "version": version}, probeTimeout: probeTimeout}
}

// run negotiates (see Wire.Negotiate and HTTPWire.Negotiate) and installs
// the session; on error the session is left empty.
func (n negotiation) run(ctx context.Context, force string) (Session, error) {
	if force != "" && !IsKnownVersion(force) {
		return Session{}, fmt.Errorf("%w: forced version %q is not one of %v", ErrNegotiation, force, KnownVersions)
	}
	n.h.reset() // nothing injected into the handshake itself
	var (
		s   Session
		err error
	)
	if force != "" && EraOf(force) == EraLegacy {
		s, err = n.initialize(ctx, force, true)
	} else {
		s, err = n.probe(ctx, force)
	}
	if err != nil {
		n.h.reset()
		return Session{}, err
	}
	n.h.SetSession(s)
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

// discover sends server/discover at version, bounded by the probe timeout.
func (n negotiation) discover(ctx context.Context, version string) (answer, error) {
	pctx, cancel := context.WithTimeout(ctx, n.probeTimeout)
	defer cancel()
	return n.discoverWithin(ctx, pctx, version)
}

// forcedProbeTimeout bounds server/discover when a modern version is forced:
// with no initialize fallback, a silence there means the version is refused,
// so it gets the time a loaded machine needs to start a server and answer
// (the 2 s of the open probe, which only chooses an era, were seen to pass
// on a loaded 2-core machine and report 2026-07-28 refused).
const forcedProbeTimeout = 15 * time.Second

// discoverForced is discover for a forced modern version.
func (n negotiation) discoverForced(ctx context.Context, version string) (answer, error) {
	pctx, cancel := context.WithTimeout(ctx, n.forcedTimeout())
	defer cancel()
	return n.discoverWithin(ctx, pctx, version)
}

// forcedTimeout is forcedProbeTimeout when the probe timeout is the
// default; a probe timeout set explicitly bounds a forced probe too.
func (n negotiation) forcedTimeout() time.Duration {
	if n.probeTimeout == DefaultProbeTimeout {
		return forcedProbeTimeout
	}
	return n.probeTimeout
}

func (n negotiation) discoverWithin(ctx, pctx context.Context, version string) (answer, error) {
	params := map[string]any{"_meta": map[string]any{
		MetaProtocolVersion:    version,
		MetaClientCapabilities: map[string]any{},
		MetaClientInfo:         n.clientInfo,
	}}
	a, err := n.h.discover(pctx, version, params)
	if err != nil {
		return probeOutcome(ctx, pctx, err)
	}
	return a, nil
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

func (n negotiation) probe(ctx context.Context, force string) (Session, error) {
	want := force
	if want == "" {
		want = newestKnown(KnownVersions, EraModern)
	}
	discover := n.discover
	if force != "" {
		discover = n.discoverForced
	}
	a, err := discover(ctx, want)
	if err != nil {
		return Session{}, fmt.Errorf("clients: server/discover probe: %w", err)
	}
	legacy := newestKnown(KnownVersions, EraLegacy)
	if a.timedOut {
		if force != "" {
			return Session{}, fmt.Errorf("%w: no answer to server/discover within %v (forced %s, no initialize fallback)", ErrNegotiation, n.forcedTimeout(), force)
		}
		return n.initialize(ctx, legacy, false)
	}
	if a.hasMsg {
		if dr, ok := asDiscoverResult(a.msg); ok {
			return n.choose(ctx, force, dr)
		}
		if e := a.msg.Env.Error; e != nil && e.Code == jsonrpc.CodeUnsupportedProtocolVersion {
			return n.retryModern(ctx, force, a.msg)
		}
	}
	if err := n.h.rejectProbe(a, want); err != nil {
		return Session{}, err
	}
	if force != "" {
		return Session{}, fmt.Errorf("%w: server/discover at forced %s was not answered with a DiscoverResult: %s", ErrNegotiation, force, a.describe())
	}
	return n.initialize(ctx, legacy, false)
}

// choose picks the version of a DiscoverResult: the forced one, or the
// newest in common; a legacy one goes on with initialize.
func (n negotiation) choose(ctx context.Context, force string, dr discoverResult) (Session, error) {
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
		return n.initialize(ctx, v, false)
	}
}

// retryModern handles an UnsupportedProtocolVersionError to the probe.
func (n negotiation) retryModern(ctx context.Context, force string, m Message) (Session, error) {
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
	a, err := n.discover(ctx, v)
	if err != nil {
		return Session{}, fmt.Errorf("clients: server/discover retry at %s: %w", v, err)
	}
	if a.timedOut {
		return Session{}, fmt.Errorf("%w: no answer to server/discover retried at %s (listed as supported) within %v", ErrNegotiation, v, n.probeTimeout)
	}
	dr, ok := asDiscoverResult(a.msg)
	if !a.hasMsg || !ok {
		return Session{}, fmt.Errorf("%w: server listed %s as supported but rejected server/discover at it: %s", ErrNegotiation, v, a.describe())
	}
	return modernSession(v, dr), nil
}

// initialize runs the legacy handshake at version. strict: the server must
// answer that same version.
func (n negotiation) initialize(ctx context.Context, version string, strict bool) (Session, error) {
	a, err := n.h.initialize(ctx, version, map[string]any{
		"protocolVersion": version,
		"capabilities":    map[string]any{},
		"clientInfo":      n.clientInfo,
	})
	if err != nil {
		return Session{}, err
	}
	var ir initializeResult
	if a.msg.Env.Kind != jsonrpc.Response || json.Unmarshal(a.msg.Env.Result, &ir) != nil {
		return Session{}, fmt.Errorf("%w: initialize at %s failed: %s", ErrNegotiation, version, a.describe())
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
	if err := n.h.initialized(ctx, s, a); err != nil {
		return Session{}, err
	}
	return s, nil
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

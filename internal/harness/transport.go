package harness

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/protocol"
)

// The transport registry: one Transport per connection kind, registered by
// the file that implements it (stdioconn.go, httpconn.go, wsconn.go). The
// harness's code that does not depend on how a target is reached — manifest
// validation, the version probe, the accepted-versions probe, role
// validation, tool listing — looks the target's kind up here instead of
// comparing transport names.
//
//	manifest.transport ──► transportOf ──► Transport{Validate, Dial}
//	                                         │
//	              stdioconn.go / httpconn.go / wsconn.go (each registers one)
//
// A new transport is its connection file (the Conn it drives, its proxy
// link in faultproxy) plus one registerTransport call in that file.

// Transport is one way of reaching a target.
type Transport struct {
	// Name is the manifest's transport value.
	Name protocol.Transport
	// Validate checks the manifest fields this transport needs (a
	// command, a url of the right scheme).
	Validate func(m *Manifest) error
	// Dial starts (or reaches) the target behind a new fault proxy and
	// negotiates sess's version (a zero session: the target's Spec, else
	// the newest it accepts). It is for the harness's own connections
	// outside a check; the caller closes what it returns.
	Dial func(ctx context.Context, cfg *Config, target *Manifest, sess clients.Session) (*Dialed, error)
	// SharedProcess is true when one server process serves many sessions
	// (Streamable HTTP): the accepted-versions probe then starts it once.
	SharedProcess bool
}

// Dialed is a negotiated connection the harness opened for itself.
type Dialed struct {
	// Endpoint sends requests on the connection (role validation).
	*Endpoint
	// W is the connection's wire (a plain call, its session).
	W caller
	// Close ends the connection and stops a server it started.
	Close func()
}

var (
	transportsMu sync.RWMutex
	transportReg = map[protocol.Transport]*Transport{}
)

// registerTransport adds t to the registry; a name registered twice is a
// programming error.
func registerTransport(t *Transport) {
	transportsMu.Lock()
	defer transportsMu.Unlock()
	if _, dup := transportReg[t.Name]; dup {
		panic("harness: transport " + string(t.Name) + " registered twice")
	}
	transportReg[t.Name] = t
}

// transportNamed returns the registered transport called name.
func transportNamed(name protocol.Transport) (*Transport, bool) {
	transportsMu.RLock()
	defer transportsMu.RUnlock()
	t, ok := transportReg[name]
	return t, ok
}

// transportOf returns the transport of m, which Validate has accepted.
func transportOf(m *Manifest) *Transport {
	t, ok := transportNamed(m.Via())
	if !ok {
		panic("harness: target " + m.Name + " has no registered transport " + m.Transport)
	}
	return t
}

// RegisteredTransports names every registered transport in
// protocol.Transports' order.
func RegisteredTransports() []protocol.Transport {
	var out []protocol.Transport
	for _, name := range protocol.Transports() {
		if _, ok := transportNamed(name); ok {
			out = append(out, name)
		}
	}
	return out
}

// Via is the manifest's transport as its typed name ("" before Validate
// fills the default).
func (m *Manifest) Via() protocol.Transport { return protocol.Transport(m.Transport) }

// validateTransport fills the default transport (stdio) and checks m
// against its transport's rules.
func validateTransport(m *Manifest) error {
	if m.Transport == "" {
		m.Transport = string(protocol.TransportStdio)
	}
	t, ok := transportNamed(m.Via())
	if !ok {
		names := RegisteredTransports()
		s := make([]string, len(names))
		for i, n := range names {
			s[i] = string(n)
		}
		return fmt.Errorf("unknown transport %q (%s)", m.Transport, orList(s))
	}
	return t.Validate(m)
}

// orList joins names as "a, b or c".
func orList(names []string) string {
	names = slices.Clone(names)
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

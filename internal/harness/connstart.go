package harness

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/internal/auth"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// What the three connection kinds (stdioconn.go, httpconn.go, wsconn.go)
// do alike as they start and end: install the check's rules before the
// first message, let the proxy add the run's credentials, negotiate, say
// how a server they started ended, and stop it.

// installRules makes the proxy's rule set for a new connection, seeded by
// the run, with rules in place before the first message.
func installRules(cfg *Config, rules []faultproxy.Rule) (*faultproxy.Rules, error) {
	rs := faultproxy.NewRulesSeed(cfg.Seed)
	if err := rs.Set(rules...); err != nil {
		return nil, fmt.Errorf("install rules: %w", err)
	}
	return rs, nil
}

// authorizer is the proxy's Authorize hook with creds (Config.
// CredentialsFor the target): it adds them to each request the proxy
// forwards (auth.Credentials.Apply), so that no check body handles one.
func authorizer(creds *auth.Credentials) func(*http.Request) error {
	return func(req *http.Request) error { return creds.Apply(req.Context(), auth.Endpoint(req), req.Header) }
}

// settleStarted negotiates on a connection just started (settle). On
// failure the error says how the server ended (hint, asked before any
// close, which ends the server itself); outside a check (h nil) the
// connection is closed and the error carries its transcript, in a check
// the harness closes it with the others.
func settleStarted(ctx context.Context, w Negotiator, cfg *Config, target *Manifest, sess clients.Session, h *H, c interface{ Close() }, hint func() string, tr *faultproxy.Transcript) error {
	err := settle(ctx, w, cfg, target, sess)
	if err == nil {
		return nil
	}
	err = startHint(err, hint)
	if h == nil {
		c.Close()
		return withTranscript(err, tr)
	}
	return err
}

// procExitHint says how a server process the harness started ended, when
// it has within wait.
func procExitHint(p *faultproxy.Process, wait time.Duration) string {
	if p == nil {
		return ""
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-p.Exited():
		return fmt.Sprintf(" (server %v)", p.ExitErr())
	case <-t.C:
		return ""
	}
}

// stopProcess stops the server process the connection started (if any)
// and removes what the connection alone needed (cleanup, if any).
func stopProcess(p *faultproxy.Process, cleanup func()) {
	if p != nil {
		p.Close(2 * time.Second)
	}
	if cleanup != nil {
		cleanup()
	}
}

// caller is what both wire clients (clients.Wire, clients.HTTPWire) offer
// for a request and its answer.
type caller interface {
	Call(ctx context.Context, method string, params map[string]any) (clients.Message, error)
	Session() clients.Session
}

// ping sends the era's barrier request (BarrierMethod) on w and waits for
// its answer; a server that does not answer, or answers with anything but
// a response, fails the check (hint says how the server ended).
func ping(h *H, w caller, why string, hint func() string) clients.Message {
	ctx, cancel := h.Op()
	defer cancel()
	method := BarrierMethod(w.Session())
	m, err := w.Call(ctx, method, nil)
	if err != nil {
		h.FailServer("server did not answer %s %s: %v%s", method, why, err, hint())
	}
	if m.Env.Kind != jsonrpc.Response {
		h.FailServer("%s %s answered with %s: %s", method, why, m.Env.Kind, m.Raw)
	}
	return m
}

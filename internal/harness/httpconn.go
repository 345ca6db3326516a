package harness

import (
	"context"
	"errors"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/protocol"
)

// HConn is one connection to an HTTP target: the server process (when the
// manifest starts one), the fault proxy in front of it, and the HTTP wire
// client talking to the proxy.
type HConn struct {
	Proc  *faultproxy.Process
	Proxy *faultproxy.HTTP
	W     *clients.HTTPWire
	// Upstream is the server's own endpoint URL, behind the proxy.
	Upstream string
	h        *H
	// cleanup removes what the connection alone needed.
	cleanup func()
}

// ConnectHTTP starts the HTTP target (when it has a command) behind a new
// fault proxy with rules installed before the first message, and
// negotiates the run's version.
func (h *H) ConnectHTTP(rules ...faultproxy.Rule) *HConn {
	ctx, cancel := context.WithTimeout(h.ctx, h.cfg.StartTimeout)
	defer cancel()
	c, err := startHTTPConn(ctx, h.cfg, h.target, rules, h.session, h)
	if err != nil {
		h.Errorf("start target: %v", err)
	}
	return c
}

func init() {
	registerTransport(&Transport{
		Name: protocol.TransportHTTP,
		Validate: func(m *Manifest) error {
			if m.URL == "" {
				return errors.New("http target needs a url")
			}
			return nil
		},
		Dial: func(ctx context.Context, cfg *Config, target *Manifest, sess clients.Session) (*Dialed, error) {
			c, err := startHTTPConn(ctx, cfg, target, nil, sess, nil)
			if err != nil {
				return nil, err
			}
			// Its requests live until Close, not only while ctx (the
			// start's bound) does.
			life, stop := context.WithCancel(context.Background())
			return &Dialed{Endpoint: HTTPEndpoint(life, c, c.W), W: c.W, Close: func() { stop(); c.Close() }}, nil
		},
		SharedProcess: true,
	})
}

// directHTTPOptions are the options of a wire that reaches target's
// endpoint itself, not through a proxy (the version probes): its client
// adds the run's credentials to every request.
func directHTTPOptions(cfg *Config, target *Manifest) clients.HTTPOptions {
	hc := clients.NewHTTPClient()
	hc.Transport = cfg.CredentialsFor(target).Transport(hc.Transport)
	return clients.HTTPOptions{ClientName: "mcp-conform", Client: hc}
}

func startHTTPConn(ctx context.Context, cfg *Config, target *Manifest, rules []faultproxy.Rule, sess clients.Session, h *H) (*HConn, error) {
	tr := faultproxy.NewTranscript(nil)
	target, cleanup, err := expandTarget(target, h)
	if err != nil {
		return nil, err
	}
	c := &HConn{h: h, cleanup: cleanup}
	proc, endpoint, err := startTargetProcess(ctx, cfg, target, tr)
	if err != nil {
		cleanup()
		return nil, err
	}
	c.Proc = proc
	rs, err := installRules(cfg, rules)
	if err != nil {
		c.Close()
		return nil, err
	}
	c.Upstream = endpoint
	// The proxy is the one place every request of a check reaches the
	// server through (its wires, second sessions, raw POSTs): it adds the
	// run's credentials to each (authorizer), so no check body handles
	// one; the transcript records the request as the check sent it.
	creds := cfg.CredentialsFor(target)
	po := faultproxy.HTTPOptions{Upstream: endpoint, Rules: rs, Transcript: tr, Redact: creds.Names(), Authorize: authorizer(creds)}
	if c.Proc != nil {
		po.Signal = c.Proc.Signal
	}
	c.Proxy, err = faultproxy.StartHTTP(context.Background(), po)
	if err != nil {
		c.Close()
		return nil, err
	}
	c.W = clients.NewHTTPWire(c.Proxy.URL(), clients.HTTPOptions{ClientName: "mcp-conform"})
	if h != nil {
		h.hconns = append(h.hconns, c)
	}
	if err := settleStarted(ctx, c.W, cfg, target, sess, h, c, c.ExitHint, tr); err != nil {
		return nil, err
	}
	return c, nil
}

// ExitHint says how the server process ended, when it has (it waits a
// little for it); "" when the harness started none.
func (c *HConn) ExitHint() string { return procExitHint(c.Proc, 300*time.Millisecond) }

func (c *HConn) Close() {
	if c.W != nil {
		_ = c.W.Close()
	}
	if c.Proxy != nil {
		_ = c.Proxy.Close()
	}
	stopProcess(c.Proc, c.cleanup)
}

// StartRole starts a tools/call of the role's tool with an explicit id and,
// when token is not nil, a progress token; extra arguments are merged.
func (c *HConn) StartRole(role string, id jsonrpc.ID, token any, extra map[string]any) *clients.HTTPCall {
	r := c.h.Role(role)
	args := map[string]any{}
	for k, v := range r.Arguments {
		args[k] = v
	}
	for k, v := range extra {
		args[k] = v
	}
	params := map[string]any{"name": r.Tool, "arguments": args}
	if token != nil {
		params = c.W.ProgressParams(token, params)
	}
	ctx, cancel := context.WithTimeout(c.h.ctx, c.h.cfg.CallTimeout)
	defer cancel()
	call, err := c.W.Start(c.h.ctx, id, "tools/call", params)
	_ = ctx
	if err != nil {
		c.h.Failf("tools/call %s: %v%s", r.Tool, err, c.ExitHint())
	}
	return call
}

// Await waits for the reply to call within the call timeout.
func (c *HConn) Await(call *clients.HTTPCall, what string) clients.Message {
	ctx, cancel := context.WithTimeout(c.h.ctx, c.h.cfg.CallTimeout)
	defer cancel()
	m, err := call.Wait(ctx)
	if err != nil {
		c.h.Failf("%s: no response for id %s: %v%s", what, call.ID(), err, c.ExitHint())
	}
	return m
}

// Ping sends the era's barrier request (ping, or server/discover in
// 2026-07-28) and waits for its answer.
func (c *HConn) Ping(why string) clients.Message { return ping(c.h, c.W, why, c.ExitHint) }

// H is the harness the connection belongs to (nil outside a check).
func (c *HConn) H() *H { return c.h }

// SecondSession opens a second, independent HTTP session (its own
// negotiation) through the connection's proxy.
func (h *H) SecondSession(c *HConn) *clients.HTTPWire {
	w := clients.NewHTTPWire(c.Proxy.URL(), clients.HTTPOptions{ClientName: "mcp-conform"})
	h.extra = append(h.extra, func() { _ = w.Close() })
	ctx, cancel := context.WithTimeout(h.ctx, h.cfg.StartTimeout)
	defer cancel()
	if err := settle(ctx, w, h.cfg, h.target, h.session); err != nil {
		h.FailServer("second session: %v%s", err, c.ExitHint())
	}
	return w
}

// DialHTTP is Dial for a Streamable HTTP target.
func DialHTTP(ctx context.Context, cfg *Config, target *Manifest, rules ...faultproxy.Rule) (*HConn, error) {
	return startHTTPConn(ctx, cfg, target, rules, clients.Session{}, nil)
}

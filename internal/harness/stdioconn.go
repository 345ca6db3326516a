package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/protocol"
)

// Conn is one connection to the target: a server process behind a fault
// proxy link, and a wire client on the client end. On a WebSocket target
// Link is nil and WS is the proxy (Proc the server process, when the
// manifest starts one): the same Wire, over frames (see wsconn.go).
type Conn struct {
	Link *faultproxy.Stdio
	W    *clients.Wire
	h    *H
	WS   *faultproxy.WebSocket
	Proc *faultproxy.Process
	// cleanup removes what the connection alone needed (a probe's
	// private directory).
	cleanup func()
}

// H is the harness the connection belongs to (nil outside a check).
func (c *Conn) H() *H { return c.h }

// Connect starts the target behind a new fault proxy link with rules
// installed before the first message, and negotiates the run's version.
func (h *H) Connect(rules ...faultproxy.Rule) *Conn {
	ctx, cancel := context.WithTimeout(h.ctx, h.cfg.StartTimeout)
	defer cancel()
	c, err := startConn(ctx, h.cfg, h.target, rules, h.session, h)
	if err != nil {
		h.Errorf("start target: %v", err)
	}
	return c
}

// ConnectBare starts the stdio target behind a new fault proxy link with
// rules installed before the first message, and does not negotiate: the
// check sends the handshake itself, as it chooses (an initialize in a
// version the server does not support). A target that is not a stdio
// process SKIPs.
func (h *H) ConnectBare(rules ...faultproxy.Rule) *Conn {
	if h.target.Via() != protocol.TransportStdio {
		h.Skip("the target is not a stdio process (" + h.target.Transport + ")")
	}
	ctx, cancel := context.WithTimeout(h.ctx, h.cfg.StartTimeout)
	defer cancel()
	c, err := startConnAs(ctx, h.cfg, h.target, rules, h.session, h, false)
	if err != nil {
		h.Errorf("start target: %v", err)
	}
	return c
}

func init() {
	registerTransport(&Transport{
		Name: protocol.TransportStdio,
		Validate: func(m *Manifest) error {
			if len(m.Command) == 0 {
				return errors.New("stdio target needs a command")
			}
			if len(m.Headers) > 0 || m.RequiresAuth {
				return errors.New("headers and requiresAuth apply to http and websocket targets, not stdio")
			}
			return nil
		},
		Dial: dialFramed,
	})
}

// dialFramed is Transport.Dial of the framed transports (stdio, and
// WebSocket, which startConn hands to startWSConn).
func dialFramed(ctx context.Context, cfg *Config, target *Manifest, sess clients.Session) (*Dialed, error) {
	c, err := startConn(ctx, cfg, target, nil, sess, nil)
	if err != nil {
		return nil, err
	}
	return &Dialed{Endpoint: StdioEndpoint(c), W: c.W, Close: c.Close}, nil
}

// startConn starts the target, installs rules and negotiates: with a known
// session it forces that version, otherwise it probes.
func startConn(ctx context.Context, cfg *Config, target *Manifest, rules []faultproxy.Rule, sess clients.Session, h *H) (*Conn, error) {
	return startConnAs(ctx, cfg, target, rules, sess, h, true)
}

// startConnAs is startConn; without negotiate (stdio only) the connection
// is left as the server started, before any handshake.
func startConnAs(ctx context.Context, cfg *Config, target *Manifest, rules []faultproxy.Rule, sess clients.Session, h *H, negotiate bool) (*Conn, error) {
	target, cleanup, err := expandTarget(target, h)
	if err != nil {
		return nil, err
	}
	if target.Via() == protocol.TransportWebSocket {
		c, err := startWSConn(ctx, cfg, target, rules, sess, h)
		if err != nil {
			cleanup()
			return nil, err
		}
		c.cleanup = cleanup
		return c, nil
	}
	argv, env, err := resolveCommand(target)
	if err != nil {
		cleanup()
		return nil, err
	}
	rs, err := installRules(cfg, rules)
	if err != nil {
		cleanup()
		return nil, err
	}
	opts := faultproxy.StdioOptions{Command: argv, Env: env, Dir: target.Dir, Rules: rs}
	if cfg.Verbose {
		opts.StderrTee = os.Stderr
	}
	link, err := faultproxy.StartStdio(context.Background(), opts)
	if err != nil {
		cleanup()
		return nil, err
	}
	c := &Conn{Link: link, W: clients.NewWire(link.Client(), clients.WireOptions{ClientName: "mcp-conform"}), h: h, cleanup: cleanup}
	if h != nil {
		h.conns = append(h.conns, c)
	}
	if !negotiate {
		return c, nil
	}
	if err := settleStarted(ctx, c.W, cfg, target, sess, h, c, func() string { return exitHint(link) }, link.Transcript()); err != nil {
		return nil, err
	}
	return c, nil
}

// Negotiator is what both wire clients offer for version negotiation.
type Negotiator interface {
	Negotiate(ctx context.Context, force string) (clients.Session, error)
	SetSession(clients.Session)
}

// settle brings a new connection to the run's version: a known modern
// session is reused as is (there is no handshake to repeat); otherwise the
// version the probe found (or --spec) is forced through negotiation.
func settle(ctx context.Context, w Negotiator, cfg *Config, target *Manifest, sess clients.Session) error {
	if sess.Era == clients.EraModern {
		w.SetSession(sess)
		return nil
	}
	force := cfg.force(target)
	if sess.Version != "" {
		force = sess.Version
	}
	if _, err := w.Negotiate(ctx, force); err != nil {
		return fmt.Errorf("negotiate (%s): %w", orNewest(force), err)
	}
	return nil
}

// startHint adds to a failed start's error how the server ended (hint
// waits a little for it); nothing to a refused negotiation, whose server
// answered and lives on.
func startHint(err error, hint func() string) error {
	if errors.Is(err, clients.ErrNegotiation) {
		return err
	}
	return fmt.Errorf("%w%s", err, hint())
}

func orNewest(v string) string {
	if v == "" {
		return "newest accepted version"
	}
	return v
}

// exitHint says how the server ended, when it has. It is called on failure
// paths, where a server whose output just ended is usually being reaped: it
// waits a little for the exit status.
func exitHint(link *faultproxy.Stdio) string {
	t := time.NewTimer(500 * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return ""
	case <-link.Exited():
		if err := link.ExitErr(); err != nil {
			return fmt.Sprintf(" (server %v)", err)
		}
		return " (server exited)"
	}
}

func (c *Conn) Close() {
	if c.W != nil {
		_ = c.W.Close()
	}
	if c.Link != nil {
		_ = c.Link.Close()
	}
	if c.WS != nil {
		_ = c.WS.Close()
	}
	stopProcess(c.Proc, c.cleanup)
}

// StartRole sends a tools/call of the role's tool with an explicit id and,
// when token is not nil, a progress token.
func (c *Conn) StartRole(role string, id jsonrpc.ID, token any) *clients.Pending {
	r := c.h.Role(role)
	args := map[string]any{}
	for k, v := range r.Arguments {
		args[k] = v
	}
	params := map[string]any{"name": r.Tool, "arguments": args}
	if token != nil {
		params = c.W.ProgressParams(token, params)
	}
	ctx, cancel := c.h.Op()
	defer cancel()
	p, err := c.W.Start(ctx, id, "tools/call", params)
	if err != nil {
		c.h.Errorf("send tools/call %s: %v", r.Tool, err)
	}
	return p
}

// Await waits for the reply to p within the call timeout; a server that
// never answers or dies fails the check with what it did.
func (c *Conn) Await(p *clients.Pending, what string) clients.Message {
	ctx, cancel := context.WithTimeout(c.h.ctx, c.h.cfg.CallTimeout)
	defer cancel()
	m, err := p.Wait(ctx)
	if err != nil {
		c.h.FailServer("%s: no response for id %s: %v%s", what, p.ID(), err, c.ExitHint())
	}
	return m
}

// BarrierMethod is the request a check sends to learn that the server is
// alive and has read everything sent before: ping, which 2026-07-28 removed
// (changelog item 5), and there server/discover, which every modern server
// MUST implement.
func BarrierMethod(s clients.Session) string {
	if s.Era == clients.EraModern {
		return "server/discover"
	}
	return "ping"
}

// Ping sends the era's barrier request (ping, or server/discover in
// 2026-07-28) and waits for its answer: the server is alive and has read
// everything sent before it.
func (c *Conn) Ping(why string) clients.Message { return ping(c.h, c.W, why, c.ExitHint) }

// Cancel sends notifications/cancelled for id.
func (c *Conn) Cancel(id jsonrpc.ID, reason string) {
	ctx, cancel := c.h.Op()
	defer cancel()
	if err := c.W.Notify(ctx, "notifications/cancelled", map[string]any{"requestId": id.Raw(), "reason": reason}); err != nil {
		c.h.Errorf("send cancellation: %v", err)
	}
}

// SendRaw writes bytes as one message.
func (c *Conn) SendRaw(line string) {
	ctx, cancel := c.h.Op()
	defer cancel()
	if err := c.W.SendRaw(ctx, []byte(line)); err != nil {
		c.h.FailServer("could not write to the server (it may have exited): %v%s", err, c.ExitHint())
	}
}

// WaitFirst waits up to d for the first inbound message from index from on
// that satisfies pred; ok is false when none came (see Silence for why).
func (c *Conn) WaitFirst(from int, d time.Duration, pred func(clients.Message) bool) (clients.Message, bool) {
	ctx, cancel := context.WithTimeout(c.h.ctx, d)
	defer cancel()
	m, err := c.W.WaitFor(ctx, from, pred)
	return m, err == nil
}

// Silence says why a wait of up to d for the server came back empty: the
// connection ended (and how the server ended), or nothing came within d.
func (c *Conn) Silence(d time.Duration) string {
	select {
	case <-c.W.Closed():
		err := c.W.Err()
		if err == nil {
			err = io.EOF
		}
		return fmt.Sprintf("before the connection ended (%v)%s", err, c.ExitHint())
	default:
		return fmt.Sprintf("within %s%s", d, c.ExitHint())
	}
}

// Progress returns the progress notifications from index from on, whatever
// their token.
func (c *Conn) Progress(from int) []clients.Message {
	var out []clients.Message
	for _, m := range c.W.Since(from) {
		if m.Env.Kind == jsonrpc.Notification && m.Env.Method == "notifications/progress" {
			out = append(out, m)
		}
	}
	return out
}

// RepliesTo returns the replies with id from index from on.
func (c *Conn) RepliesTo(from int, id jsonrpc.ID) []clients.Message {
	var out []clients.Message
	for _, m := range c.W.Since(from) {
		if m.Env.Kind.IsReply() && m.Env.ID == id {
			out = append(out, m)
		}
	}
	return out
}

// ConnectWrapped is Connect on a stdio target with the client's end of the
// link wrapped (a reader a check gates, to play a slow consumer). The
// server starts once, with no retry: a check that needs the wrapper
// judges a failure to start as ERROR.
func (h *H) ConnectWrapped(wrap func(io.ReadWriteCloser) io.ReadWriteCloser, rules ...faultproxy.Rule) *Conn {
	ctx, cancel := context.WithTimeout(h.ctx, h.cfg.StartTimeout)
	defer cancel()
	target, cleanup, err := expandTarget(h.target, h)
	if err != nil {
		h.Errorf("start target: %v", err)
	}
	argv, env, err := resolveCommand(target)
	if err != nil {
		h.Errorf("start target: %v", err)
	}
	rs := faultproxy.NewRules()
	if err := rs.Set(rules...); err != nil {
		h.Errorf("install rules: %v", err)
	}
	opts := faultproxy.StdioOptions{Command: argv, Env: env, Dir: target.Dir, Rules: rs}
	if h.cfg.Verbose {
		opts.StderrTee = os.Stderr
	}
	link, err := faultproxy.StartStdio(context.Background(), opts)
	if err != nil {
		cleanup()
		h.Errorf("start target: %v", err)
	}
	c := &Conn{Link: link, W: clients.NewWire(wrap(link.Client()), clients.WireOptions{ClientName: "mcp-conform"}), h: h, cleanup: cleanup}
	h.conns = append(h.conns, c)
	if err := settle(ctx, c.W, h.cfg, target, h.session); err != nil {
		h.Errorf("start target: %v%s", err, exitHint(link))
	}
	return c
}

// Dial starts target and opens a stdio or WebSocket connection to it
// through the fault proxy, outside a check (tests and tools): negotiated
// in the target's own version, closed by the caller.
func Dial(ctx context.Context, cfg *Config, target *Manifest, rules ...faultproxy.Rule) (*Conn, error) {
	return startConn(ctx, cfg, target, rules, clients.Session{}, nil)
}

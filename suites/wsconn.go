package suites

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/faultproxy"
)

// JSON-RPC over WebSocket (manifest transport "websocket", url ws://…) is
// a custom transport: the specification asks it to keep the JSON-RPC
// message format and the message patterns, which are those of stdio with a
// frame in place of a line. A WebSocket target is therefore driven through
// the same Conn as a stdio one — a Wire over frames, behind a fault proxy
// that treats each frame as a message — and the stdio checks whose clauses
// are about messages (cancellation by notification, progress, JSON-RPC
// errors) run on it unchanged.

// customTransports is the specification page that lets a transport other
// than stdio and Streamable HTTP exist, and says what it must keep.
const customTransports = "specification/2026-07-28/basic/transports/index.mdx"

// customTransportsPage is the page of version v with the Custom Transports
// section: transports/index.mdx in 2026-07-28, transports.mdx before.
func customTransportsPage(v string) string {
	if v == "" || v >= "2026-07-28" {
		return customTransports
	}
	return "specification/" + v + "/basic/transports.mdx"
}

// startWSConn starts the WebSocket target (when it has a command) behind a
// new fault proxy with rules installed before the first message, dials it
// through the proxy and negotiates the run's version.
func startWSConn(ctx context.Context, cfg *Config, target *Manifest, rules []faultproxy.Rule, sess clients.Session, h *H) (*Conn, error) {
	for attempt := 1; ; attempt++ {
		c, retry, err := startWSConnOnce(ctx, cfg, target, rules, sess, h)
		if !retry || attempt == 3 || ctx.Err() != nil {
			return c, err
		}
	}
}

// startWSConnOnce is one attempt of startWSConn. retry is true when the
// server the harness started on a free port exited while another process
// answered on that port (the port was taken between picking and binding
// it): a new attempt picks a new port.
func startWSConnOnce(ctx context.Context, cfg *Config, target *Manifest, rules []faultproxy.Rule, sess clients.Session, h *H) (*Conn, bool, error) {
	tr := faultproxy.NewTranscript(nil)
	c := &Conn{h: h}
	proc, endpoint, err := startTargetProcess(ctx, cfg, target, tr)
	if err != nil {
		return nil, false, err
	}
	c.Proc = proc
	rs := faultproxy.NewRules()
	if err := rs.Set(rules...); err != nil {
		c.close()
		return nil, false, fmt.Errorf("install rules: %w", err)
	}
	po := faultproxy.WebSocketOptions{Upstream: endpoint, Rules: rs, Transcript: tr}
	if proc != nil {
		po.Signal = proc.Signal
	}
	c.WS, err = faultproxy.StartWebSocket(context.Background(), po)
	if err != nil {
		c.close()
		return nil, false, err
	}
	c.W, err = clients.DialWebSocket(ctx, c.WS.URL(), nil, clients.WireOptions{ClientName: "mcp-conform"})
	if err != nil {
		// A server that could not bind its port exits; whoever answered
		// on the port is a stranger, and another port may do.
		retry := proc != nil && exitsWithin(proc, 2*time.Second)
		err = fmt.Errorf("%w%s", err, c.exitHint())
		c.close()
		return nil, retry, withTranscript(err, tr)
	}
	if h != nil {
		h.conns = append(h.conns, c)
	}
	if err := settle(ctx, c.W, cfg, target, sess); err != nil {
		err = startHint(err, c.exitHint)
		if h == nil {
			c.close()
			return nil, false, withTranscript(err, tr)
		}
		return nil, false, err
	}
	return c, false, nil
}

// startTargetProcess starts the target's command, when it has one, on a
// free loopback port ({port} in command, env and url) and waits until it
// listens; it returns the process (nil without a command) and the endpoint
// URL. A target without a command must already listen.
func startTargetProcess(ctx context.Context, cfg *Config, target *Manifest, tr *faultproxy.Transcript) (*faultproxy.Process, string, error) {
	if len(target.Command) == 0 {
		return nil, target.URL, waitListening(ctx, target.URL, nil)
	}
	// A port picked free can be taken by another process before the server
	// binds it (a busy machine): a server that exits saying so is started
	// again on a new port, a few times.
	usesPort := strings.Contains(strings.Join(target.Command, " ")+" "+fmt.Sprint(target.Env), "{port}")
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, "", fmt.Errorf("pick a port: %w", err)
		}
		sub := func(s string) string { return strings.ReplaceAll(s, "{port}", port) }
		m := *target
		m.Command = nil
		for _, a := range target.Command {
			m.Command = append(m.Command, sub(a))
		}
		m.Env = map[string]string{}
		for k, v := range target.Env {
			m.Env[k] = sub(v)
		}
		endpoint := sub(target.URL)
		argv, env, err := resolveCommand(&m)
		if err != nil {
			return nil, "", err
		}
		po := faultproxy.ProcessOptions{Command: argv, Env: env, Dir: target.Dir, Transcript: tr}
		if cfg.Verbose {
			po.Tee = os.Stderr
		}
		proc, err := faultproxy.StartProcess(po)
		if err != nil {
			return nil, "", err
		}
		err = waitListening(ctx, endpoint, proc)
		if err == nil {
			return proc, endpoint, nil
		}
		proc.Close(time.Second)
		if attempt < maxPortAttempts && usesPort && portTaken(tr, proc) {
			tr.Note("port %s was taken before the server could bind it; starting it again on another port", port)
			continue
		}
		return nil, "", err
	}
}

// ReferenceWSManifest is the built-in WebSocket target: the reference
// server (or a mutant) on a free loopback port, started by this
// executable, one session per connection.
func ReferenceWSManifest(mutant string) *Manifest {
	return &Manifest{
		Name:      "mcp-conform-reference",
		Transport: "websocket",
		Command:   []string{"mcp-conform", "fixture", "--ws", "127.0.0.1:{port}"},
		URL:       "ws://127.0.0.1:{port}/mcp",
		Restart:   true,
		Roles: map[string]Role{
			"slow": {Tool: "slow", Arguments: map[string]any{"steps": 8, "stepMs": 60}},
		},
		Env: map[string]string{
			fixtureEnv:   fixtureValue(mutant),
			fixtureWSEnv: "127.0.0.1:{port}",
		},
	}
}

// fixtureWSEnv, set with fixtureEnv, serves WebSocket on its value (an
// address) instead of stdio.
const fixtureWSEnv = "MCP_CONFORM_FIXTURE_WS"

// exitHint says how the server ended, when it has: the stdio child, or
// the process a WebSocket manifest started.
func (c *Conn) exitHint() string {
	if c.Link != nil {
		return exitHint(c.Link)
	}
	if c.Proc == nil {
		return ""
	}
	t := time.NewTimer(500 * time.Millisecond)
	defer t.Stop()
	select {
	case <-c.Proc.Exited():
		return fmt.Sprintf(" (server %v)", c.Proc.ExitErr())
	case <-t.C:
		return ""
	}
}

// exited is closed when the server ends: the stdio child, or the process
// a WebSocket manifest started (nil, never closed, when there is none).
func (c *Conn) exited() <-chan struct{} {
	switch {
	case c.Link != nil:
		return c.Link.Exited()
	case c.Proc != nil:
		return c.Proc.Exited()
	}
	return nil
}

// proxyTranscript is the transcript of the connection's fault proxy.
func (c *Conn) proxyTranscript() *faultproxy.Transcript {
	if c.WS != nil {
		return c.WS.Transcript()
	}
	return c.Link.Transcript()
}

// waitPassed blocks until the proxy delivered a message satisfying m.
func (c *Conn) waitPassed(ctx context.Context, m faultproxy.Match) error {
	if c.WS != nil {
		return c.WS.WaitPassed(ctx, m)
	}
	return c.Link.WaitPassed(ctx, m)
}

// exitsWithin reports whether p exits within d.
func exitsWithin(p *faultproxy.Process, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.Exited():
		return true
	case <-t.C:
		return false
	}
}

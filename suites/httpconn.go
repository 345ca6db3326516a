package suites

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
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

// freePort asks the kernel for a free loopback port.
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	_, port, err := net.SplitHostPort(ln.Addr().String())
	return port, err
}

func startHTTPConn(ctx context.Context, cfg *Config, target *Manifest, rules []faultproxy.Rule, sess clients.Session, h *H) (*HConn, error) {
	tr := faultproxy.NewTranscript(nil)
	c := &HConn{h: h}
	endpoint := target.URL
	// A port picked free can be taken by another process before the server
	// binds it (a busy machine): a server that exits saying so is started
	// again on a new port, a few times.
	for attempt := 1; len(target.Command) > 0; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, fmt.Errorf("pick a port: %w", err)
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
		endpoint = sub(target.URL)
		argv, env, err := resolveCommand(&m)
		if err != nil {
			return nil, err
		}
		po := faultproxy.ProcessOptions{Command: argv, Env: env, Dir: target.Dir, Transcript: tr}
		if cfg.Verbose {
			po.Tee = os.Stderr
		}
		c.Proc, err = faultproxy.StartProcess(po)
		if err != nil {
			return nil, err
		}
		err = waitListening(ctx, endpoint, c.Proc)
		if err == nil {
			break
		}
		c.Proc.Close(time.Second)
		if attempt < maxPortAttempts && portTaken(tr, c.Proc) && strings.Contains(strings.Join(target.Command, " ")+" "+fmt.Sprint(target.Env), "{port}") {
			tr.Note("port %s was taken before the server could bind it; starting it again on another port", port)
			c.Proc = nil
			continue
		}
		return nil, err
	}
	if c.Proc == nil {
		if err := waitListening(ctx, endpoint, nil); err != nil {
			return nil, err
		}
	}
	rs := faultproxy.NewRules()
	if err := rs.Set(rules...); err != nil {
		c.close()
		return nil, fmt.Errorf("install rules: %w", err)
	}
	c.Upstream = endpoint
	po := faultproxy.HTTPOptions{Upstream: endpoint, Rules: rs, Transcript: tr}
	if c.Proc != nil {
		po.Signal = c.Proc.Signal
	}
	var err error
	c.Proxy, err = faultproxy.StartHTTP(context.Background(), po)
	if err != nil {
		c.close()
		return nil, err
	}
	c.W = clients.NewHTTPWire(c.Proxy.URL(), clients.HTTPOptions{ClientName: "mcp-conform"})
	if h != nil {
		h.hconns = append(h.hconns, c)
	}
	if err := settle(ctx, c.W, cfg, target, sess); err != nil {
		err = fmt.Errorf("%w%s", err, c.exitHint())
		if h == nil {
			c.close()
			return nil, withTranscript(err, tr)
		}
		return nil, err
	}
	return c, nil
}

// maxPortAttempts bounds the starts of a server whose port was taken.
const maxPortAttempts = 3

// portTaken reports whether the server exited and said that its address
// was in use.
func portTaken(tr *faultproxy.Transcript, p *faultproxy.Process) bool {
	select {
	case <-p.Exited():
	default:
		return false
	}
	// Its last output may still be on the way into the transcript.
	for deadline := time.Now().Add(500 * time.Millisecond); ; {
		for _, e := range tr.Entries() {
			if strings.Contains(strings.ToLower(e.Text), "address already in use") {
				return true
			}
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitListening waits until the endpoint accepts TCP connections, the
// process exits, or ctx ends.
func waitListening(ctx context.Context, endpoint string, p *faultproxy.Process) error {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return fmt.Errorf("target url %q: not an absolute URL", endpoint)
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), map[string]string{"https": "443"}[u.Scheme]+map[bool]string{true: "80"}[u.Scheme != "https"])
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var exited <-chan struct{}
	if p != nil {
		exited = p.Exited()
	}
	for {
		d := net.Dialer{Timeout: 200 * time.Millisecond}
		conn, err := d.DialContext(ctx, "tcp", host)
		if err == nil {
			_ = conn.Close()
			return nil
		}
		if p == nil {
			// A server the harness did not start is up or it is not.
			return fmt.Errorf("the server at %s is not reachable: %w", endpoint, err)
		}
		select {
		case <-exited:
			return fmt.Errorf("the server exited before listening on %s: %v", host, p.ExitErr())
		case <-ctx.Done():
			return fmt.Errorf("the server did not listen on %s in time (last attempt: %v): %w", host, err, ctx.Err())
		case <-tick.C:
		}
	}
}

func (c *HConn) exitHint() string {
	if c.Proc == nil {
		return ""
	}
	t := time.NewTimer(300 * time.Millisecond)
	defer t.Stop()
	select {
	case <-c.Proc.Exited():
		return fmt.Sprintf(" (server %v)", c.Proc.ExitErr())
	case <-t.C:
		return ""
	}
}

func (c *HConn) close() {
	if c.W != nil {
		_ = c.W.Close()
	}
	if c.Proxy != nil {
		_ = c.Proxy.Close()
	}
	if c.Proc != nil {
		c.Proc.Close(2 * time.Second)
	}
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
		c.h.Failf("tools/call %s: %v%s", r.Tool, err, c.exitHint())
	}
	return call
}

// Await waits for the reply to call within the call timeout.
func (c *HConn) Await(call *clients.HTTPCall, what string) clients.Message {
	ctx, cancel := context.WithTimeout(c.h.ctx, c.h.cfg.CallTimeout)
	defer cancel()
	m, err := call.Wait(ctx)
	if err != nil {
		c.h.Failf("%s: no response for id %s: %v%s", what, call.ID(), err, c.exitHint())
	}
	return m
}

// Ping sends the era's barrier request (ping, or server/discover in
// 2026-07-28) and waits for its answer.
func (c *HConn) Ping(why string) clients.Message {
	ctx, cancel := c.h.op()
	defer cancel()
	method := barrierMethod(c.W.Session())
	m, err := c.W.Call(ctx, method, nil)
	if err != nil {
		c.h.failServer("server did not answer %s %s: %v%s", method, why, err, c.exitHint())
	}
	if m.Env.Kind != jsonrpc.Response {
		c.h.failServer("%s %s answered with %s: %s", method, why, m.Env.Kind, m.Raw)
	}
	return m
}

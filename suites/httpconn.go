package suites

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/internal/auth"
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

// freePort finds a free loopback port for a server the harness starts.
// The port is free when freePort returns but only bound when the server
// starts, so it is drawn below the kernel's ephemeral range: a port the
// kernel hands to any process binding port 0 in between (other servers,
// other test runs on the machine) would otherwise be taken under the
// server, whose start then fails while the harness talks to a stranger.
func freePort() (string, error) {
	lo := ephemeralLow()
	for range 64 {
		if lo <= 11024 {
			break
		}
		port := 10000 + rand.IntN(lo-11024)
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue
		}
		_ = ln.Close()
		return strconv.Itoa(port), nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	_, port, err := net.SplitHostPort(ln.Addr().String())
	return port, err
}

// ephemeralLow is the first port of the kernel's ephemeral range (Linux;
// 32768 elsewhere or when it cannot be read).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) < 1 {
		return 32768
	}
	lo, err := strconv.Atoi(f[0])
	if err != nil {
		return 32768
	}
	return lo
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
	rs := faultproxy.NewRulesSeed(cfg.Seed)
	if err := rs.Set(rules...); err != nil {
		c.close()
		return nil, fmt.Errorf("install rules: %w", err)
	}
	c.Upstream = endpoint
	// The proxy is the one place every request of a check reaches the
	// server through (its wires, second sessions, raw POSTs): it adds the
	// run's credentials to each (auth.Credentials.Apply), so no check
	// body handles one; the transcript records the request as the check
	// sent it.
	creds := cfg.CredentialsFor(target)
	po := faultproxy.HTTPOptions{Upstream: endpoint, Rules: rs, Transcript: tr, Redact: creds.Names(),
		Authorize: func(req *http.Request) error { return creds.Apply(req.Context(), auth.Endpoint(req), req.Header) }}
	if c.Proc != nil {
		po.Signal = c.Proc.Signal
	}
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
		err = startHint(err, c.exitHint)
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
	if c.cleanup != nil {
		c.cleanup()
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

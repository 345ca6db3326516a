package harness

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/protocol"
)

// JSON-RPC over WebSocket (manifest transport "websocket", url ws://…) is
// a custom transport: the specification asks it to keep the JSON-RPC
// message format and the message patterns, which are those of stdio with a
// frame in place of a line. A WebSocket target is therefore driven through
// the same Conn as a stdio one — a Wire over frames, behind a fault proxy
// that treats each frame as a message — and the stdio checks whose clauses
// are about messages (cancellation by notification, progress, JSON-RPC
// errors) run on it unchanged.

// CustomTransports is the specification page that lets a transport other
// than stdio and Streamable HTTP exist, and says what it must keep.
const CustomTransports = "specification/2026-07-28/basic/transports/index.mdx"

// CustomTransportsPage is the page of version v with the Custom Transports
// section: transports/index.mdx in 2026-07-28, transports.mdx before.
func CustomTransportsPage(v string) string {
	if v == "" || !protocol.Version(v).Before(protocol.V20260728) {
		return CustomTransports
	}
	return "specification/" + v + "/basic/transports.mdx"
}

func init() {
	registerTransport(&Transport{
		Name: protocol.TransportWebSocket,
		Validate: func(m *Manifest) error {
			// JSON-RPC, one message per frame; command (optional) starts it.
			if !strings.HasPrefix(m.URL, "ws://") && !strings.HasPrefix(m.URL, "wss://") {
				return fmt.Errorf("websocket target needs a ws:// or wss:// url, not %q", m.URL)
			}
			return nil
		},
		Dial: dialFramed,
	})
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
	rs, err := installRules(cfg, rules)
	if err != nil {
		c.Close()
		return nil, false, err
	}
	po := faultproxy.WebSocketOptions{Upstream: endpoint, Rules: rs, Transcript: tr, Authorize: authorizer(cfg.CredentialsFor(target))}
	if proc != nil {
		po.Signal = proc.Signal
	}
	c.WS, err = faultproxy.StartWebSocket(context.Background(), po)
	if err != nil {
		c.Close()
		return nil, false, err
	}
	c.W, err = clients.DialWebSocket(ctx, c.WS.URL(), nil, clients.WireOptions{ClientName: "mcp-conform"})
	if err != nil {
		// A server that could not bind its port exits; whoever answered
		// on the port is a stranger, and another port may do.
		retry := proc != nil && exitsWithin(proc, 2*time.Second)
		err = fmt.Errorf("%w%s", err, c.ExitHint())
		c.Close()
		return nil, retry, withTranscript(err, tr)
	}
	if h != nil {
		h.conns = append(h.conns, c)
	}
	if err := settleStarted(ctx, c.W, cfg, target, sess, h, c, c.ExitHint, tr); err != nil {
		return nil, false, err
	}
	return c, false, nil
}

// ExitHint says how the server ended, when it has: the stdio child, or
// the process a WebSocket manifest started.
func (c *Conn) ExitHint() string {
	if c.Link != nil {
		return exitHint(c.Link)
	}
	return procExitHint(c.Proc, 500*time.Millisecond)
}

// Exited is closed when the server ends: the stdio child, or the process
// a WebSocket manifest started (nil, never closed, when there is none).
func (c *Conn) Exited() <-chan struct{} {
	switch {
	case c.Link != nil:
		return c.Link.Exited()
	case c.Proc != nil:
		return c.Proc.Exited()
	}
	return nil
}

// Transcript is the transcript of the connection's fault proxy.
func (c *Conn) Transcript() *faultproxy.Transcript {
	if c.WS != nil {
		return c.WS.Transcript()
	}
	return c.Link.Transcript()
}

// WaitPassed blocks until the proxy delivered a message satisfying m.
func (c *Conn) WaitPassed(ctx context.Context, m faultproxy.Match) error {
	if c.WS != nil {
		return c.WS.WaitPassed(ctx, m)
	}
	return c.Link.WaitPassed(ctx, m)
}

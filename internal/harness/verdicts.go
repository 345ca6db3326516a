package harness

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/reports"
)

// FailMust ends the check as FAIL: a MUST clause next to the check's own
// SHOULD one was broken.
func (h *H) FailMust(format string, args ...any) {
	panic(verdict{status: reports.Fail, reason: fmt.Sprintf(format, args...), level: reports.Must})
}

// Sleep waits d or until the check's context ends.
func (h *H) Sleep(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-h.ctx.Done():
		h.Errorf("interrupted while polling: %v", h.ctx.Err())
	}
}

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

func Clip(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
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

// Judge runs f on an H that knows only the session sess, outside any run,
// and returns the verdict f reached (PASS when it returned): unit tests of
// the helpers check bodies share (a capability gate, a parser) use it.
func Judge(sess clients.Session, f func(h *H)) (status reports.Status, reason string) {
	h := &H{ctx: context.Background(), session: sess}
	defer func() {
		if v, ok := recover().(verdict); ok {
			status, reason = v.status, v.reason
		}
	}()
	f(h)
	return reports.Pass, ""
}

// Dial starts target and opens a stdio or WebSocket connection to it
// through the fault proxy, outside a check (tests and tools): negotiated
// in the target's own version, closed by the caller.
func Dial(ctx context.Context, cfg *Config, target *Manifest, rules ...faultproxy.Rule) (*Conn, error) {
	return startConn(ctx, cfg, target, rules, clients.Session{}, nil)
}

// DialHTTP is Dial for a Streamable HTTP target.
func DialHTTP(ctx context.Context, cfg *Config, target *Manifest, rules ...faultproxy.Rule) (*HConn, error) {
	return startHTTPConn(ctx, cfg, target, rules, clients.Session{}, nil)
}

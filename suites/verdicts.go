package suites

import (
	"context"
	"fmt"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
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

package harness

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// Unique returns a fresh identifier for tags and unknown session ids.
func Unique(prefix string) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}

// IsProgressFor matches a stream event carrying progress for token.
func IsProgressFor(token jsonrpc.ID) func(clients.StreamEvent) bool {
	return func(e clients.StreamEvent) bool {
		if !e.HasData {
			return false
		}
		env := jsonrpc.Parse([]byte(e.Data))
		return env.Method == "notifications/progress" && env.ProgressToken == token
	}
}

// IsReplyTo matches a stream event carrying the reply to id.
func IsReplyTo(id jsonrpc.ID) func(clients.StreamEvent) bool {
	return func(e clients.StreamEvent) bool {
		if !e.HasData {
			return false
		}
		env := jsonrpc.Parse([]byte(e.Data))
		return env.Kind.IsReply() && env.ID == id
	}
}

// WaitEvent waits for an event of call satisfying pred within d.
func (c *HConn) WaitEvent(call *clients.HTTPCall, d time.Duration, pred func(clients.StreamEvent) bool) (clients.StreamEvent, bool) {
	ctx, cancel := context.WithTimeout(c.h.ctx, d)
	defer cancel()
	e, err := call.WaitEvent(ctx, 0, pred)
	return e, err == nil
}

// firstProgressOrReply starts the slow role on an SSE stream and waits for
// its first progress (or its reply, which fails the scenario as too short).
func (c *HConn) FirstProgress(call *clients.HTTPCall, token jsonrpc.ID) {
	h := c.h
	if !call.IsSSE() {
		h.Skip(fmt.Sprintf("the server answered tools/call with %q, not an event stream: there is no response stream to act on", call.Header().Get("Content-Type")))
	}
	e, ok := c.WaitEvent(call, h.cfg.CallTimeout, func(e clients.StreamEvent) bool {
		return IsProgressFor(token)(e) || IsReplyTo(call.ID())(e)
	})
	if !ok {
		h.Failf("request %s got neither progress nor a response within %s (stream: %v)%s", call.ID(), h.cfg.CallTimeout, call.EndErr(), c.ExitHint())
	}
	if IsReplyTo(call.ID())(e) {
		h.Skip("the slow role sent no progress for its token before completing: nothing to cancel mid-stream (progress is optional)")
	}
}

// ProbeRole returns the probe tool and the slow role's tag argument, or
// skips: without a probe, whether work stopped is not observable.
func (h *H) ProbeRole() (tool, tagArg string) {
	p := h.Role("slow").Probe
	tool, _ = p["tool"].(string)
	tagArg, _ = p["tag"].(string)
	if tool == "" || tagArg == "" {
		h.Skip("the slow role declares no probe (probe: {tool, tag}): whether the server's work stopped is not observable from outside")
	}
	return tool, tagArg
}

// WaitEnded waits up to d for call's stream to end.
func WaitEnded(ctx context.Context, call *clients.HTTPCall, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-call.Ended():
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
}

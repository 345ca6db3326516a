package faultproxy

import (
	"context"
	"fmt"
	"syscall"
	"time"
)

// Signal is a POSIX signal sent to the server's process group.
type Signal = syscall.Signal

// Pass delivers the message unchanged. It is useful to count occurrences or
// to arm other rules without acting.
type Pass struct{}

// Apply delivers msg.
func (Pass) Apply(_ context.Context, c Conduit, msg *Message) { _ = c.Deliver(msg) }

// Drop swallows the message; the transcript records it.
type Drop struct{}

// Apply records the drop and does not deliver msg.
func (Drop) Apply(_ context.Context, c Conduit, msg *Message) {
	c.Record(msg, "drop", "message swallowed")
}

// Delay holds the message for a duration. Later messages in the same
// direction overtake it: that is the fault.
type Delay struct {
	// For is how long the message is held.
	For time.Duration
}

// Apply holds msg for d.For, then delivers it.
func (d Delay) Apply(_ context.Context, c Conduit, msg *Message) {
	c.Record(msg, "delay", fmt.Sprintf("held for %s", d.For))
	c.Go(func(ctx context.Context) {
		t := time.NewTimer(d.For)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			c.Record(msg, "delay", "link closed while held; message not delivered")
			return
		}
		c.Record(msg, "release", "delay elapsed")
		_ = c.Deliver(msg)
	})
}

// HoldUntil holds the message until another message satisfying Until has
// been delivered (or had been already), then delivers it. Max bounds the
// hold so that a trigger that never comes cannot hang a run; on expiry the
// message is delivered and the transcript says so.
type HoldUntil struct {
	// Until is the message whose passage releases the held one.
	Until Match
	// Max bounds the hold; zero means 10 s.
	Max time.Duration
}

// Apply holds msg until h.Until passed.
func (h HoldUntil) Apply(_ context.Context, c Conduit, msg *Message) {
	max := h.Max
	if max <= 0 {
		max = 10 * time.Second
	}
	c.Record(msg, "hold", "held until a matching message passes")
	c.Go(func(ctx context.Context) {
		wctx, cancel := context.WithTimeout(ctx, max)
		defer cancel()
		err := c.WaitPassed(wctx, h.Until)
		switch {
		case err == nil:
			c.Record(msg, "release", "trigger message passed")
		case ctx.Err() != nil:
			c.Record(msg, "hold", "link closed while held; message not delivered")
			return
		default:
			c.Record(msg, "release", fmt.Sprintf("trigger never passed within %s; released anyway", max))
		}
		_ = c.Deliver(msg)
	})
}

// Duplicate delivers the message Count+1 times in a row.
type Duplicate struct {
	// Count is the number of extra copies; zero means one.
	Count int
}

// Apply delivers msg and its copies.
func (d Duplicate) Apply(_ context.Context, c Conduit, msg *Message) {
	n := d.Count
	if n <= 0 {
		n = 1
	}
	c.Record(msg, "duplicate", fmt.Sprintf("delivered %d extra time(s)", n))
	for i := 0; i <= n; i++ {
		if c.Deliver(msg.clone()) != nil {
			return
		}
	}
}

// Inject sends a synthetic message when the matched one passes: before it,
// after it, or instead of it. Raw may be any bytes, malformed ones included.
type Inject struct {
	// Dir is where the synthetic message goes; empty means the matched
	// message's direction.
	Dir Direction
	// Raw is the synthetic message, without a newline.
	Raw []byte
	// Before injects before delivering the matched message; Replace drops
	// the matched message instead. Default: after.
	Before, Replace bool
}

// Apply injects i.Raw around msg.
func (i Inject) Apply(_ context.Context, c Conduit, msg *Message) {
	dir := i.Dir
	if dir == "" {
		dir = msg.Dir
	}
	switch {
	case i.Replace:
		c.Record(msg, "inject", "replaced by a synthetic message")
		_ = c.Inject(dir, i.Raw)
	case i.Before:
		c.Record(msg, "inject", "synthetic message sent before this one")
		_ = c.Inject(dir, i.Raw)
		_ = c.Deliver(msg)
	default:
		c.Record(msg, "inject", "synthetic message sent after this one")
		_ = c.Deliver(msg)
		_ = c.Inject(dir, i.Raw)
	}
}

// Crash SIGKILLs the server's process group when the message passes. By
// default the message is lost with the process (the server committed, the
// response never arrives); DeliverFirst hands it over before the kill.
type Crash struct {
	// DeliverFirst delivers the matched message before killing.
	DeliverFirst bool
}

// Apply kills the server.
func (cr Crash) Apply(_ context.Context, c Conduit, msg *Message) {
	if cr.DeliverFirst {
		_ = c.Deliver(msg)
		c.Record(msg, "crash", "delivered, then SIGKILL to the server process group")
	} else {
		c.Record(msg, "crash", "SIGKILL to the server process group; message lost with it")
	}
	if err := c.Signal(syscall.SIGKILL); err != nil {
		c.Record(msg, "crash", "signal failed: "+err.Error())
	}
}

// Pause SIGSTOPs the server's process group after delivering the message,
// and SIGCONTs it after For (a hung server that comes back).
type Pause struct {
	// For is how long the server stays stopped; zero means 1 s.
	For time.Duration
}

// Apply delivers msg, stops the server, and resumes it later.
func (p Pause) Apply(_ context.Context, c Conduit, msg *Message) {
	d := p.For
	if d <= 0 {
		d = time.Second
	}
	_ = c.Deliver(msg)
	if err := c.Signal(sigStop); err != nil {
		c.Record(msg, "pause", "signal failed: "+err.Error())
		return
	}
	c.Record(msg, "pause", fmt.Sprintf("SIGSTOP to the server for %s", d))
	c.Go(func(ctx context.Context) {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		_ = c.Signal(sigCont)
		c.Record(msg, "resume", "SIGCONT to the server")
	})
}

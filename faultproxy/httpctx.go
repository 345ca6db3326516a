package faultproxy

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// exchangeCtx is the upstream context of an exchange on the proxy's own
// server (httpserve.go): a child of its connection's upParent that also
// ends at stop. It is part of the exchange (no allocation) and is not
// registered with its parent: most exchanges only ask Err, which looks at
// the stop and then at the parent. Only when something waits on Done (a
// dial, the http.Client path, a fault) is a real child context made, and
// from then on it answers for the exchange; a context.WithCancel per
// exchange (an allocation, and an insertion into and a removal from the
// parent's children under its lock) was a visible part of the proxy's CPU
// per request.
type exchangeCtx struct {
	parent  context.Context
	stopped atomic.Bool
	// child is made by the first Done; mu guards its making and stop's
	// cancel of it.
	mu     sync.Mutex
	child  atomic.Pointer[childCtx]
	cancel context.CancelFunc
}

type childCtx struct{ context.Context }

var _ context.Context = (*exchangeCtx)(nil)

func (c *exchangeCtx) Deadline() (time.Time, bool) { return c.parent.Deadline() }

// Done is the done channel of the real child, made now if need be (and
// cancelled at once when stop came first).
func (c *exchangeCtx) Done() <-chan struct{} {
	if ch := c.child.Load(); ch != nil {
		return ch.Done()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := c.child.Load()
	if ch == nil {
		ctx, cancel := context.WithCancel(c.parent)
		ch, c.cancel = &childCtx{ctx}, cancel
		c.child.Store(ch)
		if c.stopped.Load() {
			cancel()
		}
	}
	return ch.Done()
}

// Err is context.Canceled after stop, else the child's error (once it
// exists), else the parent's.
func (c *exchangeCtx) Err() error {
	if c.stopped.Load() {
		return context.Canceled
	}
	if ch := c.child.Load(); ch != nil {
		return ch.Err()
	}
	return c.parent.Err()
}

// Value is the child's value (once it exists: context.Cause and
// context.AfterFunc find the child's cancellation through it), else the
// parent's.
func (c *exchangeCtx) Value(key any) any {
	if ch := c.child.Load(); ch != nil {
		return ch.Value(key)
	}
	return c.parent.Value(key)
}

// stop ends the context (idempotent).
func (c *exchangeCtx) stop() {
	c.stopped.Store(true)
	if c.child.Load() == nil {
		return
	}
	c.mu.Lock()
	cancel := c.cancel
	c.mu.Unlock()
	cancel()
}

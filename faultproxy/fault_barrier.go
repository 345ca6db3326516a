package faultproxy

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Barrier holds each matched message until Parties messages have arrived
// at it, then releases them all at once: two requests racing on one key,
// sent on independent links, reach their servers together. One Barrier
// value may be the fault of rules on several links (it is shared through
// the pointer). Max bounds the wait so that a party that never comes
// cannot hang a run; on expiry the held messages are delivered and the
// transcript says so.
type Barrier struct {
	// Parties is how many messages the barrier waits for; <= 1 means 2.
	Parties int
	// Max bounds the hold; zero means 10 s.
	Max time.Duration

	once    sync.Once
	mu      sync.Mutex
	arrived int
	open    chan struct{}
}

var _ Fault = (*Barrier)(nil)

// NewBarrier returns a barrier for parties messages.
func NewBarrier(parties int, max time.Duration) *Barrier {
	return &Barrier{Parties: parties, Max: max}
}

func (b *Barrier) init() {
	b.once.Do(func() { b.open = make(chan struct{}) })
}

// Arrived reports how many messages have reached the barrier.
func (b *Barrier) Arrived() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.arrived
}

// Apply holds msg until every party has arrived.
func (b *Barrier) Apply(_ context.Context, c Conduit, msg *Message) {
	b.init()
	parties, max := b.Parties, b.Max
	if parties <= 1 {
		parties = 2
	}
	if max <= 0 {
		max = 10 * time.Second
	}
	b.mu.Lock()
	b.arrived++
	n := b.arrived
	if n == parties {
		close(b.open)
	}
	b.mu.Unlock()
	c.Record(msg, "barrier", OutcomeHeld, fmt.Sprintf("held at the barrier (%d of %d)", min(n, parties), parties))
	c.Go(func(ctx context.Context) {
		t := time.NewTimer(max)
		defer t.Stop()
		select {
		case <-b.open:
			c.Record(msg, "release", OutcomeReleased, "every party reached the barrier")
		case <-t.C:
			c.Record(msg, "release", OutcomeReleased, fmt.Sprintf("the other parties did not come within %s; released anyway", max))
		case <-ctx.Done():
			c.Record(msg, "barrier", OutcomeDropped, "link closed while held; message not delivered")
			return
		}
		_ = c.Deliver(msg)
	})
}

func init() {
	// A barrier has no rule-file form: one value is shared, in Go, by the
	// rules of several links.
	RegisterFault(FaultType{Name: "barrier", Of: (*Barrier)(nil)})
}

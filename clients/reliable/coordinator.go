// Package reliable is the reliable MCP client: the client side of the
// reliability contract the suites use to judge servers fairly. It holds the
// request coordinator with two clocks (idle, reset by progress; maximum,
// never reset), the bounded stream buffer, capped exponential backoff with
// deterministic jitter, and the reconnect plan. Client binds them to the
// wire clients of package clients (stdio Wire, Streamable HTTP HTTPWire)
// and sends the transport-correct cancellation when a clock expires.
//
// Every clock is read through the time package, so tests run the
// coordinator under testing/synctest with a fake clock.
package reliable

import (
	"sync"
	"time"
)

// State is where a request stands. Every state but Pending is terminal and
// final: once reached it never changes.
type State int

// Request states.
const (
	// Pending: the request is in flight.
	Pending State = iota
	// Completed: its response (result or JSON-RPC error) arrived in time.
	Completed
	// Failed: the transport lost the request (the stream or connection
	// ended without a response).
	Failed
	// Cancelled: the caller cancelled it.
	Cancelled
	// IdleTimeout: no progress came within the idle timeout.
	IdleTimeout
	// MaxTimeout: the maximum timeout passed, progress or not.
	MaxTimeout
)

var stateNames = [...]string{"pending", "completed", "failed", "cancelled", "idle-timeout", "max-timeout"}

// String names the state.
func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "unknown"
}

// Terminal reports whether s is final.
func (s State) Terminal() bool { return s != Pending }

// TimedOut reports whether s is one of the two timeouts.
func (s State) TimedOut() bool { return s == IdleTimeout || s == MaxTimeout }

// Stats counts what a Coordinator saw.
type Stats struct {
	// Progress counts progress events accepted while pending (each reset the
	// idle clock).
	Progress int
	// Heartbeats counts transport heartbeats (SSE comments): recorded, they
	// reset neither clock.
	Heartbeats int
	// Late counts events that arrived after the terminal state: responses
	// and progress that were ignored.
	Late int
}

// Coordinator keeps the two clocks of one request. Idle is reset by each
// progress event; Max is never reset. On expiry the state becomes
// IdleTimeout or MaxTimeout and onTimeout runs once, on its own goroutine
// (the caller sends the cancellation there). The first terminal transition
// wins; later events are counted as late and change nothing. All methods
// are safe for concurrent use.
type Coordinator struct {
	idle, max time.Duration
	onTimeout func(State)

	mu      sync.Mutex
	state   State
	idleGen int
	idleT   *time.Timer
	maxT    *time.Timer
	stats   Stats
	done    chan struct{}
}

// NewCoordinator starts both clocks now. A zero idle or max disables that
// clock. onTimeout may be nil.
func NewCoordinator(idle, max time.Duration, onTimeout func(State)) *Coordinator {
	c := &Coordinator{idle: idle, max: max, onTimeout: onTimeout, done: make(chan struct{})}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armIdleLocked()
	if max > 0 {
		c.maxT = time.AfterFunc(max, func() { c.expire(MaxTimeout, -1) })
	}
	return c
}

// armIdleLocked (re)starts the idle clock; a timer that already fired for
// an older generation finds its generation stale and does nothing.
func (c *Coordinator) armIdleLocked() {
	if c.idle <= 0 {
		return
	}
	if c.idleT != nil {
		c.idleT.Stop()
	}
	c.idleGen++
	gen := c.idleGen
	c.idleT = time.AfterFunc(c.idle, func() { c.expire(IdleTimeout, gen) })
}

func (c *Coordinator) expire(st State, gen int) {
	c.mu.Lock()
	if c.state.Terminal() || (gen >= 0 && gen != c.idleGen) {
		c.mu.Unlock()
		return
	}
	c.endLocked(st)
	cb := c.onTimeout
	c.mu.Unlock()
	if cb != nil {
		cb(st)
	}
}

// endLocked makes st the final state and stops the clocks.
func (c *Coordinator) endLocked(st State) {
	c.state = st
	if c.idleT != nil {
		c.idleT.Stop()
	}
	if c.maxT != nil {
		c.maxT.Stop()
	}
	close(c.done)
}

// Progress records a progress event: while pending it resets the idle
// clock (never the maximum) and reports true; after the end it is late.
func (c *Coordinator) Progress() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state.Terminal() {
		c.stats.Late++
		return false
	}
	c.stats.Progress++
	c.armIdleLocked()
	return true
}

// Heartbeat records a transport heartbeat. It resets neither clock: a
// heartbeat proves the connection is alive, not that the work advances.
func (c *Coordinator) Heartbeat() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stats.Heartbeats++
}

// Complete records the response. It reports true when it ended the
// request (Completed); false when the request had already ended — a late
// response after a timeout or cancellation, which is ignored.
func (c *Coordinator) Complete() bool { return c.finish(Completed) }

// Fail records that the transport lost the request; false when it had
// already ended.
func (c *Coordinator) Fail() bool { return c.finish(Failed) }

// Cancel records the caller's cancellation; false when the request had
// already ended (a late cancellation cannot change a completed request).
func (c *Coordinator) Cancel() bool { return c.finish(Cancelled) }

func (c *Coordinator) finish(st State) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state.Terminal() {
		if st == Completed {
			c.stats.Late++
		}
		return false
	}
	c.endLocked(st)
	return true
}

// State returns the current state.
func (c *Coordinator) State() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// Stats returns the counters so far.
func (c *Coordinator) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// Done is closed at the terminal state.
func (c *Coordinator) Done() <-chan struct{} { return c.done }

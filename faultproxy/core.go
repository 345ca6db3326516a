package faultproxy

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
)

// core is what every transport shares: the rule engine, the transcript, the
// record of delivered messages that hold-until waits on, and the process to
// signal.
type core struct {
	rules  *Rules
	tr     *Transcript
	ctx    context.Context
	cancel context.CancelFunc
	seq    atomic.Int64
	signal func(Signal) error

	pmu       sync.Mutex
	delivered []*Message
	trimmed   int // messages dropped from the front of delivered
	// passed is closed at the next markPassed; it is made only when a
	// WaitPassed needs it, so that relaying costs no channel per message.
	passed chan struct{}
}

func newCore(parent context.Context, tr *Transcript, rules *Rules, signal func(Signal) error) *core {
	if rules == nil {
		rules = NewRules()
	}
	ctx, cancel := context.WithCancel(parent)
	return &core{rules: rules, tr: tr, ctx: ctx, cancel: cancel, signal: signal}
}

// Rules returns the rule set; changes apply to the next message.
func (c *core) Rules() *Rules { return c.rules }

// Transcript returns the transcript.
func (c *core) Transcript() *Transcript { return c.tr }

// record writes msg's arrival in the transcript.
func (c *core) record(msg *Message) {
	e := Entry{At: msg.At, Kind: EntryMessage, Dir: msg.Dir, Seq: msg.Seq, Raw: msg.Raw, Stream: msg.Stream}
	c.tr.add(&e)
}

// passedHistory bounds how many delivered messages hold-until can look back
// on: a long-lived proxy must not keep every message it relayed.
const passedHistory = 4096

// markPassed notes that msgs reached their destination, in this order (a
// flush passes the events it sent under one lock).
func (c *core) markPassed(msgs ...*Message) {
	c.pmu.Lock()
	if len(c.delivered) >= 2*passedHistory {
		c.delivered = keepLast(c.delivered, passedHistory, &c.trimmed)
	}
	c.delivered = append(c.delivered, msgs...)
	if c.passed != nil {
		close(c.passed)
		c.passed = nil
	}
	c.pmu.Unlock()
}

// ForgetPassed clears the record of delivered messages, so a hold-until
// installed afterwards waits for a message delivered from now on (the
// control API's reset).
func (c *core) ForgetPassed() {
	c.pmu.Lock()
	c.delivered = keepLast(c.delivered, 0, &c.trimmed)
	c.pmu.Unlock()
}

// WaitPassed blocks until a delivered message satisfies m, counting those
// delivered before the call, or until ctx ends.
func (c *core) WaitPassed(ctx context.Context, m Match) error {
	next := 0 // absolute index: trimmed + position in delivered
	for {
		c.pmu.Lock()
		start := max(next-c.trimmed, 0)
		msgs := append([]*Message(nil), c.delivered[min(start, len(c.delivered)):]...)
		next = c.trimmed + len(c.delivered)
		if c.passed == nil {
			c.passed = make(chan struct{})
		}
		ch := c.passed
		c.pmu.Unlock()
		for _, msg := range msgs {
			if m.matches(msg, c.rules.repliedMethod(msg)) {
				return nil
			}
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-c.ctx.Done():
			return c.ctx.Err()
		}
	}
}

// sink is where a transport delivers one message.
type sink interface {
	// deliver writes msg; flush false lets the transport batch writes.
	deliver(msg *Message, flush bool) error
	// inject sends a synthetic message in dir.
	inject(dir Direction, raw []byte) error
	// pending tracks work a fault started for messages of this sink.
	pending() *sync.WaitGroup
	// stream controls the message's HTTP response stream, nil elsewhere.
	stream() StreamControl
}

// apply runs the first rule that fires on msg, or delivers it.
func (c *core) apply(msg *Message, s sink) {
	sel, ok := c.rules.evaluate(msg)
	if !ok {
		_ = s.deliver(msg, false)
		return
	}
	sel.fault.Apply(c.ctx, &conduit{c: c, s: s, rule: sel.name, fault: sel.fault, rng: sel.rng}, msg)
}

// StreamControl acts on the HTTP response stream a message belongs to.
type StreamControl interface {
	// Cut closes the stream to the client now; later events are discarded.
	Cut(reason string)
	// Reset closes the client's connection abruptly.
	Reset(reason string)
	// Buffer holds the stream's bytes until n bytes accumulate or it ends.
	Buffer(n int)
	// Throttle limits the stream to bytesPerSecond toward the client.
	Throttle(bytesPerSecond int)
	// ReplaceStatus answers the client with this status and body instead
	// of the server's response; false when headers were already sent.
	ReplaceStatus(code int, body []byte) bool
}

// streamOf returns the response stream of msg for a fault that uses one
// (CapStream). Where the transport has none (stdio, WebSocket) it records,
// in the fault's entry, what the fault does instead, and returns nil.
func streamOf(c Conduit, msg *Message, fault string, instead Outcome, text string) StreamControl {
	st := c.Stream()
	if st == nil {
		c.Record(msg, fault, instead, text)
	}
	return st
}

// conduit is the Conduit a fault gets for one message.
type conduit struct {
	c     *core
	s     sink
	rule  string
	fault Fault
	rng   *rand.Rand
}

var _ Conduit = (*conduit)(nil)

func (c *conduit) Deliver(msg *Message) error             { return c.s.deliver(msg, true) }
func (c *conduit) Inject(dir Direction, raw []byte) error { return c.s.inject(dir, raw) }
func (c *conduit) WaitPassed(ctx context.Context, m Match) error {
	return c.c.WaitPassed(ctx, m)
}
func (c *conduit) Rand() *rand.Rand      { return c.rng }
func (c *conduit) Rule() string          { return c.rule }
func (c *conduit) Stream() StreamControl { return c.s.stream() }

func (c *conduit) Signal(sig Signal) error {
	if c.c.signal == nil {
		return errors.New("faultproxy: this link has no process to signal")
	}
	c.c.tr.Add(Entry{Kind: EntryProcess, Rule: c.rule, Text: "signal " + sig.String()})
	return c.c.signal(sig)
}

func (c *conduit) Record(msg *Message, fault string, o Outcome, text string) {
	ft, _ := FaultTypeOf(c.fault)
	c.c.tr.Add(Entry{Kind: EntryFault, Dir: msg.Dir, Seq: msg.Seq, Stream: msg.Stream, Rule: c.rule, Fault: fault, Text: text,
		Outcome: o, OnProcess: ft.Needs&CapProcess != 0})
}

func (c *conduit) Go(fn func(ctx context.Context)) {
	wg := c.s.pending()
	wg.Add(1)
	go func() {
		defer wg.Done()
		fn(c.c.ctx)
	}()
}

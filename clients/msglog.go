package clients

import (
	"context"
	"sync"
)

// DefaultMaxMessages bounds the inbound message log of a Wire or an
// HTTPWire, and each HTTP stream's own event and message logs
// (WireOptions.MaxMessages, HTTPOptions.MaxMessages).
const DefaultMaxMessages = 1 << 16

// boundedLog is an append-only log holding at most max entries (0: no
// bound). When it is full, the oldest quarter is evicted (and counted), so
// that a peer flooding the client cannot exhaust memory. Indexes go on
// counting from the first entry ever added: an index taken from count stays
// valid, and a view from an evicted index starts at the oldest entry still
// held. Added entries are never modified, so a view of the slice stays
// valid after later adds and evictions. Callers hold the owning client's
// lock.
type boundedLog[T any] struct {
	max     int
	base    int // index of items[0]
	items   []T
	evicted int
}

// add appends v and returns its index.
func (l *boundedLog[T]) add(v T) int {
	if l.max > 0 && len(l.items) >= l.max {
		drop := max(l.max/4, 1)
		kept := make([]T, len(l.items)-drop, l.max)
		copy(kept, l.items[drop:])
		l.items = kept
		l.base += drop
		l.evicted += drop
	}
	l.items = append(l.items, v)
	return l.base + len(l.items) - 1
}

// count is the number of entries ever added: the index of the next one.
func (l *boundedLog[T]) count() int { return l.base + len(l.items) }

// view returns the held entries with index >= from (a view, capped so that
// appends do not show through) and the index of its first element.
func (l *boundedLog[T]) view(from int) ([]T, int) {
	from = max(from, l.base)
	i := from - l.base
	if i >= len(l.items) {
		return nil, from
	}
	return l.items[i:len(l.items):len(l.items)], from
}

// since returns a copy of the held entries with index >= from.
func (l *boundedLog[T]) since(from int) []T {
	v, _ := l.view(from)
	if len(v) == 0 {
		return nil
	}
	return append([]T(nil), v...)
}

// msgLog is the arrival-ordered log of inbound messages of a client: a
// boundedLog whose index is the message's Seq.
type msgLog struct{ boundedLog[Message] }

func newMsgLog(max int) msgLog { return msgLog{boundedLog[Message]{max: max}} }

// add records m with the next Seq and returns it.
func (l *msgLog) add(m Message) Message {
	m.Seq = l.count()
	l.boundedLog.add(m)
	return m
}

// inbox is the one inbound message log of a wire client, with its waiters:
// every JSON-RPC message the client received, on whatever stream, in
// arrival order. Wire and HTTPWire embed it (through core), and so share
// Messages, Since, Len, Evicted and WaitFor.
//
// mu guards the log and the end state, and also the embedding client's
// own state (its pending requests, its streams' logs), so that a message
// is recorded and handed to whoever waits for it in one step. The reader
// goroutines record; callers only read.
type inbox struct {
	mu     sync.Mutex
	log    msgLog
	signal chan struct{} // closed and replaced on every change
	ended  bool          // no message can arrive any more
	endErr error         // what a wait gets once ended
}

func newInbox(maxMessages int) inbox {
	return inbox{log: newMsgLog(maxMessages), signal: make(chan struct{})}
}

// broadcastLocked wakes every waiter (WaitFor, HTTPCall.WaitEvent).
func (b *inbox) broadcastLocked() {
	close(b.signal)
	b.signal = make(chan struct{})
}

// recordLocked appends one inbound message (giving it its Seq) and wakes
// the waiters.
func (b *inbox) recordLocked(m Message) Message {
	m = b.log.add(m)
	b.broadcastLocked()
	return m
}

// endLocked marks the end of the connection: waits that find no message
// fail with err from now on.
func (b *inbox) endLocked(err error) {
	b.ended, b.endErr = true, err
	b.broadcastLocked()
}

// Messages returns a snapshot of every inbound message still held (all of
// them unless more than MaxMessages arrived), in arrival order.
func (b *inbox) Messages() []Message { return b.Since(0) }

// Since returns a snapshot of the held inbound messages with Seq >= seq.
func (b *inbox) Since(seq int) []Message {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.log.since(seq)
}

// Len returns the number of inbound messages so far: the Seq the next one
// will get, handy as the fromSeq of a later WaitFor.
func (b *inbox) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.log.count()
}

// Evicted returns how many of the oldest inbound messages were dropped
// from the log to keep it within MaxMessages.
func (b *inbox) Evicted() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.log.evicted
}

// WaitFor returns the first message with Seq >= fromSeq for which pred is
// true, whether it was already received or arrives later, on any stream
// (messages evicted from the log are skipped). pred runs on the caller's
// goroutine, never under a lock. It fails with ctx's error, or, once the
// connection ended and no message matched, with why it ended: ErrClosed
// after Close, an error wrapping ErrConnEnded when a Wire's reader ended.
func (b *inbox) WaitFor(ctx context.Context, fromSeq int, pred func(Message) bool) (Message, error) {
	next := max(fromSeq, 0)
	for {
		b.mu.Lock()
		// Recorded elements are never modified, so the view stays valid.
		batch, start := b.log.view(next)
		next = start
		sig, ended, endErr := b.signal, b.ended, b.endErr
		b.mu.Unlock()
		for _, m := range batch {
			if pred(m) {
				return m, nil
			}
		}
		next += len(batch)
		if ended {
			return Message{}, endErr
		}
		select {
		case <-sig:
		case <-ctx.Done():
			return Message{}, ctx.Err()
		}
	}
}

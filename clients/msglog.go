package clients

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

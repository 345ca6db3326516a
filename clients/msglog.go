package clients

// DefaultMaxMessages bounds the inbound message log of a Wire or an
// HTTPWire (WireOptions.MaxMessages, HTTPOptions.MaxMessages).
const DefaultMaxMessages = 1 << 16

// msgLog is an arrival-ordered log of inbound messages holding at most max
// of them. When it is full, the oldest quarter is evicted (and counted) so
// that a server flooding the client cannot exhaust memory. Seq numbers go on
// counting from the first message ever recorded: a Seq taken from Len stays
// valid, and a wait from a Seq that was evicted resumes at the oldest
// message still held. Recorded messages are never modified, so a view of
// the slice stays valid after later appends and evictions. Callers hold
// the owning client's lock.
type msgLog struct {
	max     int
	base    int // Seq of msgs[0]
	msgs    []Message
	evicted int
}

// add records m with the next Seq and returns it.
func (l *msgLog) add(m Message) Message {
	if l.max > 0 && len(l.msgs) >= l.max {
		drop := max(l.max/4, 1)
		kept := make([]Message, len(l.msgs)-drop, l.max)
		copy(kept, l.msgs[drop:])
		l.msgs = kept
		l.base += drop
		l.evicted += drop
	}
	m.Seq = l.base + len(l.msgs)
	l.msgs = append(l.msgs, m)
	return m
}

// count is the number of messages ever recorded: the Seq of the next one.
func (l *msgLog) count() int { return l.base + len(l.msgs) }

// view returns the held messages with Seq >= seq (a view, capped so that
// appends do not show through) and the Seq of its first element.
func (l *msgLog) view(seq int) ([]Message, int) {
	seq = max(seq, l.base)
	i := seq - l.base
	if i >= len(l.msgs) {
		return nil, seq
	}
	return l.msgs[i:len(l.msgs):len(l.msgs)], seq
}

// since returns a copy of the held messages with Seq >= seq.
func (l *msgLog) since(seq int) []Message {
	v, _ := l.view(seq)
	if len(v) == 0 {
		return nil
	}
	return append([]Message(nil), v...)
}

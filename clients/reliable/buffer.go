package reliable

import (
	"errors"
	"fmt"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// ErrFinalOverflow is returned by Buffer.Push when keeping a new final
// response would need dropping another one: the buffer refuses that state
// (the caller must slow down or read, never lose a response).
var ErrFinalOverflow = errors.New("reliable: stream buffer full of final responses")

// Kind classifies a buffered item by how it may be treated under pressure.
type Kind int

// Item kinds.
const (
	// Progress is replaceable: adjacent progress for the same token
	// coalesces, and the oldest progress is evicted at capacity.
	Progress Kind = iota
	// Notice is any other notification: evictable at capacity (the stream
	// then needs a refetch of the listed state).
	Notice
	// Final is a response (result or error): never dropped.
	Final
)

// Item is one message waiting in a Buffer.
type Item struct {
	Kind Kind
	// Token is the progress token (Progress items).
	Token jsonrpc.ID
	// Raw is the message.
	Raw []byte
}

// ItemOf classifies a raw JSON-RPC message.
func ItemOf(raw []byte) Item {
	env := jsonrpc.Parse(raw)
	switch {
	case env.Kind.IsReply():
		return Item{Kind: Final, Raw: raw}
	case env.Method == "notifications/progress":
		return Item{Kind: Progress, Token: env.ProgressToken, Raw: raw}
	default:
		return Item{Kind: Notice, Raw: raw}
	}
}

// Buffer is the bounded buffer between a stream and a slow consumer. It
// holds at most Cap items. Pushing adjacent progress for the same token
// replaces the previous one (coalescing: the newest value is the one that
// matters and values only increase). At capacity the oldest non-final item
// is evicted and the stream is marked as needing a refetch. A final
// response is never dropped; when the buffer holds only final responses,
// Push refuses with ErrFinalOverflow. Not safe for concurrent use.
type Buffer struct {
	cap   int
	items []Item
	// stats
	coalesced, evicted int
	refetch            bool
}

// NewBuffer returns a buffer of capacity n (at least 1).
func NewBuffer(n int) *Buffer { return &Buffer{cap: max(n, 1)} }

// Push adds it, coalescing or evicting as described on Buffer.
func (b *Buffer) Push(it Item) error {
	if it.Kind == Progress && len(b.items) > 0 {
		last := &b.items[len(b.items)-1]
		if last.Kind == Progress && last.Token == it.Token {
			*last = it
			b.coalesced++
			return nil
		}
	}
	if len(b.items) < b.cap {
		b.items = append(b.items, it)
		return nil
	}
	victim := -1
	for i, x := range b.items {
		if x.Kind != Final {
			victim = i
			break
		}
	}
	if victim < 0 {
		if it.Kind != Final {
			// The new item is the only one that may go.
			b.evicted++
			b.refetch = true
			return nil
		}
		return fmt.Errorf("%w: %d responses waiting, capacity %d", ErrFinalOverflow, len(b.items), b.cap)
	}
	b.items = append(b.items[:victim], b.items[victim+1:]...)
	b.items = append(b.items, it)
	b.evicted++
	b.refetch = true
	return nil
}

// Pop removes and returns the oldest item; ok is false when empty.
func (b *Buffer) Pop() (it Item, ok bool) {
	if len(b.items) == 0 {
		return Item{}, false
	}
	it = b.items[0]
	b.items = b.items[1:]
	return it, true
}

// Len is the number of items held.
func (b *Buffer) Len() int { return len(b.items) }

// Cap is the capacity.
func (b *Buffer) Cap() int { return b.cap }

// NeedsRefetch reports whether something was evicted: the consumer must
// refetch the listed state rather than trust the stream alone.
func (b *Buffer) NeedsRefetch() bool { return b.refetch }

// ClearRefetch acknowledges a refetch.
func (b *Buffer) ClearRefetch() { b.refetch = false }

// Coalesced and Evicted count the progress merged and the items dropped.
func (b *Buffer) Coalesced() int { return b.coalesced }

// Evicted counts the items dropped at capacity.
func (b *Buffer) Evicted() int { return b.evicted }

package faultproxy

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
)

// EntryKind says what a transcript entry records.
type EntryKind string

// The kinds of transcript entry.
const (
	// EntryMessage is a message as it arrived at the proxy.
	EntryMessage EntryKind = "message"
	// EntryFault is a fault acting on a message (drop, hold, release, ...).
	EntryFault EntryKind = "fault"
	// EntryStderr is one line the server wrote on its stderr.
	EntryStderr EntryKind = "stderr"
	// EntryProcess is a process event: started, signalled, exited.
	EntryProcess EntryKind = "process"
	// EntryNote is free text from the proxy or a check.
	EntryNote EntryKind = "note"
	// EntryHTTP is an HTTP request or response head (method, status,
	// headers) on a Streamable HTTP link.
	EntryHTTP EntryKind = "http"
)

// Entry is one transcript record.
type Entry struct {
	// Index is the entry's position in the transcript.
	Index int `json:"i"`
	// At is the monotonic time since the link started.
	At time.Duration `json:"at"`
	// Kind is what the entry records.
	Kind EntryKind `json:"kind"`
	// Dir and Seq identify the message, for message and fault entries.
	Dir Direction `json:"dir,omitempty"`
	Seq int64     `json:"seq,omitempty"`
	// Stream names the HTTP exchange a message belongs to ("POST#3",
	// "GET#1"); empty on stdio.
	Stream string `json:"stream,omitempty"`
	// HTTP holds the request line or status line and headers of an HTTP
	// exchange, for http entries.
	HTTP *HTTPInfo `json:"http,omitempty"`
	// Raw is the message bytes as they crossed.
	Raw []byte `json:"-"`
	// Rule and Fault name what acted, for fault entries.
	Rule  string `json:"rule,omitempty"`
	Fault string `json:"fault,omitempty"`
	// Outcome is what became of the message, for fault entries (as of
	// that entry: a held message's later entry says released or dropped)
	// and for synthetic messages (injected). A message with no fault entry
	// was relayed as it came.
	Outcome Outcome `json:"outcome,omitempty"`
	// OnProcess marks the fault entries of faults that act on the server
	// process (their registration needs CapProcess: crash, pause).
	OnProcess bool `json:"onProcess,omitempty"`
	// Text is a stderr line, a process event or a note.
	Text string `json:"text,omitempty"`
}

// Outcome is what the proxy did with a message, recorded in its fault
// entries so that a reader (the report's sequence diagram) needs no
// sentence to tell. It is written as its name ("dropped"); the zero
// Outcome, none recorded, is left out.
type Outcome uint8

// The outcomes. Those for which Stopped is true mean that the message
// never left the proxy.
const (
	_                 Outcome = iota
	OutcomeDelivered          // went on; a fault acted on it (or its stream) and let it through
	OutcomeDropped            // swallowed, or lost with the server or with the link while held
	OutcomeHeld               // waits at the proxy; a later entry says released or dropped
	OutcomeReleased           // a held message went on
	OutcomeDuplicated         // delivered more than once
	OutcomeInjected           // a synthetic message the proxy sent (on message entries)
	OutcomeReplaced           // not delivered; a synthetic message went in its place
	OutcomeCut                // not delivered; its stream was closed at it
	OutcomeReset              // not delivered; its connection was reset
	OutcomeAnswered           // not delivered; the proxy answered with an HTTP status of its own
)

var outcomeNames = [...]string{"", "delivered", "dropped", "held", "released", "duplicated", "injected", "replaced", "cut", "reset", "answered"}

// String is the outcome's name: "dropped"; "" for none.
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return fmt.Sprintf("outcome(%d)", uint8(o))
}

// MarshalText writes the outcome's name.
func (o Outcome) MarshalText() ([]byte, error) {
	if int(o) >= len(outcomeNames) {
		return nil, fmt.Errorf("faultproxy: no outcome %d", uint8(o))
	}
	return []byte(outcomeNames[o]), nil
}

// UnmarshalText reads an outcome's name.
func (o *Outcome) UnmarshalText(b []byte) error {
	for i, name := range outcomeNames {
		if name == string(b) {
			*o = Outcome(i)
			return nil
		}
	}
	return fmt.Errorf("faultproxy: unknown outcome %q", b)
}

// Stopped reports whether the outcome means the message never left the
// proxy.
func (o Outcome) Stopped() bool {
	switch o {
	case OutcomeDropped, OutcomeReplaced, OutcomeCut, OutcomeReset, OutcomeAnswered:
		return true
	}
	return false
}

// Transcript is the ordered, append-only record of a link. It is safe for
// concurrent use.
//
// Entries are kept in chunks of a fixed size, so that a long transcript
// (a stream of thousands of events) never copies what it holds to grow,
// and a bounded one lets its oldest chunks go whole.
type Transcript struct {
	start time.Time

	mu sync.Mutex
	// chunks hold the entries kept in memory, oldest first; every chunk
	// but the last is full (chunkLen entries).
	chunks [][]Entry
	n      int       // entries in chunks
	spare  [][]Entry // emptied chunks, for reuse
	// changed is closed at the next Add; it is made only when Changed
	// asks for it, so that recording costs no channel per entry.
	changed chan struct{}
	sink    io.Writer
	// limit, when > 0, bounds the entries kept in memory (the sink still
	// gets all of them); dropped counts those let go.
	limit   int
	dropped int
}

// chunkEntries is the size of a chunk of entries (160 bytes each): 40 KiB;
// a bounded transcript keeps up to maxSpareChunks emptied ones for reuse.
const (
	chunkEntries   = 256
	maxSpareChunks = 32
)

// chunkLen is the size of t's chunks: chunkEntries, or less under a small
// limit so that at most about twice the limit is kept.
func (t *Transcript) chunkLen() int {
	if t.limit > 0 && t.limit/2 < chunkEntries {
		return max(1, t.limit/2)
	}
	return chunkEntries
}

// SetLimit keeps at most about 2n entries in memory (the oldest go first,
// n or more stay; a sink still receives every entry). A long-lived proxy
// sets it; a check, whose transcript is its evidence, does not.
func (t *Transcript) SetLimit(n int) {
	t.mu.Lock()
	t.limit = n
	// Chunks of the old size stay; new ones take the new size.
	t.spare = nil
	t.mu.Unlock()
}

// keepLast keeps the last n elements of s, moved to its front in place,
// zeroes the rest (so that what they point to can be collected), and adds
// how many went to *gone. A bounded history (the delivered messages
// hold-until looks back on) trims itself with it.
func keepLast[T any](s []T, n int, gone *int) []T {
	drop := len(s) - n
	if drop <= 0 {
		return s
	}
	kept := copy(s, s[drop:])
	clear(s[kept:])
	*gone += drop
	return s[:kept]
}

// trimLocked lets the oldest chunks go while at least keep entries stay.
func (t *Transcript) trimLocked(keep int) {
	for len(t.chunks) > 0 && t.n-len(t.chunks[0]) >= keep {
		c := t.chunks[0]
		t.chunks[0] = nil
		t.chunks = t.chunks[1:]
		t.n -= len(c)
		t.dropped += len(c)
		if cap(c) == t.chunkLen() && len(t.spare) < maxSpareChunks {
			clear(c)
			t.spare = append(t.spare, c[:0])
		}
	}
	if len(t.chunks) == 0 {
		t.chunks = nil
	}
}

// NewTranscript starts an empty transcript whose clock starts now. When sink
// is not nil every entry is also written to it as one JSON line.
func NewTranscript(sink io.Writer) *Transcript {
	return &Transcript{start: time.Now(), sink: sink}
}

// Start is when the transcript's clock started: an entry's At is
// measured from it.
func (t *Transcript) Start() time.Time { return t.start }

// Since returns the monotonic time elapsed since the transcript started.
func (t *Transcript) Since() time.Duration { return time.Since(t.start) }

// Add appends an entry, stamping its index (and its time when zero).
func (t *Transcript) Add(e Entry) Entry {
	t.add(&e)
	return e
}

// add is Add without the copies of the entry in and out (the relay's
// path: an entry per message).
func (t *Transcript) add(e *Entry) {
	if e.At == 0 {
		e.At = t.Since()
	}
	t.mu.Lock()
	e.Index = t.dropped + t.n
	if t.limit > 0 && t.n >= 2*t.limit {
		t.trimLocked(t.limit)
	}
	last := len(t.chunks) - 1
	if last < 0 || len(t.chunks[last]) == cap(t.chunks[last]) {
		var c []Entry
		if k := len(t.spare); k > 0 {
			c, t.spare = t.spare[k-1], t.spare[:k-1]
		} else {
			c = make([]Entry, 0, t.chunkLen())
		}
		t.chunks = append(t.chunks, c)
		last++
	}
	t.chunks[last] = append(t.chunks[last], *e)
	t.n++
	if t.changed != nil {
		close(t.changed)
		t.changed = nil
	}
	if t.sink != nil {
		_ = writeJSONLine(t.sink, *e)
	}
	t.mu.Unlock()
}

// Note appends a free-text entry.
func (t *Transcript) Note(format string, args ...any) {
	t.Add(Entry{Kind: EntryNote, Text: fmt.Sprintf(format, args...)})
}

// Len returns the number of entries so far.
func (t *Transcript) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.dropped + t.n
}

// Entries returns a copy of every entry kept in memory.
func (t *Transcript) Entries() []Entry { return t.Since0(0) }

// Since0 returns a copy of the kept entries whose Index is i or more.
func (t *Transcript) Since0(i int) []Entry {
	t.mu.Lock()
	defer t.mu.Unlock()
	i = max(i-t.dropped, 0)
	if i >= t.n {
		return nil
	}
	out := make([]Entry, 0, t.n-i)
	for _, c := range t.chunks {
		if i >= len(c) {
			i -= len(c)
			continue
		}
		out = append(out, c[i:]...)
		i = 0
	}
	return out
}

// Clear lets go of every entry kept in memory; indexes keep counting from
// where they were, so a reader following with Since0 never sees an index
// twice. A sink has already received the entries.
func (t *Transcript) Clear() {
	t.mu.Lock()
	t.trimLocked(0)
	t.mu.Unlock()
}

// Changed returns a channel closed at the next Add.
func (t *Transcript) Changed() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.changed == nil {
		t.changed = make(chan struct{})
	}
	return t.changed
}

// MarshalJSON writes the entry with its time in milliseconds and the raw
// bytes as JSON when valid, else as a string.
func (e Entry) MarshalJSON() ([]byte, error) {
	type plain Entry
	je := struct {
		plain
		AtMs float64         `json:"atMs"`
		Msg  json.RawMessage `json:"msg,omitempty"`
		Line *string         `json:"line,omitempty"`
	}{plain: plain(e), AtMs: float64(e.At.Microseconds()) / 1000}
	if e.Raw != nil {
		if json.Valid(e.Raw) {
			je.Msg = e.Raw
		} else {
			s := string(e.Raw)
			je.Line = &s
		}
	}
	return json.Marshal(je)
}

func writeJSONLine(w io.Writer, e Entry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// WriteJSONL writes every entry as one JSON line.
func (t *Transcript) WriteJSONL(w io.Writer) error {
	for _, e := range t.Entries() {
		if err := writeJSONLine(w, e); err != nil {
			return fmt.Errorf("write transcript: %w", err)
		}
	}
	return nil
}

// HTTPInfo is the head of an HTTP request or response.
type HTTPInfo struct {
	Method string              `json:"method,omitempty"`
	Path   string              `json:"path,omitempty"`
	Status int                 `json:"status,omitempty"`
	Header map[string][]string `json:"header,omitempty"`
}

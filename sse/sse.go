// Package sse is a strict, byte-exact parser and encoder for the
// text/event-stream format ("Server-sent events", WHATWG HTML Living Standard,
// section "Event stream interpretation").
//
// It exists because a conformance harness must see exactly what is on the
// wire. Compared with an ordinary SSE client it:
//
//   - returns every block, not only those a browser would dispatch: a block
//     without a data field is still an Event (HasData false), a block made of
//     comment lines only is an Event with IsComment set (a heartbeat);
//   - keeps the exact bytes of every block in Event.Raw, so that a proxy can
//     relay a stream byte for byte: the concatenation of every Event.Raw, then
//     IncompleteError.Partial or Reader.Trailing, is the input;
//   - reports a block cut off by the end of the stream as *IncompleteError
//     (the standard silently discards it) unless Options.Lenient is set;
//   - enforces a size limit per block (ErrTooLarge) instead of a line limit.
//
// Parsing rules: lines end with CRLF, LF or CR (a CRLF split across two reads
// is one line ending); one UTF-8 byte order mark at the start of the stream is
// skipped; a line starting with ':' is a comment; "name:value" has one
// optional space after the colon stripped; a line without a colon is a field
// name with an empty value; the fields are data (lines joined with "\n"),
// event, id (ignored when it contains NUL) and retry (ASCII digits only, else
// ignored); other fields are ignored (but kept in Raw); a blank line ends the
// block. The bytes are not UTF-8 decoded: invalid UTF-8 is passed through
// unchanged rather than replaced by U+FFFD, so that checks can see it.
package sse

import (
	"bytes"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
)

// Event is one block of an event stream: the lines up to and including the
// blank line that ends it.
type Event struct {
	// Type is the value of the last "event" field; "" means the default
	// event type "message".
	Type string
	// Data is the values of the data fields joined with "\n" (no trailing
	// newline).
	Data string
	// HasData reports that at least one data field was seen ("data" alone
	// or "data:" count: they make Data empty but present).
	HasData bool
	// ID is the value of the last valid "id" field of the block.
	ID string
	// HasID reports that a valid id field was seen (an empty id is
	// meaningful: it resets the Last-Event-ID). An id containing NUL is
	// ignored, as the standard says.
	HasID bool
	// Retry is the value of the last valid "retry" field, in milliseconds.
	Retry int
	// HasRetry reports that a valid retry field (ASCII digits only, fitting
	// in an int) was seen.
	HasRetry bool
	// Comment holds the text of comment lines (without the leading ':' and
	// one optional space), joined with "\n", when the block consisted of
	// comments only (IsComment true) — a heartbeat like ": ping\n\n" or
	// ":\n\n".
	Comment string
	// IsComment reports that the block consisted of comment lines only.
	IsComment bool
	// InnerComments holds, in order, the comments of a block that also has
	// fields (nil when there are none).
	InnerComments []string
	// Raw is the exact bytes consumed since the previous Event returned by
	// the Reader: any blank lines (and the byte order mark) before the block,
	// the block itself and its terminating blank line, with line endings as
	// they were. One exception: when a block's final CR is the last byte of
	// a read, the Reader dispatches at once instead of blocking to see
	// whether an LF follows; such an LF is then the first byte of the next
	// Event's Raw (or of Trailing).
	Raw []byte
}

// ErrTooLarge is returned by Reader.Next when a block (its Raw) would exceed
// Options.MaxEventSize. The Reader is unusable afterwards.
var ErrTooLarge = errors.New("sse: event exceeds the size limit")

// ErrIncomplete is the error an *IncompleteError matches with errors.Is: the
// stream ended in the middle of a block.
var ErrIncomplete = errors.New("sse: incomplete event at end of stream")

// IncompleteError is returned by Reader.Next (in strict mode) when the stream
// ends in the middle of a block: lines (fields or comments) or part of a line
// were read but no blank line followed. The standard says such a block is
// discarded; the harness reports it. errors.Is(err, ErrIncomplete) is true.
type IncompleteError struct {
	// Partial is every byte read since the previous Event (including any
	// blank lines before the cut-off block), exactly as read.
	Partial []byte
}

// Error describes the incomplete block.
func (e *IncompleteError) Error() string {
	return ErrIncomplete.Error() + " (" + strconv.Itoa(len(e.Partial)) + " bytes)"
}

// Unwrap returns ErrIncomplete, so that errors.Is(err, ErrIncomplete) holds.
func (e *IncompleteError) Unwrap() error { return ErrIncomplete }

// DefaultMaxEventSize is the block size limit used when Options.MaxEventSize
// is zero or negative: 16 MiB.
const DefaultMaxEventSize = 16 << 20

// Options configures a Reader. The zero value is strict mode with the default
// size limit.
type Options struct {
	// MaxEventSize is the largest Raw, in bytes, a block may have (blank
	// lines before it included); 0 or negative means DefaultMaxEventSize.
	// A larger block makes Next return ErrTooLarge, and the Reader is then
	// unusable.
	MaxEventSize int
	// Lenient makes a final block that is not ended by a blank line at the
	// end of the stream (including a last line without line ending) be
	// returned as an Event, with Raw the partial bytes, instead of an
	// *IncompleteError — what many clients do.
	Lenient bool
	// Buffer, when its capacity is 16 KiB or more, is the Reader's input
	// buffer instead of a new one (a caller that reads one stream after
	// another reuses it; the Reader owns it until it is no longer used).
	// Event fields never alias it.
	Buffer []byte
}

const (
	initialBufSize = 16 << 10
	scanChunk      = 1 << 10
	maxEmptyReads  = 100
)

var bom = []byte{0xEF, 0xBB, 0xBF}

var errInvalidRead = errors.New("sse: reader returned an invalid count")

// span is a byte range relative to the start of the pending block.
type span struct{ start, end int }

// Reader reads Events from an event stream. It buffers its input (a 16 KiB
// buffer that grows, up to the size limit, for a larger block and shrinks
// back afterwards), so it may read past the last Event it returned. It never
// blocks waiting for more input once a block is complete. A Reader is not
// safe for concurrent use.
type Reader struct {
	rd      io.Reader
	max     int
	lenient bool

	buf        []byte
	rp, w      int // unread bytes are buf[rp:w]
	blockStart int // bytes since the last returned Event start here
	scan       int // buf[rp:scan] holds no CR or LF
	skipLF     bool
	bomDone    bool
	readErr    error // error from the underlying reader, pending
	err        error // sticky result of Next
	trailing   []byte
	lastID     string

	frames  bool   // NextFrame is reading: dispatch fills frame
	frame   Frame  // the block NextFrame returns
	slab    []byte // where NextFrame's Raw copies are carved from
	nframes int    // frames NextFrame returned

	// The pending block. Spans are relative to blockStart.
	hasLines  bool // a non-blank line was seen
	hasFields bool // a non-comment line was seen
	data      []span
	comments  []span
	typ       span
	id        span
	hasID     bool
	retry     int
	hasRetry  bool
}

// NewReader returns a Reader that parses the event stream read from r.
func NewReader(r io.Reader, opts Options) *Reader {
	max := opts.MaxEventSize
	if max <= 0 {
		max = DefaultMaxEventSize
	}
	rd := &Reader{rd: r, max: max, lenient: opts.Lenient}
	if cap(opts.Buffer) >= initialBufSize {
		rd.buf = opts.Buffer[:initialBufSize]
	}
	return rd
}

// LastEventID returns the last event ID as the standard defines it for an
// EventSource: the id of the most recent returned block that had a valid id
// field (an empty id resets it to ""). Blocks without an id field, comment
// blocks and incomplete blocks (in strict mode) leave it unchanged.
func (r *Reader) LastEventID() string { return r.lastID }

// Trailing returns the bytes read after the last returned Event that no Event
// carries: after Next returned io.EOF, the blank lines (or byte order mark)
// that ended the stream; after an *IncompleteError, its Partial; after any
// other read error, the bytes read before it since the last Event. It is nil
// when there are none and before Next has returned an error. After ErrTooLarge
// it is nil (the bytes are not kept).
func (r *Reader) Trailing() []byte { return r.trailing }

// Next returns the next block of the stream. It returns io.EOF when the
// stream ended at a block boundary (or held only blank lines since the last
// Event; see Trailing), an *IncompleteError when it ended inside a block (in
// strict mode), ErrTooLarge when a block exceeds the size limit, and the
// underlying reader's error otherwise. Once Next has returned an error it
// returns the same error on every later call.
//
// Consecutive blank lines dispatch nothing; their bytes go into the Raw of
// the following Event.
func (r *Reader) Next() (Event, error) {
	if r.err != nil {
		return Event{}, r.err
	}
	for {
		if r.skipLF && r.rp < r.w {
			// The previous line ended with a CR that was the last byte of
			// a read: an LF now is the second half of a CRLF.
			r.skipLF = false
			if r.buf[r.rp] == '\n' {
				r.rp++
				r.scan = r.rp
			}
		}
		if !r.bomDone {
			have := r.buf[r.rp:r.w]
			if len(have) < len(bom) && r.readErr == nil && bytes.HasPrefix(bom, have) {
				r.fill()
				continue
			}
			if bytes.HasPrefix(have, bom) {
				r.rp += len(bom)
				r.scan = r.rp
			}
			r.bomDone = true
		}
		if i := r.findEOL(); i >= 0 {
			start := r.rp
			r.rp = i + 1
			if r.buf[i] == '\r' {
				if r.rp < r.w {
					if r.buf[r.rp] == '\n' {
						r.rp++
					}
				} else if r.readErr == nil {
					// Do not block waiting for a possible LF: the
					// line (and perhaps the block) is complete now.
					r.skipLF = true
				}
			}
			r.scan = r.rp
			if r.rp-r.blockStart > r.max {
				return r.fail(ErrTooLarge)
			}
			if ev, ok := r.line(start, i); ok {
				return ev, nil
			}
			continue
		}
		if r.w-r.blockStart > r.max {
			return r.fail(ErrTooLarge)
		}
		if r.readErr != nil {
			return r.finish()
		}
		r.fill()
	}
}

func (r *Reader) fail(err error) (Event, error) {
	r.err = err
	r.buf = nil
	r.rp, r.w, r.blockStart, r.scan = 0, 0, 0, 0
	return Event{}, err
}

// findEOL returns the index in buf of the first CR or LF at or after rp, or
// -1. It scans in chunks so that a stream using only one kind of line ending
// does not make it look far ahead for the other kind, and it never rescans
// bytes already known to hold no line ending.
func (r *Reader) findEOL() int {
	for r.scan < r.w {
		end := min(r.scan+scanChunk, r.w)
		seg := r.buf[r.scan:end]
		lf := bytes.IndexByte(seg, '\n')
		lim := seg
		if lf >= 0 {
			lim = seg[:lf]
		}
		if cr := bytes.IndexByte(lim, '\r'); cr >= 0 {
			return r.scan + cr
		}
		if lf >= 0 {
			return r.scan + lf
		}
		r.scan = end
	}
	return -1
}

// fill makes room in the buffer and reads once from the underlying reader.
// A read error is kept in readErr.
func (r *Reader) fill() {
	if r.blockStart == r.w {
		// Nothing pending: start over at the beginning, and give back a
		// buffer that an earlier large event made grow.
		if len(r.buf) > initialBufSize || r.buf == nil {
			r.buf = make([]byte, initialBufSize)
		}
		r.rp, r.w, r.blockStart, r.scan = 0, 0, 0, 0
	}
	if r.w == len(r.buf) {
		if d := r.blockStart; d > 0 {
			copy(r.buf, r.buf[d:r.w])
			r.rp -= d
			r.w -= d
			r.scan -= d
			r.blockStart = 0
		}
		if r.w == len(r.buf) {
			// Next checked that the pending bytes, now buf[:w], do not
			// exceed max, so the buffer can grow by at least one byte.
			limit := r.max
			if limit < math.MaxInt {
				limit++ // room to see that the limit is exceeded
			}
			n := len(r.buf) * 2
			if n > limit || n <= 0 {
				n = limit
			}
			nb := make([]byte, n)
			copy(nb, r.buf[:r.w])
			r.buf = nb
		}
	}
	for range maxEmptyReads {
		n, err := r.rd.Read(r.buf[r.w:])
		if n < 0 || n > len(r.buf)-r.w {
			r.readErr = errInvalidRead
			return
		}
		r.w += n
		if err != nil {
			r.readErr = err
			return
		}
		if n > 0 {
			return
		}
	}
	r.readErr = io.ErrNoProgress
}

// finish handles the end of the input (readErr set, no line ending left).
func (r *Reader) finish() (Event, error) {
	partialLine := r.rp < r.w
	pending := r.buf[r.blockStart:r.w]
	if r.readErr != io.EOF {
		r.trailing = clone(pending)
		return r.stop(r.readErr)
	}
	if !r.hasLines && !partialLine {
		r.trailing = clone(pending)
		return r.stop(io.EOF)
	}
	if r.lenient {
		if partialLine {
			start := r.rp
			r.rp = r.w
			r.line(start, r.w) // non-blank: never dispatches
		}
		return r.dispatch(), nil
	}
	r.trailing = clone(pending)
	return r.stop(&IncompleteError{Partial: r.trailing})
}

func (r *Reader) stop(err error) (Event, error) {
	r.rp, r.blockStart, r.scan = r.w, r.w, r.w
	r.reset()
	r.err = err
	return Event{}, err
}

func clone(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return append([]byte(nil), b...)
}

// line processes the line buf[start:end]; it reports an Event when the line
// was the blank line that ends a block.
func (r *Reader) line(start, end int) (Event, bool) {
	line := r.buf[start:end]
	if len(line) == 0 {
		if !r.hasLines {
			return Event{}, false
		}
		return r.dispatch(), true
	}
	r.hasLines = true
	rel := start - r.blockStart
	if line[0] == ':' {
		v := 1
		if len(line) > 1 && line[1] == ' ' {
			v = 2
		}
		r.comments = append(r.comments, span{rel + v, rel + len(line)})
		return Event{}, false
	}
	r.hasFields = true
	name, v := line, len(line)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, v = line[:i], i+1
		if v < len(line) && line[v] == ' ' {
			v++
		}
	}
	value := line[v:]
	sp := span{rel + v, rel + len(line)}
	switch string(name) {
	case "data":
		r.data = append(r.data, sp)
	case "event":
		r.typ = sp
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			r.id, r.hasID = sp, true
		}
	case "retry":
		if n, ok := parseRetry(value); ok {
			r.retry, r.hasRetry = n, true
		}
	}
	return Event{}, false
}

// parseRetry accepts one or more ASCII digits whose value fits in an int.
func parseRetry(b []byte) (int, bool) {
	if len(b) == 0 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int(c - '0')
		if n > (math.MaxInt-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// dispatch turns the pending block, buf[blockStart:rp], into an Event
// (into r.frame for NextFrame, returning no Event).
func (r *Reader) dispatch() Event {
	if r.frames {
		r.frame = r.dispatchFrame()
		return Event{}
	}
	raw := append([]byte(nil), r.buf[r.blockStart:r.rp]...)
	ev := Event{Raw: raw}
	if !r.hasFields {
		ev.IsComment = true
		ev.Comment = join(raw, r.comments)
	} else {
		ev.Type = string(raw[r.typ.start:r.typ.end])
		if len(r.data) > 0 {
			ev.HasData = true
			ev.Data = join(raw, r.data)
		}
		if r.hasID {
			ev.HasID = true
			ev.ID = string(raw[r.id.start:r.id.end])
			r.lastID = ev.ID
		}
		if r.hasRetry {
			ev.HasRetry = true
			ev.Retry = r.retry
		}
		if len(r.comments) > 0 {
			ev.InnerComments = make([]string, len(r.comments))
			for i, s := range r.comments {
				ev.InnerComments[i] = string(raw[s.start:s.end])
			}
		}
	}
	r.blockStart = r.rp
	r.reset()
	return ev
}

func (r *Reader) reset() {
	r.hasLines, r.hasFields = false, false
	r.data = r.data[:0]
	r.comments = r.comments[:0]
	r.typ = span{}
	r.id, r.hasID = span{}, false
	r.retry, r.hasRetry = 0, false
}

// join returns the spans of raw joined with "\n".
func join(raw []byte, spans []span) string {
	switch len(spans) {
	case 0:
		return ""
	case 1:
		return string(raw[spans[0].start:spans[0].end])
	}
	n := len(spans) - 1
	for _, s := range spans {
		n += s.end - s.start
	}
	var b strings.Builder
	b.Grow(n)
	for i, s := range spans {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.Write(raw[s.start:s.end])
	}
	return b.String()
}

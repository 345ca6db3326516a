package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
)

// outcome is everything a Reader produced for one input.
type outcome struct {
	events   []Event
	err      error  // the final error (io.EOF, *IncompleteError, ...)
	trailing []byte // Trailing() after the final error
	lastIDs  []string
}

// readAll calls Next until it fails.
func readAll(tb testing.TB, r io.Reader, opts Options) outcome {
	tb.Helper()
	rd := NewReader(r, opts)
	var o outcome
	for i := 0; ; i++ {
		if i > 1<<20 {
			tb.Fatal("reader never ends")
		}
		ev, err := rd.Next()
		if err != nil {
			o.err = err
			o.trailing = rd.Trailing()
			// Errors are sticky.
			if _, err2 := rd.Next(); err2 != err {
				tb.Fatalf("second Next after %v returned %v", err, err2)
			}
			return o
		}
		o.events = append(o.events, ev)
		o.lastIDs = append(o.lastIDs, rd.LastEventID())
	}
}

// tail returns the bytes the outcome holds after its events.
func (o outcome) tail(tb testing.TB) []byte {
	tb.Helper()
	var inc *IncompleteError
	if errors.As(o.err, &inc) {
		if !bytes.Equal(inc.Partial, o.trailing) {
			tb.Fatalf("IncompleteError.Partial %q != Trailing %q", inc.Partial, o.trailing)
		}
		return inc.Partial
	}
	return o.trailing
}

// checkConcat checks the Raw property: the Raws, then the tail, are the input.
func checkConcat(tb testing.TB, in []byte, o outcome) {
	tb.Helper()
	var got []byte
	for _, ev := range o.events {
		if len(ev.Raw) == 0 {
			tb.Fatalf("event with empty Raw: %+v", ev)
		}
		got = append(got, ev.Raw...)
	}
	got = append(got, o.tail(tb)...)
	if !bytes.Equal(got, in) {
		tb.Fatalf("concatenated Raw + tail differs from input\n got %q\nwant %q", got, in)
	}
}

// boundaries returns the input offsets at which each event ends.
func boundaries(evs []Event) []int {
	var b []int
	n := 0
	for _, ev := range evs {
		n += len(ev.Raw)
		b = append(b, n)
	}
	return b
}

// checkSameBoundaries checks that got splits the input where want does,
// except that a boundary may sit before the LF of a CRLF (when the CR ended a
// read, the Reader dispatches at the CR).
func checkSameBoundaries(tb testing.TB, in []byte, got, want []Event) {
	tb.Helper()
	gb, wb := boundaries(got), boundaries(want)
	if len(gb) != len(wb) {
		tb.Fatalf("got %d events, want %d", len(gb), len(wb))
	}
	for i := range gb {
		if gb[i] == wb[i] {
			continue
		}
		if gb[i] == wb[i]-1 && in[gb[i]-1] == '\r' && in[gb[i]] == '\n' {
			continue
		}
		tb.Fatalf("event %d ends at offset %d, want %d (input %q)", i, gb[i], wb[i], in)
	}
}

// view is an Event without Raw, for comparisons.
type view struct {
	Type, Data, ID, Comment string
	HasData, HasID          bool
	Retry                   int
	HasRetry, IsComment     bool
	Inner                   string
}

func viewOf(e Event) view {
	v := view{Type: e.Type, Data: e.Data, ID: e.ID, Comment: e.Comment, HasData: e.HasData, HasID: e.HasID,
		Retry: e.Retry, HasRetry: e.HasRetry, IsComment: e.IsComment}
	if e.InnerComments != nil {
		v.Inner = fmt.Sprintf("%q", e.InnerComments)
	}
	return v
}

func views(evs []Event) []view {
	v := make([]view, len(evs))
	for i, e := range evs {
		v[i] = viewOf(e)
	}
	return v
}

func sameViews(a, b []Event) bool {
	va, vb := views(a), views(b)
	if len(va) != len(vb) {
		return false
	}
	for i := range va {
		if va[i] != vb[i] {
			return false
		}
	}
	return true
}

// errKind names an outcome's final error for comparisons.
func errKind(err error) string {
	var inc *IncompleteError
	switch {
	case err == io.EOF:
		return "eof"
	case errors.As(err, &inc):
		return "incomplete"
	case errors.Is(err, ErrTooLarge):
		return "toolarge"
	default:
		return "other: " + err.Error()
	}
}

// chunkReader returns its data in reads of the given sizes (the last size
// repeats).
type chunkReader struct {
	data  []byte
	sizes []int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := c.sizes[0]
	if len(c.sizes) > 1 {
		c.sizes = c.sizes[1:]
	}
	n = min(n, len(p), len(c.data))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// splitAt returns a reader that returns in[:k] and then in[k:] (and io.EOF
// with the last bytes, as some readers do).
func splitAt(in []byte, k int) io.Reader {
	return &twoPart{parts: [][]byte{in[:k], in[k:]}}
}

type twoPart struct{ parts [][]byte }

func (t *twoPart) Read(p []byte) (int, error) {
	for len(t.parts) > 0 && len(t.parts[0]) == 0 {
		t.parts = t.parts[1:]
	}
	if len(t.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(p, t.parts[0])
	t.parts[0] = t.parts[0][n:]
	if len(t.parts) == 1 && len(t.parts[0]) == 0 {
		return n, io.EOF
	}
	return n, nil
}

// refParse is a deliberately simple, spec-literal parser of a whole input,
// used as an oracle: no buffering, no read boundaries.
func refParse(in []byte, lenient bool) (evs []Event, kind string, tail []byte) {
	s := string(in)
	pos, blockStart := 0, 0
	if strings.HasPrefix(s, "\xEF\xBB\xBF") {
		pos = 3
	}
	type block struct {
		lines, fields   bool
		data            []string
		comments        []string
		typ, id         string
		hasID, hasRetry bool
		retry           int
	}
	var b block
	emit := func(end int) {
		e := Event{Raw: []byte(s[blockStart:end])}
		if !b.fields {
			e.IsComment = true
			e.Comment = strings.Join(b.comments, "\n")
		} else {
			e.Type = b.typ
			if b.data != nil {
				e.HasData, e.Data = true, strings.Join(b.data, "\n")
			}
			e.ID, e.HasID = b.id, b.hasID
			e.Retry, e.HasRetry = b.retry, b.hasRetry
			if b.comments != nil {
				e.InnerComments = b.comments
			}
		}
		evs = append(evs, e)
		b = block{}
		blockStart = end
	}
	process := func(line string) bool { // reports a blank line ending a block
		if line == "" {
			return b.lines
		}
		b.lines = true
		if line[0] == ':' {
			b.comments = append(b.comments, strings.TrimPrefix(line[1:], " "))
			return false
		}
		b.fields = true
		name, value, found := strings.Cut(line, ":")
		if found {
			value = strings.TrimPrefix(value, " ")
		}
		switch name {
		case "data":
			b.data = append(b.data, value)
		case "event":
			b.typ = value
		case "id":
			if !strings.Contains(value, "\x00") {
				b.id, b.hasID = value, true
			}
		case "retry":
			if value != "" && strings.Trim(value, "0123456789") == "" {
				if n, err := strconv.ParseInt(value, 10, 0); err == nil {
					b.retry, b.hasRetry = int(n), true
				}
			}
		}
		return false
	}
	for {
		i := strings.IndexAny(s[pos:], "\r\n")
		if i < 0 {
			break
		}
		line := s[pos : pos+i]
		pos += i + 1
		if s[pos-1] == '\r' && pos < len(s) && s[pos] == '\n' {
			pos++
		}
		if process(line) {
			emit(pos)
		}
	}
	if pos < len(s) || b.lines {
		if lenient {
			if pos < len(s) {
				process(s[pos:])
			}
			emit(len(s))
			return evs, "eof", nil
		}
		return evs, "incomplete", []byte(s[blockStart:])
	}
	if blockStart == len(s) {
		return evs, "eof", nil
	}
	return evs, "eof", []byte(s[blockStart:])
}

// checkAgainstRef compares a Reader outcome with the oracle.
func checkAgainstRef(tb testing.TB, in []byte, lenient bool, o outcome) {
	tb.Helper()
	want, kind, wantTail := refParse(in, lenient)
	if !sameViews(o.events, want) {
		tb.Fatalf("events differ from the reference parser\ninput %q\n got %+v\nwant %+v", in, views(o.events), views(want))
	}
	if got := errKind(o.err); got != kind {
		tb.Fatalf("final error %s, reference %s (input %q)", got, kind, in)
	}
	checkSameBoundaries(tb, in, o.events, want)
	// With identical boundaries the tails are identical too; otherwise the
	// tail may start with the LF of a split CRLF.
	if got := o.tail(tb); !bytes.Equal(got, wantTail) && !bytes.Equal(got, append([]byte("\n"), wantTail...)) {
		tb.Fatalf("tail %q, reference %q (input %q)", got, wantTail, in)
	}
}

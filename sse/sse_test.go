package sse

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

type parseCase struct {
	name    string
	in      string
	lenient bool
	want    []Event // Raw is compared only when set
	kind    string  // "eof" (default) or "incomplete"
	tail    string  // Trailing / Partial
}

func data(s string) Event { return Event{Data: s, HasData: true} }

var parseCases = []parseCase{
	// Line endings.
	{name: "LF", in: "data: a\n\n", want: []Event{{Data: "a", HasData: true, Raw: []byte("data: a\n\n")}}},
	{name: "CRLF", in: "data: a\r\n\r\n", want: []Event{{Data: "a", HasData: true, Raw: []byte("data: a\r\n\r\n")}}},
	{name: "CR", in: "data: a\r\r", want: []Event{{Data: "a", HasData: true, Raw: []byte("data: a\r\r")}}},
	{name: "mixed endings", in: "data: a\r\ndata: b\rdata: c\n\r\ndata: d\r\n\r", want: []Event{data("a\nb\nc"), data("d")}},
	{name: "LF then CR is two endings", in: "data: a\n\rdata: b\n\n", want: []Event{data("a"), data("b")}},
	{name: "CR CR LF", in: "data: a\r\r\ndata: b\r\n\n", want: []Event{
		{Data: "a", HasData: true, Raw: []byte("data: a\r\r\n")}, {Data: "b", HasData: true, Raw: []byte("data: b\r\n\n")}}},
	{name: "lone CR at EOF ends the block", in: "data: a\n\r", want: []Event{data("a")}},
	{name: "CR at EOF ends a line only", in: "data: a\r", kind: "incomplete", tail: "data: a\r"},
	{name: "CRLF CR at EOF", in: "data: a\r\n\r", want: []Event{data("a")}},

	// Byte order mark.
	{name: "BOM", in: "\xEF\xBB\xBFdata: a\n\n", want: []Event{{Data: "a", HasData: true, Raw: []byte("\xEF\xBB\xBFdata: a\n\n")}}},
	{name: "second BOM is not stripped", in: "\xEF\xBB\xBF\xEF\xBB\xBFdata: a\n\n", want: []Event{{}}},
	{name: "BOM after start is not stripped", in: "\n\xEF\xBB\xBFdata: a\n\n", want: []Event{{}}},
	{name: "BOM only", in: "\xEF\xBB\xBF", tail: "\xEF\xBB\xBF"},
	{name: "BOM then blank", in: "\xEF\xBB\xBF\n", tail: "\xEF\xBB\xBF\n"},
	{name: "partial BOM", in: "\xEF\xBB", kind: "incomplete", tail: "\xEF\xBB"},
	{name: "BOM-like start", in: "\xEF\xBBdata: a\n\n", want: []Event{{}}},

	// Field syntax.
	{name: "data without colon", in: "data\n\n", want: []Event{data("")}},
	{name: "data colon", in: "data:\n\n", want: []Event{data("")}},
	{name: "data colon space", in: "data: \n\n", want: []Event{data("")}},
	{name: "data no space", in: "data:x\n\n", want: []Event{data("x")}},
	{name: "one space stripped only", in: "data:  x\n\n", want: []Event{data(" x")}},
	{name: "tab not stripped", in: "data:\tx\n\n", want: []Event{data("\tx")}},
	{name: "trailing space kept", in: "data: x \n\n", want: []Event{data("x ")}},
	{name: "colon in value", in: "data: a:b: c\n\n", want: []Event{data("a:b: c")}},
	{name: "multiple data lines", in: "data: a\ndata\ndata: b\n\n", want: []Event{data("a\n\nb")}},
	{name: "two empty data lines", in: "data\ndata\n\n", want: []Event{data("\n")}},
	{name: "field names are case-sensitive", in: "Data: x\n\n", want: []Event{{}}},
	{name: "space before colon", in: "data : x\n\n", want: []Event{{}}},
	{name: "whitespace line is not blank", in: " \n\n", want: []Event{{}}},
	{name: "unknown fields ignored", in: "foo: bar\ndata: x\nbaz\n\n", want: []Event{{Data: "x", HasData: true, Raw: []byte("foo: bar\ndata: x\nbaz\n\n")}}},
	{name: "unknown field only", in: "foo\n\n", want: []Event{{Raw: []byte("foo\n\n")}}},
	{name: "NUL in data kept", in: "data: a\x00b\n\n", want: []Event{data("a\x00b")}},
	{name: "invalid UTF-8 kept", in: "data: \xff\xfe\n\n", want: []Event{data("\xff\xfe")}},

	// event.
	{name: "event", in: "event: ping\ndata: x\n\n", want: []Event{{Type: "ping", Data: "x", HasData: true}}},
	{name: "last event wins", in: "event: a\nevent: b\n\n", want: []Event{{Type: "b"}}},
	{name: "empty event", in: "event: a\nevent\n\n", want: []Event{{}}},

	// id.
	{name: "id", in: "id: 42\ndata: x\n\n", want: []Event{{ID: "42", HasID: true, Data: "x", HasData: true}}},
	{name: "empty id", in: "id\n\n", want: []Event{{HasID: true}}},
	{name: "empty id colon", in: "id:\n\n", want: []Event{{HasID: true}}},
	{name: "empty id colon space", in: "id: \n\n", want: []Event{{HasID: true}}},
	{name: "id with NUL ignored", in: "id: a\x00b\ndata: x\n\n", want: []Event{data("x")}},
	{name: "id with NUL keeps earlier id", in: "id: 1\nid: \x00\n\n", want: []Event{{ID: "1", HasID: true}}},
	{name: "last id wins", in: "id: 1\nid: 2\n\n", want: []Event{{ID: "2", HasID: true}}},
	{name: "id spaces", in: "id:  a b \n\n", want: []Event{{ID: " a b ", HasID: true}}},

	// retry.
	{name: "retry", in: "retry: 1000\n\n", want: []Event{{Retry: 1000, HasRetry: true}}},
	{name: "retry zero", in: "retry: 0\n\n", want: []Event{{HasRetry: true}}},
	{name: "retry leading zeros", in: "retry:007\n\n", want: []Event{{Retry: 7, HasRetry: true}}},
	{name: "retry non-digit", in: "retry: 10a\n\n", want: []Event{{}}},
	{name: "retry negative", in: "retry: -1\n\n", want: []Event{{}}},
	{name: "retry plus", in: "retry: +1\n\n", want: []Event{{}}},
	{name: "retry decimal", in: "retry: 1.5\n\n", want: []Event{{}}},
	{name: "retry empty", in: "retry\n\n", want: []Event{{}}},
	{name: "retry two spaces", in: "retry:  5\n\n", want: []Event{{}}},
	{name: "retry trailing space", in: "retry: 5 \n\n", want: []Event{{}}},
	{name: "retry overflow ignored", in: "retry: 99999999999999999999999\n\n", want: []Event{{}}},
	{name: "retry invalid keeps earlier", in: "retry: 5\nretry: x\n\n", want: []Event{{Retry: 5, HasRetry: true}}},

	// Comments.
	{name: "comment", in: ": ping\n\n", want: []Event{{IsComment: true, Comment: "ping", Raw: []byte(": ping\n\n")}}},
	{name: "empty comment", in: ":\n\n", want: []Event{{IsComment: true}}},
	{name: "comment one space stripped", in: ":  two\n\n", want: []Event{{IsComment: true, Comment: " two"}}},
	{name: "comment no space", in: ":x:y\n\n", want: []Event{{IsComment: true, Comment: "x:y"}}},
	{name: "comment lines", in: ":a\r\n: b\r\n\r\n", want: []Event{{IsComment: true, Comment: "a\nb"}}},
	{name: "comments inside", in: ": c1\ndata: x\n:c2\n\n", want: []Event{{Data: "x", HasData: true, InnerComments: []string{"c1", "c2"}}}},
	{name: "comment with unknown field", in: ": c\nfoo\n\n", want: []Event{{InnerComments: []string{"c"}}}},
	{name: "heartbeats between events", in: "data: a\n\n:\n\ndata: b\n\n", want: []Event{data("a"), {IsComment: true}, data("b")}},

	// Block boundaries.
	{name: "empty input"},
	{name: "only blank lines", in: "\n\r\n\r\n", tail: "\n\r\n\r\n"},
	{name: "consecutive blank lines", in: "\n\n\ndata: a\n\n\n\ndata: b\n\n\n", tail: "\n", want: []Event{
		{Data: "a", HasData: true, Raw: []byte("\n\n\ndata: a\n\n")},
		{Data: "b", HasData: true, Raw: []byte("\n\ndata: b\n\n")}}},
	{name: "block without data", in: "event: x\nid: 1\nretry: 2\n\n", want: []Event{{Type: "x", ID: "1", HasID: true, Retry: 2, HasRetry: true}}},

	// End of stream inside a block.
	{name: "incomplete after fields", in: "data: a\n\ndata: b\n", want: []Event{data("a")}, kind: "incomplete", tail: "data: b\n"},
	{name: "incomplete partial line", in: "data: a\n\n\nda", want: []Event{data("a")}, kind: "incomplete", tail: "\nda"},
	{name: "incomplete comment", in: "data: a\n\n: ping", want: []Event{data("a")}, kind: "incomplete", tail: ": ping"},
	{name: "incomplete comment line", in: ": ping\n", kind: "incomplete", tail: ": ping\n"},
	{name: "incomplete only", in: "data: x", kind: "incomplete", tail: "data: x"},

	// Lenient mode.
	{name: "lenient partial line", lenient: true, in: "data: a\n\ndata: b", want: []Event{data("a"), {Data: "b", HasData: true, Raw: []byte("data: b")}}},
	{name: "lenient line", lenient: true, in: "\ndata: b\n", want: []Event{{Data: "b", HasData: true, Raw: []byte("\ndata: b\n")}}},
	{name: "lenient comment", lenient: true, in: ": x", want: []Event{{IsComment: true, Comment: "x"}}},
	{name: "lenient CR", lenient: true, in: "data: a\r", want: []Event{data("a")}},
	{name: "lenient blank tail", lenient: true, in: "data: a\n\n\n", want: []Event{data("a")}, tail: "\n"},
	{name: "lenient clean", lenient: true, in: "data: a\n\n", want: []Event{data("a")}},
}

// checkCase checks an outcome against a case. With split set, the input was
// cut into several reads, and the LF of a CRLF that ends the last block may be
// in the tail.
func checkCase(t *testing.T, c parseCase, o outcome, split bool) {
	t.Helper()
	kind := c.kind
	if kind == "" {
		kind = "eof"
	}
	if got := errKind(o.err); got != kind {
		t.Fatalf("final error %v, want %s", o.err, kind)
	}
	if !sameViews(o.events, c.want) {
		t.Fatalf("events\n got %+v\nwant %+v", views(o.events), views(c.want))
	}
	if got := string(o.tail(t)); got != c.tail && !(split && got == "\n"+c.tail) {
		t.Fatalf("tail %q, want %q", got, c.tail)
	}
	if c.tail == "" && o.trailing != nil && !split {
		t.Fatalf("Trailing %q, want nil", o.trailing)
	}
	checkConcat(t, []byte(c.in), o)
	checkAgainstRef(t, []byte(c.in), c.lenient, o)
}

func TestParse(t *testing.T) {
	for _, c := range parseCases {
		t.Run(c.name, func(t *testing.T) {
			o := readAll(t, strings.NewReader(c.in), Options{Lenient: c.lenient})
			checkCase(t, c, o, false)
			for i, w := range c.want {
				if w.Raw != nil && !bytes.Equal(o.events[i].Raw, w.Raw) {
					t.Fatalf("event %d Raw %q, want %q", i, o.events[i].Raw, w.Raw)
				}
			}
		})
	}
}

// TestParseSplitReads feeds every case through readers that cut the input
// everywhere: the events must not change, and Raw boundaries only where a
// CRLF's CR ended a read.
func TestParseSplitReads(t *testing.T) {
	for _, c := range parseCases {
		t.Run(c.name, func(t *testing.T) {
			in := []byte(c.in)
			opts := Options{Lenient: c.lenient}
			readers := map[string]func() io.Reader{
				"OneByteReader":   func() io.Reader { return iotest.OneByteReader(bytes.NewReader(in)) },
				"DataErrReader":   func() io.Reader { return iotest.DataErrReader(bytes.NewReader(in)) },
				"HalfReader":      func() io.Reader { return iotest.HalfReader(bytes.NewReader(in)) },
				"chunks 1,2,3":    func() io.Reader { return &chunkReader{data: in, sizes: []int{1, 2, 3}} },
				"empty reads too": func() io.Reader { return &stutter{r: iotest.OneByteReader(bytes.NewReader(in))} },
			}
			for name, mk := range readers {
				t.Logf("reader %s", name)
				checkCase(t, c, readAll(t, mk(), opts), true)
			}
			for k := 0; k <= len(in); k++ {
				checkCase(t, c, readAll(t, splitAt(in, k), opts), true)
			}
		})
	}
}

func TestCRLFSplitAcrossReads(t *testing.T) {
	// A CRLF in the middle of a block, split across reads, is one line end.
	o := readAll(t, &chunkReader{data: []byte("data: a\r\ndata: b\r\n\r\n"), sizes: []int{8, 100}}, Options{})
	if len(o.events) != 1 || o.events[0].Data != "a\nb" || o.err != io.EOF || o.trailing != nil {
		t.Fatalf("got %+v, %v, %q", views(o.events), o.err, o.trailing)
	}
	if string(o.events[0].Raw) != "data: a\r\ndata: b\r\n\r\n" {
		t.Fatalf("Raw %q", o.events[0].Raw)
	}
	// The LF after a dispatching CR that ended a read goes with the next
	// block, and is not a blank line.
	in := "data: a\r\n\r\ndata: b\r\n\r\n"
	o = readAll(t, &chunkReader{data: []byte(in), sizes: []int{10, 100}}, Options{})
	if len(o.events) != 2 || o.events[0].Data != "a" || o.events[1].Data != "b" {
		t.Fatalf("got %+v", views(o.events))
	}
	if string(o.events[0].Raw) != "data: a\r\n\r" || string(o.events[1].Raw) != "\ndata: b\r\n\r\n" {
		t.Fatalf("Raws %q %q", o.events[0].Raw, o.events[1].Raw)
	}
	// "data: a\r" + "\ndata: b" would be two events if the LF counted as a
	// blank line.
	o = readAll(t, &chunkReader{data: []byte("data: a\r\ndata: b\n\n"), sizes: []int{8, 100}}, Options{})
	if len(o.events) != 1 || o.events[0].Data != "a\nb" {
		t.Fatalf("got %+v", views(o.events))
	}
	// Trailing LF at EOF.
	o = readAll(t, &chunkReader{data: []byte("data: a\r\n\r\n"), sizes: []int{10, 100}}, Options{})
	if len(o.events) != 1 || o.err != io.EOF || string(o.trailing) != "\n" {
		t.Fatalf("got %+v %v %q", views(o.events), o.err, o.trailing)
	}
}

// TestNoBlockingOnCR: an event that ends with a CR at the end of what the
// server has sent so far is dispatched without waiting for more bytes.
func TestNoBlockingOnCR(t *testing.T) {
	for _, in := range []string{"data: a\r\r", "data: a\r\n\r", "data: a\n\r", "data: a\n\n", ": hb\r\r"} {
		pr, pw := io.Pipe()
		rd := NewReader(pr, Options{})
		go pw.Write([]byte(in))
		done := make(chan error, 1)
		go func() { _, err := rd.Next(); done <- err }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%q: %v", in, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%q: Next blocked waiting for bytes after a complete event", in)
		}
		go pw.Write([]byte("\ndata: b\n\n"))
		ev, err := rd.Next()
		if err != nil || ev.Data != "b" {
			t.Fatalf("%q: second event %+v %v", in, viewOf(ev), err)
		}
		pw.Close()
		if _, err := rd.Next(); err != io.EOF {
			t.Fatalf("%q: %v", in, err)
		}
	}
}

func TestIncompleteError(t *testing.T) {
	rd := NewReader(strings.NewReader("data: a\n\n\nid: 7\ndata: b"), Options{})
	if _, err := rd.Next(); err != nil {
		t.Fatal(err)
	}
	_, err := rd.Next()
	if !errors.Is(err, ErrIncomplete) {
		t.Fatalf("errors.Is(%v, ErrIncomplete) false", err)
	}
	var inc *IncompleteError
	if !errors.As(err, &inc) || string(inc.Partial) != "\nid: 7\ndata: b" {
		t.Fatalf("got %#v", err)
	}
	if !strings.Contains(err.Error(), "incomplete") {
		t.Fatalf("message %q", err.Error())
	}
	if rd.LastEventID() != "" {
		t.Fatalf("incomplete block changed LastEventID to %q", rd.LastEventID())
	}
	if _, err2 := rd.Next(); err2 != err {
		t.Fatalf("not sticky: %v", err2)
	}
}

func TestLastEventID(t *testing.T) {
	steps := []struct {
		block string
		want  string
	}{
		{"id: 1\ndata: a\n\n", "1"},
		{"data: b\n\n", "1"},
		{": c\n\n", "1"},
		{"id: 2\n\n", "2"}, // a block with no data still sets it
		{"id: x\x00\ndata: d\n\n", "2"},
		{"id\ndata: e\n\n", ""}, // an empty id resets it
		{"id: 3\nid: 4\n\n", "4"},
	}
	var in string
	for _, s := range steps {
		in += s.block
	}
	for _, lenient := range []bool{false, true} {
		rd := NewReader(strings.NewReader(in+"id: 5\ndata: f"), Options{Lenient: lenient})
		for i, s := range steps {
			if _, err := rd.Next(); err != nil {
				t.Fatal(err)
			}
			if got := rd.LastEventID(); got != s.want {
				t.Fatalf("after block %d: LastEventID %q, want %q", i, got, s.want)
			}
		}
		_, err := rd.Next()
		want := "4"
		if lenient {
			want = "5"
			if err != nil {
				t.Fatal(err)
			}
		} else if !errors.Is(err, ErrIncomplete) {
			t.Fatal(err)
		}
		if got := rd.LastEventID(); got != want {
			t.Fatalf("lenient=%v: LastEventID %q after the final block, want %q", lenient, got, want)
		}
	}
}

func TestSizeLimit(t *testing.T) {
	ev := "data: 12345678\n\n" // 16 bytes
	cases := []struct {
		name string
		in   string
		max  int
		err  bool
	}{
		{"exactly the limit", ev, 16, false},
		{"one over", ev, 15, true},
		{"line over the limit", "data: " + strings.Repeat("x", 100) + "\n\n", 50, true},
		{"partial line over the limit", "data: " + strings.Repeat("x", 100), 50, true},
		{"blank lines count", strings.Repeat("\n", 20) + ev, 30, true},
		{"second event over", ev + ev + "data: " + strings.Repeat("x", 20) + "\n\n", 16, true},
		{"many small events", strings.Repeat(ev, 1000), 16, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, r := range []io.Reader{strings.NewReader(c.in), iotest.OneByteReader(strings.NewReader(c.in))} {
				o := readAll(t, r, Options{MaxEventSize: c.max})
				if c.err != errors.Is(o.err, ErrTooLarge) {
					t.Fatalf("err %v", o.err)
				}
				if !c.err {
					checkConcat(t, []byte(c.in), o)
				}
			}
		})
	}
}

// endless is an infinite stream of one byte.
type endless byte

func (e endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(e)
	}
	return len(p), nil
}

func TestSizeLimitEndlessLine(t *testing.T) {
	for _, b := range []byte{'x', ':', '\n'} { // a huge line, a huge comment, endless blank lines
		rd := NewReader(endless(b), Options{MaxEventSize: 1 << 20})
		if _, err := rd.Next(); err != ErrTooLarge {
			t.Fatalf("%q: %v", b, err)
		}
		if _, err := rd.Next(); err != ErrTooLarge {
			t.Fatalf("%q: not sticky: %v", b, err)
		}
	}
}

func TestLargeEvent(t *testing.T) {
	// Events larger than the initial buffer, with every kind of line ending.
	for _, eol := range []string{"\n", "\r\n", "\r"} {
		line := strings.Repeat("y", 100_000)
		in := "data: " + line + eol + "data: " + line + eol + eol + "data: small" + eol + eol
		o := readAll(t, iotest.HalfReader(strings.NewReader(in)), Options{})
		if o.err != io.EOF || len(o.events) != 2 || o.events[0].Data != line+"\n"+line || o.events[1].Data != "small" {
			t.Fatalf("%q: %v %d", eol, o.err, len(o.events))
		}
		checkConcat(t, []byte(in), o)
	}
	// The default limit allows a 10 MiB event.
	big := "data: " + strings.Repeat("z", 10<<20) + "\n\n"
	o := readAll(t, strings.NewReader(big), Options{})
	if o.err != io.EOF || len(o.events) != 1 || len(o.events[0].Data) != 10<<20 {
		t.Fatalf("%v", o.err)
	}
}

// TestManyCROnlyLines guards against rescanning: a large block of short
// CR-terminated lines must parse in linear time.
func TestManyCROnlyLines(t *testing.T) {
	in := strings.Repeat("data: x\r", 500_000) + "\r"
	start := time.Now()
	o := readAll(t, strings.NewReader(in), Options{})
	if o.err != io.EOF || len(o.events) != 1 || len(o.events[0].Data) != 2*500_000-1 {
		t.Fatalf("%v", o.err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
}

func TestReadError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("data: a\n\n\ndata: b\n"), iotest.ErrReader(boom))
	rd := NewReader(r, Options{})
	ev, err := rd.Next()
	if err != nil || ev.Data != "a" {
		t.Fatal(ev, err)
	}
	if _, err := rd.Next(); err != boom {
		t.Fatalf("got %v, want the reader's error", err)
	}
	if string(rd.Trailing()) != "\ndata: b\n" {
		t.Fatalf("Trailing %q", rd.Trailing())
	}
	if _, err := rd.Next(); err != boom {
		t.Fatalf("not sticky: %v", err)
	}
}

// stutter returns (0, nil) before every real read.
type stutter struct {
	r   io.Reader
	odd bool
}

func (s *stutter) Read(p []byte) (int, error) {
	s.odd = !s.odd
	if s.odd {
		return 0, nil
	}
	return s.r.Read(p)
}

type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }

func TestNoProgress(t *testing.T) {
	if _, err := NewReader(zeroReader{}, Options{}).Next(); err != io.ErrNoProgress {
		t.Fatal(err)
	}
}

func TestRawIsACopy(t *testing.T) {
	rd := NewReader(strings.NewReader("data: a\n\ndata: b\n\n"), Options{})
	a, _ := rd.Next()
	b, _ := rd.Next()
	if string(a.Raw) != "data: a\n\n" || string(b.Raw) != "data: b\n\n" || a.Data != "a" {
		t.Fatalf("%q %q", a.Raw, b.Raw)
	}
}

func TestOptionsDefaults(t *testing.T) {
	for _, m := range []int{0, -1} {
		if rd := NewReader(strings.NewReader(""), Options{MaxEventSize: m}); rd.max != DefaultMaxEventSize {
			t.Fatalf("MaxEventSize %d → %d", m, rd.max)
		}
	}
	if DefaultMaxEventSize != 16<<20 {
		t.Fatal("default is 16 MiB")
	}
}

// mixedStream builds a stream of blocks of many sizes and shapes, with every
// kind of line ending, so that blocks straddle buffer refills at every offset.
func mixedStream(seed uint32) []byte {
	eols := []string{"\n", "\r\n", "\r"}
	var b []byte
	x := seed
	rnd := func(n int) int { // xorshift, deterministic
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		return int(x % uint32(n))
	}
	for i := range 400 {
		eol := eols[rnd(3)]
		for range rnd(3) {
			b = append(b, eol...) // leading blank lines
		}
		switch rnd(6) {
		case 0:
			b = append(b, ": heartbeat "+strings.Repeat("h", rnd(50))+eol...)
		case 1:
			b = append(b, "id: "+strings.Repeat("i", rnd(20))+eol+"retry: 100"+eol...)
		case 2:
			b = append(b, ": note"+eol+"event: e"+eol...)
		}
		for range 1 + rnd(4) {
			b = append(b, "data: "+strings.Repeat(string(rune('a'+i%26)), rnd(3000))+eol...)
		}
		b = append(b, eol...)
	}
	return b
}

func TestBufferRefills(t *testing.T) {
	for seed := uint32(1); seed <= 5; seed++ {
		in := mixedStream(seed)
		want, _, _ := refParse(in, false)
		readers := map[string]io.Reader{
			"whole":        bytes.NewReader(in),
			"chunks 7000":  &chunkReader{data: in, sizes: []int{7000}},
			"chunks 16385": &chunkReader{data: in, sizes: []int{16385, 1, 999}},
			"half":         iotest.HalfReader(bytes.NewReader(in)),
			"one byte":     iotest.OneByteReader(bytes.NewReader(in)),
		}
		for name, r := range readers {
			o := readAll(t, r, Options{MaxEventSize: 20_000})
			if o.err != io.EOF || len(o.events) != len(want) {
				t.Fatalf("seed %d %s: %v, %d events, want %d", seed, name, o.err, len(o.events), len(want))
			}
			checkConcat(t, in, o)
			checkAgainstRef(t, in, false, o)
		}
	}
}

// badReader claims to have read more than it was given.
type badReader struct{}

func (badReader) Read(p []byte) (int, error) { return len(p) + 1, nil }

func TestInvalidReadCount(t *testing.T) {
	if _, err := NewReader(badReader{}, Options{}).Next(); err != errInvalidRead {
		t.Fatal(err)
	}
}

// TestReaderReusesBuffer: with Options.Buffer the Reader reads into it,
// and what it returns does not alias it (a caller reuses it for the next
// stream while it keeps the events).
func TestReaderReusesBuffer(t *testing.T) {
	buf := make([]byte, 16<<10)
	in := "data: one\n\n: c\n\ndata: two\n\n"
	rd := NewReader(strings.NewReader(in), Options{Buffer: buf})
	var evs []Event
	for {
		ev, err := rd.Next()
		if err != nil {
			break
		}
		evs = append(evs, ev)
	}
	if len(evs) != 3 || !strings.HasPrefix(string(buf), in) {
		t.Fatalf("%d events; buffer starts %q", len(evs), buf[:len(in)])
	}
	clear(buf)
	if evs[0].Data != "one" || string(evs[0].Raw) != "data: one\n\n" || evs[2].Data != "two" || evs[1].Comment != "c" {
		t.Fatalf("events changed with the buffer: %+v", evs)
	}
}

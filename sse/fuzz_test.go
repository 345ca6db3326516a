package sse

import (
	"bytes"
	"fmt"
	"io"
	"testing"
	"testing/iotest"
	"time"
)

// FuzzReader checks, for any input, read whole and in chunks of a fuzzed
// size, in strict or lenient mode: no panic; the Raws followed by the tail
// reproduce the input; the events agree with the spec-literal reference
// parser; and every non-comment event, re-encoded with Encode and parsed
// back, keeps its Type, Data, ID and Retry.
func FuzzReader(f *testing.F) {
	for _, c := range parseCases {
		f.Add([]byte(c.in), uint8(0), c.lenient)
	}
	for _, s := range []string{
		"id: 1\r\nevent: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\n\r\n",
		"retry: 3000\n: keep-alive\n\n:\n\nid:\ndata\n\n",
		"\xEF\xBB\xBF:\r\r\r\ndata:a\r\n\n\r",
		"data: x\r\ndata: y\r",
	} {
		f.Add([]byte(s), uint8(1), false)
		f.Add([]byte(s), uint8(3), true)
	}
	f.Fuzz(func(t *testing.T, in []byte, chunk uint8, lenient bool) {
		wd := time.AfterFunc(30*time.Second, func() {
			panic(fmt.Sprintf("FuzzReader: input took over 30s: len=%d chunk=%d lenient=%v in=%q", len(in), chunk, lenient, in))
		})
		defer wd.Stop()
		opts := Options{Lenient: lenient}
		var r io.Reader = bytes.NewReader(in)
		split := chunk > 0 || len(in) > initialBufSize
		if chunk > 0 {
			r = &chunkReader{data: in, sizes: []int{int(chunk)}}
			if chunk%2 == 0 {
				r = iotest.DataErrReader(r)
			}
		}
		o := readAll(t, r, opts)
		checkFrames(t, in, chunk, opts, o)
		checkConcat(t, in, o)
		checkAgainstRef(t, in, lenient, o)
		if !split {
			// One read: Raw boundaries are exact.
			want, _, _ := refParse(in, lenient)
			for i := range want {
				if !bytes.Equal(o.events[i].Raw, want[i].Raw) {
					t.Fatalf("event %d Raw %q, reference %q", i, o.events[i].Raw, want[i].Raw)
				}
			}
		}
		for _, ev := range o.events {
			if ev.IsComment {
				continue
			}
			enc := Encode(ev)
			back := readAll(t, bytes.NewReader(enc), Options{})
			if back.err != io.EOF {
				t.Fatalf("re-encoded %q: %v", enc, back.err)
			}
			var got Event
			switch len(back.events) {
			case 0: // nothing to encode, e.g. only unknown fields
				if string(enc) != "\n" {
					t.Fatalf("re-encoded %q gave no event", enc)
				}
			case 1:
				got = back.events[0]
			default:
				t.Fatalf("re-encoded %q gave %d events", enc, len(back.events))
			}
			if got.Type != ev.Type || got.Data != ev.Data || got.HasData != ev.HasData ||
				got.ID != ev.ID || got.HasID != ev.HasID || got.Retry != ev.Retry || got.HasRetry != ev.HasRetry {
				t.Fatalf("re-encoding changed the event\n  in %+v\n enc %q\n out %+v", viewOf(ev), enc, viewOf(got))
			}
		}
	})
}

// checkFrames reads in again, as it was read into o, with NextFrame and
// checks that every Frame says what the Event said (Raw, Data, HasData,
// IsComment), that LastEventID after each and Trailing agree, and the same error.
func checkFrames(t *testing.T, in []byte, chunk uint8, opts Options, o outcome) {
	t.Helper()
	var r io.Reader = bytes.NewReader(in)
	if chunk > 0 {
		r = &chunkReader{data: in, sizes: []int{int(chunk)}}
		if chunk%2 == 0 {
			r = iotest.DataErrReader(r)
		}
	}
	rd := NewReader(r, opts)
	var err error
	for i := 0; ; i++ {
		var f Frame
		f, err = rd.NextFrame()
		if err != nil {
			if i != len(o.events) {
				t.Fatalf("NextFrame: %d frames, Next: %d events", i, len(o.events))
			}
			break
		}
		if i >= len(o.events) {
			t.Fatalf("NextFrame: more frames than Next's %d events", len(o.events))
		}
		ev := o.events[i]
		if rd.LastEventID() != o.lastIDs[i] {
			t.Fatalf("frame %d: LastEventID %q, Next's %q", i, rd.LastEventID(), o.lastIDs[i])
		}
		if !bytes.Equal(f.Raw, ev.Raw) || string(f.Data) != ev.Data || f.HasData != ev.HasData || f.IsComment != ev.IsComment ||
			(f.Data == nil) == ev.HasData {
			t.Fatalf("frame %d: Raw %q Data %q HasData %v IsComment %v; event: Raw %q Data %q HasData %v IsComment %v",
				i, f.Raw, f.Data, f.HasData, f.IsComment, ev.Raw, ev.Data, ev.HasData, ev.IsComment)
		}
		_ = append(f.Data, "\x00appended"...)
		if !bytes.Equal(f.Raw, ev.Raw) {
			t.Fatalf("frame %d: an append to Data wrote into Raw: %q", i, f.Raw)
		}
	}
	if fmt.Sprint(err) != fmt.Sprint(o.err) {
		t.Fatalf("NextFrame ended with %v, Next with %v", err, o.err)
	}
	if !bytes.Equal(rd.Trailing(), o.trailing) {
		t.Fatalf("NextFrame: Trailing %q; Next: %q", rd.Trailing(), o.trailing)
	}
}

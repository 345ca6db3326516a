package sse

import (
	"bytes"
	"io"
	"testing"
)

func TestEncode(t *testing.T) {
	cases := []struct {
		ev   Event
		want string
	}{
		{Event{Data: "x", HasData: true}, "data: x\n\n"},
		{Event{Data: "x"}, "data: x\n\n"},
		{Event{HasData: true}, "data: \n\n"},
		{Event{Data: "a\nb\n"}, "data: a\ndata: b\ndata: \n\n"},
		{Event{Data: "a\r\nb\rc"}, "data: a\ndata: b\ndata: c\n\n"},
		{Event{ID: "7", HasID: true, Type: "ping", Retry: 500, HasRetry: true, Data: "{}", HasData: true},
			"id: 7\nevent: ping\nretry: 500\ndata: {}\n\n"},
		{Event{HasID: true}, "id: \n\n"},
		{Event{ID: "a\r\nb", Type: "t\ny"}, "id: ab\nevent: ty\n\n"},
		{Event{HasRetry: true}, "retry: 0\n\n"},
		{Event{Retry: -5, HasRetry: true}, "\n"},
		{Event{}, "\n"},
		{Event{Data: "x", InnerComments: []string{"c"}, Raw: []byte("junk")}, "data: x\n\n"},
		{Event{IsComment: true, Comment: "ping"}, ": ping\n\n"},
		{Event{IsComment: true}, ": \n\n"},
		{Event{IsComment: true, Comment: "a\nb", Data: "ignored"}, ": a\n: b\n\n"},
	}
	for _, c := range cases {
		if got := string(Encode(c.ev)); got != c.want {
			t.Errorf("Encode(%+v) = %q, want %q", viewOf(c.ev), got, c.want)
		}
	}
	if got := string(Heartbeat("ping")); got != ": ping\n\n" {
		t.Errorf("Heartbeat = %q", got)
	}
	if got := string(Heartbeat("")); got != ": \n\n" {
		t.Errorf("Heartbeat = %q", got)
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	evs := []Event{
		{Data: "hello", HasData: true},
		{Data: "", HasData: true},
		{Data: "\n", HasData: true},
		{Data: "a\n b\n\nc ", HasData: true},
		{Data: " leading", HasData: true},
		{Data: ": not a comment", HasData: true},
		{Type: "update", Data: `{"jsonrpc":"2.0"}`, HasData: true},
		{Type: " spaced", ID: " id ", HasID: true},
		{HasID: true},
		{ID: "a\x01b", HasID: true, Retry: 1, HasRetry: true},
		{Retry: 3000, HasRetry: true},
		{IsComment: true, Comment: "ping"},
		{IsComment: true},
		{IsComment: true, Comment: " two\n:x\n"},
	}
	var stream []byte
	for _, e := range evs {
		stream = append(stream, Encode(e)...)
	}
	o := readAll(t, bytes.NewReader(stream), Options{})
	if o.err != io.EOF {
		t.Fatal(o.err)
	}
	if !sameViews(o.events, evs) {
		t.Fatalf("round trip\n got %+v\nwant %+v", views(o.events), views(evs))
	}
	for i, e := range evs {
		if !bytes.Equal(o.events[i].Raw, Encode(e)) {
			t.Fatalf("event %d: Raw %q, Encode %q", i, o.events[i].Raw, Encode(e))
		}
	}
}

package faultproxy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"
)

// TestHTTPCoalescedEventsArriveWholeAndInOrder: events that reach the proxy
// in one upstream write leave it in one flush, byte for byte and in order,
// each recorded as its own message, while the upstream stream is still
// open (the upstream ends only once the client has seen them all: a proxy
// holding them until the end would deadlock this, bounded by `wait`).
func TestHTTPCoalescedEventsArriveWholeAndInOrder(t *testing.T) {
	const n = 50
	var burst bytes.Buffer
	events := make([][]byte, n)
	for i := range events {
		events[i] = note(fmt.Sprintf("e%d", i))
		burst.Write(events[i])
	}
	seen := make(chan struct{})
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		sseHead(w)
		sendEvent(w, burst.Bytes())
		waitOn(r, seen)
	})
	p := startHTTPProxy(t, up)
	resp := postCall(t, p)
	es := readEvents(resp.Body)
	for i := range n {
		if got := methodsOf(es.next(t)); got[0] != fmt.Sprintf("e%d", i) {
			t.Fatalf("event %d: %v", i, got)
		}
	}
	close(seen)
	if err := es.end(t); !errors.Is(err, io.EOF) {
		t.Fatalf("stream ended with %v", err)
	}
	if !bytes.Equal(es.raw.Bytes(), burst.Bytes()) {
		t.Fatalf("client got %q, want %q", es.raw.Bytes(), burst.Bytes())
	}
	var recorded [][]byte
	for _, e := range p.Transcript().Entries() {
		if e.Kind == EntryMessage && e.Dir == ServerToClient {
			recorded = append(recorded, e.Raw)
		}
	}
	if !slices.EqualFunc(recorded, events, bytes.Equal) {
		t.Fatalf("transcript has %d server messages, want the %d events one by one", len(recorded), n)
	}
}

// TestHTTPHoldUntilCoalescedEvent: an event held until a later event of the
// same upstream write is released when that event is flushed, while the
// upstream is still open (it ends only once the client has seen all three).
func TestHTTPHoldUntilCoalescedEvent(t *testing.T) {
	seen := make(chan struct{})
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		sseHead(w)
		sendEvent(w, slices.Concat(note("first"), note("second"), note("third")))
		waitOn(r, seen)
	})
	p := startHTTPProxy(t, up, swapFirstAfterSecond)
	resp := postCall(t, p)
	es := readEvents(resp.Body)
	got := methodsOf(es.next(t), es.next(t), es.next(t))
	close(seen)
	if got[0] != "second" || slices.Index(got, "first") < 1 || len(slices.Compact(slices.Sorted(slices.Values(got)))) != 3 {
		t.Fatalf("events %q, want second first and the held event after it", got)
	}
	if err := es.end(t); !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	wantFault(t, p.Transcript(), "swap", "release")
}

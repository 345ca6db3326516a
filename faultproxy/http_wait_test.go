package faultproxy

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestHTTPWaitStreamsEnded: while a stream is relayed the wait ends with
// its bound and says how many are open; once the client closes it, the
// wait returns as soon as the proxy has seen the stream end.
func TestHTTPWaitStreamsEnded(t *testing.T) {
	gone := make(chan struct{})
	up := blockingUpstream(t, gone, note("a"))
	p := startHTTPProxy(t, up)
	if err := p.WaitStreamsEnded(context.Background()); err != nil {
		t.Fatalf("no stream yet: %v", err)
	}
	resp := postCall(t, p)
	es := readEvents(resp.Body)
	es.next(t) // the stream is being relayed
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	err := p.WaitStreamsEnded(short)
	cancel()
	if err == nil || !strings.Contains(err.Error(), "1 event streams still open") {
		t.Fatalf("with a stream open: %v", err)
	}
	_ = resp.Body.Close()
	waitGone(t, gone)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := p.WaitStreamsEnded(ctx); err != nil {
		t.Fatalf("after the client closed: %v", err)
	}
}

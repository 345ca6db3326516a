package faultproxy

// Forwarding with no rule when a side fails or goes away: the client
// closing, the upstream failing mid-body, a third-party SSE client.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	r3sse "github.com/r3labs/sse/v2"
)

func TestHTTPClientCloseCancelsUpstream(t *testing.T) {
	cancelled := make(chan struct{})
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		sseHead(w)
		sendEvent(w, note("started"))
		select {
		case <-r.Context().Done():
			close(cancelled)
		case <-time.After(wait):
		}
	})
	p := startHTTPProxy(t, up)
	resp := postCall(t, p)
	es := readEvents(resp.Body)
	es.next(t)
	resp.Body.Close()
	select {
	case <-cancelled:
	case <-time.After(wait):
		t.Fatal("the upstream request was not cancelled when the client closed its stream")
	}
	waitTranscript(t, p.Transcript(), "the client-closed note", noteEntry("client closed the stream"))
}

func TestHTTPForwardsBytesBeforeUpstreamFailure(t *testing.T) {
	// The upstream sends an event and half of another, then its
	// connection breaks: the client gets every byte, then an error (not a
	// clean end of stream), as it would without the proxy.
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		sseHead(w)
		sendEvent(w, note("whole"))
		sendEvent(w, []byte("id: 9\ndata: {\"half\":"))
		panic(http.ErrAbortHandler)
	})
	p := startHTTPProxy(t, up)
	resp := postCall(t, p)
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := string(note("whole")) + "id: 9\ndata: {\"half\":"; string(b) != want {
		t.Fatalf("client got %q, want %q", b, want)
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("client read ended with %v, want an unexpected EOF", err)
	}
	waitTranscript(t, p.Transcript(), "the stream-ended note", noteEntry("event stream ended"))
}

func TestHTTPForwardsTruncatedJSONBody(t *testing.T) {
	// A JSON body cut short by the upstream reaches the client cut short,
	// with an error, not as a complete smaller body.
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "100")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,`))
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	})
	p := startHTTPProxy(t, up)
	resp := postCall(t, p)
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != `{"jsonrpc":"2.0","id":1,` || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("client read %q and %v; want the partial body and an unexpected EOF", b, err)
	}
	if !hasNote(p.Transcript(), "reading the response body") {
		t.Fatal("truncated body not recorded")
	}
}

// fewRetries is a backoff.BackOff for the r3labs client: a few quick
// reconnects, then stop (its default retries for 15 minutes).
type fewRetries struct{ left int }

func (f *fewRetries) NextBackOff() time.Duration {
	if f.left <= 0 {
		return -1 // backoff.Stop
	}
	f.left--
	return 10 * time.Millisecond
}

func (f *fewRetries) Reset() {}

func TestHTTPTransparentToThirdPartySSEClient(t *testing.T) {
	// An ordinary SSE client (r3labs/sse) on a standalone GET stream: the
	// first connection breaks after three events, the client reconnects
	// with Last-Event-ID and gets the rest. Through the proxy it must see
	// exactly what it sees without it, and so must the server.
	run := func(t *testing.T, viaProxy bool) (events []string, lastIDs []string) {
		var mu sync.Mutex
		up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			lastIDs = append(lastIDs, r.Header.Get("Last-Event-ID"))
			n := len(lastIDs)
			mu.Unlock()
			sseHead(w)
			if n == 1 {
				sendEvent(w, []byte("retry: 10\nid: 1\ndata: {\"n\":1}\n\n"))
				sendEvent(w, []byte(": keep-alive\n\n"))
				sendEvent(w, []byte("id: 2\nevent: message\ndata: {\"n\":\ndata: 2}\n\n"))
				sendEvent(w, []byte("id: 3\r\ndata: {\"n\":3}\r\n\r\n"))
				panic(http.ErrAbortHandler) // the connection breaks
			}
			sendEvent(w, []byte("id: 4\ndata: {\"n\":4}\n\n"))
			sendEvent(w, []byte("id: 5\ndata: {\"n\":5}\n\n"))
		})
		url := up.URL + "/mcp"
		if viaProxy {
			url = startHTTPProxy(t, up).URL()
		}
		tr := &http.Transport{DisableCompression: true}
		t.Cleanup(tr.CloseIdleConnections)
		c := r3sse.NewClient(url)
		c.Connection = &http.Client{Transport: tr, Timeout: wait}
		c.ReconnectStrategy = &fewRetries{left: 3}
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		err := c.SubscribeRawWithContext(ctx, func(ev *r3sse.Event) {
			events = append(events, fmt.Sprintf("id=%s event=%s data=%s", ev.ID, ev.Event, ev.Data))
		})
		if err != nil {
			t.Fatalf("subscribe: %v", err)
		}
		mu.Lock()
		defer mu.Unlock()
		return events, slices.Clone(lastIDs)
	}
	directEvents, directIDs := run(t, false)
	proxyEvents, proxyIDs := run(t, true)
	if want := []string{"", "3"}; !slices.Equal(directIDs, want) {
		t.Fatalf("direct: the server saw Last-Event-ID %q, want %q (the scenario is wrong)", directIDs, want)
	}
	if !slices.Equal(proxyIDs, directIDs) {
		t.Errorf("Last-Event-ID at the server: through the proxy %q, direct %q", proxyIDs, directIDs)
	}
	if !slices.Equal(proxyEvents, directEvents) {
		t.Errorf("events through the proxy:\n%s\ndirect:\n%s", strings.Join(proxyEvents, "\n"), strings.Join(directEvents, "\n"))
	}
	t.Logf("r3labs saw: %q", directEvents)
}

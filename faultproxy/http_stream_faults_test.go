package faultproxy

// The stream faults over HTTP: cut, reset, buffer, throttle, status.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/sse"
)

// blockingUpstream sends the given events, then holds the stream open
// until the request is cancelled, which it reports on gone.
func blockingUpstream(t testing.TB, gone chan<- struct{}, events ...[]byte) *httptest.Server {
	return newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		sseHead(w)
		for _, ev := range events {
			sendEvent(w, ev)
		}
		select {
		case <-r.Context().Done():
			close(gone)
		case <-time.After(wait):
		}
	})
}

func TestHTTPCutAfterFirstEvent(t *testing.T) {
	gone := make(chan struct{})
	up := blockingUpstream(t, gone, note("a"), note("b"), note("c"))
	p := startHTTPProxy(t, up, Rule{Name: "cut", Match: Match{Dir: ServerToClient, Method: "a"}, Fault: Cut{Deliver: true}})
	resp := postCall(t, p)
	b := readAll(t, resp) // a clean end: readAll fails on an error
	if string(b) != string(note("a")) {
		t.Fatalf("client got %q, want only the first event", b)
	}
	waitGone(t, gone)
	if !hasFault(p.Transcript(), "cut", "cut") || !hasNote(p.Transcript(), "stream cut") {
		t.Fatal("cut not recorded")
	}
}

func TestHTTPCutBeforeEvent(t *testing.T) {
	gone := make(chan struct{})
	up := blockingUpstream(t, gone, note("a"), note("b"))
	p := startHTTPProxy(t, up, Rule{Name: "cut", Match: Match{Dir: ServerToClient, Method: "b"}, Fault: Cut{}})
	resp := postCall(t, p)
	if b := readAll(t, resp); string(b) != string(note("a")) {
		t.Fatalf("client got %q", b)
	}
	waitGone(t, gone)
}

func TestHTTPResetMidStream(t *testing.T) {
	gone := make(chan struct{})
	up := blockingUpstream(t, gone, note("a"), note("b"))
	p := startHTTPProxy(t, up, Rule{Name: "rst", Match: Match{Dir: ServerToClient, Method: "b"}, Fault: Reset{}})
	resp := postCall(t, p)
	es := readEvents(resp.Body)
	es.next(t)
	err := es.end(t)
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, sse.ErrIncomplete) {
		t.Fatalf("stream ended with %v, want a connection error", err)
	}
	waitGone(t, gone)
	wantFault(t, p.Transcript(), "rst", "reset")
}

func TestHTTPResetClientPost(t *testing.T) {
	var calls atomic.Int32
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { calls.Add(1) })
	p := startHTTPProxy(t, up, Rule{Name: "rst", Match: Match{Dir: ClientToServer}, Fault: Reset{}})
	req, _ := http.NewRequest(http.MethodPost, p.URL(), strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`))
	resp, err := newHTTPClient(t).Do(req)
	if err == nil {
		b, rerr := io.ReadAll(resp.Body)
		resp.Body.Close()
		if rerr == nil {
			t.Fatalf("reset POST answered %d %q cleanly", resp.StatusCode, b)
		}
	}
	if calls.Load() != 0 {
		t.Fatal("the reset request reached the server")
	}
}

func TestHTTPBufferUntilBytes(t *testing.T) {
	// Five events of equal size; the buffer releases once three have
	// gathered, then holds the last two until the stream ends.
	evs := make([][]byte, 5)
	for i := range evs {
		evs[i] = note(fmt.Sprintf("e%d", i))
	}
	size := len(evs[0])
	more, end := make(chan struct{}), make(chan struct{})
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		sseHead(w)
		sendEvent(w, evs[0])
		sendEvent(w, evs[1])
		if !waitOn(r, more) {
			return
		}
		sendEvent(w, evs[2])
		sendEvent(w, evs[3])
		sendEvent(w, evs[4])
		waitOn(r, end)
	})
	p := startHTTPProxy(t, up, Rule{Name: "buf", Match: Match{Dir: ServerToClient}, Times: 1, Fault: Buffer{Bytes: 3 * size}})
	resp := postCall(t, p)
	es := readEvents(resp.Body)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := p.WaitPassed(ctx, Match{Method: "e1"}); err != nil {
		t.Fatal(err)
	}
	es.none(t) // two events (2/3 of the threshold) are held
	close(more)
	if got := methodsOf(es.next(t), es.next(t), es.next(t)); strings.Join(got, ",") != "e0,e1,e2" {
		t.Fatalf("released %q", got)
	}
	if err := p.WaitPassed(ctx, Match{Method: "e4"}); err != nil {
		t.Fatal(err)
	}
	es.none(t) // the last two wait for the end of the stream
	close(end)
	if got := methodsOf(es.next(t), es.next(t)); strings.Join(got, ",") != "e3,e4" {
		t.Fatalf("at the end %q", got)
	}
	if err := es.end(t); !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	if !bytes.Equal(es.raw.Bytes(), bytes.Join(evs, nil)) {
		t.Fatalf("bytes differ: %q", es.raw.Bytes())
	}
}

func TestHTTPThrottle(t *testing.T) {
	big := sse.Encode(sse.Event{Data: `{"jsonrpc":"2.0","id":1,"result":{"text":"` + strings.Repeat("x", 950) + `"}}`, HasData: true})
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		sseHead(w)
		sendEvent(w, big)
	})
	p := startHTTPProxy(t, up, Rule{Name: "slow", Match: Match{Dir: ServerToClient}, Fault: Throttle{BytesPerSecond: 2000}})
	start := time.Now()
	resp := postCall(t, p)
	b := readAll(t, resp)
	el := time.Since(start)
	if !bytes.Equal(b, big) {
		t.Fatalf("throttled body altered (%d bytes)", len(b))
	}
	if want := time.Duration(len(big)) * time.Second / 2000 * 8 / 10; el < want {
		t.Fatalf("%d bytes at 2000 B/s took %s, want ≥ %s", len(big), el, want)
	}
	if el > 3*time.Second {
		t.Fatalf("throttle far too slow: %s", el)
	}
}

func TestHTTPStatusOnClientPost(t *testing.T) {
	var calls atomic.Int32
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { calls.Add(1) })
	p := startHTTPProxy(t, up, Rule{Name: "gone", Match: Match{Dir: ClientToServer, Method: "tools/call"},
		Fault: Status{Code: 404, Body: []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}`)}})
	resp := postCall(t, p)
	b := readAll(t, resp)
	if resp.StatusCode != 404 || !strings.Contains(string(b), "Session not found") || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("client got %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	if calls.Load() != 0 {
		t.Fatal("the request was forwarded")
	}
	wantFault(t, p.Transcript(), "gone", "status")
}

func TestHTTPStatusOnJSONResponse(t *testing.T) {
	var calls atomic.Int32
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Mcp-Session-Id", "abc")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	})
	p := startHTTPProxy(t, up, Rule{Name: "gone", Match: Match{Dir: ServerToClient, Kind: jsonrpc.Response}, Fault: Status{Code: 404}})
	resp := postCall(t, p)
	b := readAll(t, resp)
	if resp.StatusCode != 404 || len(b) != 0 || resp.Header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("client got %d %q %v", resp.StatusCode, b, resp.Header)
	}
	if calls.Load() != 1 {
		t.Fatal("the request was not forwarded")
	}
}

func TestHTTPStatusOnStreamCuts(t *testing.T) {
	gone := make(chan struct{})
	up := blockingUpstream(t, gone, note("a"), note("b"))
	p := startHTTPProxy(t, up, Rule{Name: "late", Match: Match{Dir: ServerToClient, Method: "b"}, Fault: Status{Code: 503}})
	resp := postCall(t, p)
	b := readAll(t, resp)
	if resp.StatusCode != 200 || string(b) != string(note("a")) {
		t.Fatalf("client got %d %q", resp.StatusCode, b)
	}
	waitGone(t, gone)
	waitTranscript(t, p.Transcript(), "the status-turned-cut", func(es []Entry) bool {
		for _, e := range es {
			if e.Kind == EntryFault && e.Rule == "late" && strings.Contains(e.Text, "stream cut instead") {
				return true
			}
		}
		return false
	})
}

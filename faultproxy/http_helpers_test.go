package faultproxy

// Helpers of the HTTP tests: upstreams, the proxy, a client, SSE event
// streams, transcript waits.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/sse"
)

// newUpstream starts an upstream server; it is closed at the end of the
// test, after the proxy (cleanups run in reverse).
func newUpstream(t testing.TB, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// startHTTPProxy starts a proxy in front of up's /mcp endpoint.
func startHTTPProxy(t testing.TB, up *httptest.Server, rules ...Rule) *HTTP {
	t.Helper()
	rs := NewRules()
	if err := rs.Set(rules...); err != nil {
		t.Fatal(err)
	}
	p, err := StartHTTP(context.Background(), HTTPOptions{Upstream: up.URL + "/mcp", Rules: rs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// newHTTPClient returns a client whose idle connections are closed at the
// end of the test.
// swapFirstAfterSecond holds the server's "first" message until its
// "second" has passed.
var swapFirstAfterSecond = Rule{
	Name:  "swap",
	Match: Match{Dir: ServerToClient, Method: "first"},
	Fault: HoldUntil{Until: Match{Dir: ServerToClient, Method: "second"}},
}

// postCall posts the tools/call with id 1 to p through a new client.
func postCall(t testing.TB, p *HTTP) *http.Response {
	t.Helper()
	return post(t, newHTTPClient(t), p.URL(), `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`)
}

// waitGone waits (wait at most) for the upstream to see the client's
// connection end.
func waitGone(t testing.TB, gone <-chan struct{}) {
	t.Helper()
	select {
	case <-gone:
	case <-time.After(wait):
		t.Fatal("upstream did not see the disconnect")
	}
}

func newHTTPClient(t testing.TB) *http.Client {
	tr := &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 16}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 3 * wait}
}

// post sends a JSON-RPC body to url with the usual MCP headers.
func post(t testing.TB, c *http.Client, url, body string, hdr ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// readAll reads a whole body and fails on any error.
func readAll(t testing.TB, resp *http.Response) []byte {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the body: %v (got %q)", err, b)
	}
	return b
}

// waitOn blocks until ch is closed, r's context ends or `wait` passes; it
// reports whether ch was closed.
func waitOn(r *http.Request, ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	case <-r.Context().Done():
		return false
	case <-time.After(wait):
		return false
	}
}

// sseHead sends the head of an event stream.
func sseHead(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
}

// sendEvent writes one event and flushes it.
func sendEvent(w http.ResponseWriter, b []byte) {
	_, _ = w.Write(b)
	w.(http.Flusher).Flush()
}

// note returns an SSE event carrying a JSON-RPC notification of method m.
func note(m string, extra ...string) []byte {
	return sse.Encode(sse.Event{Data: fmt.Sprintf(`{"jsonrpc":"2.0","method":%q%s}`, m, strings.Join(extra, "")), HasData: true})
}

// evStream parses a response body on its own goroutine, so a test can wait
// for an event with a deadline or assert that none has arrived yet.
type evStream struct {
	events chan sse.Event
	done   chan struct{}
	err    error        // the reader's final error, set before done closes
	raw    bytes.Buffer // every byte read, valid after done
}

func readEvents(body io.ReadCloser) *evStream {
	es := &evStream{events: make(chan sse.Event, 1024), done: make(chan struct{})}
	go func() {
		defer close(es.done)
		defer body.Close()
		rd := sse.NewReader(io.TeeReader(body, &es.raw), sse.Options{})
		for {
			ev, err := rd.Next()
			if err != nil {
				es.err = err
				return
			}
			es.events <- ev
		}
	}()
	return es
}

// next returns the next event, failing if the stream ends or none comes.
func (es *evStream) next(t testing.TB) sse.Event {
	t.Helper()
	select {
	case ev := <-es.events:
		return ev
	case <-es.done:
		select {
		case ev := <-es.events:
			return ev
		default:
		}
		t.Fatalf("stream ended (%v) while waiting for an event", es.err)
	case <-time.After(wait):
		t.Fatalf("no event within %s", wait)
	}
	return sse.Event{}
}

// none asserts that no event has arrived (yet).
func (es *evStream) none(t testing.TB) {
	t.Helper()
	select {
	case ev := <-es.events:
		t.Fatalf("unexpected event %q", ev.Raw)
	default:
	}
}

// end waits for the end of the stream and returns the reader's error.
func (es *evStream) end(t testing.TB) error {
	t.Helper()
	select {
	case <-es.done:
	case <-time.After(wait):
		t.Fatalf("stream did not end within %s", wait)
	}
	select {
	case ev := <-es.events:
		t.Fatalf("unexpected event %q before the end", ev.Raw)
	default:
	}
	return es.err
}

// waitTranscript waits until pred holds for the transcript.
func waitTranscript(t testing.TB, tr *Transcript, what string, pred func([]Entry) bool) {
	t.Helper()
	deadline := time.After(wait)
	for {
		ch := tr.Changed()
		if pred(tr.Entries()) {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("transcript never showed %s", what)
		}
	}
}

func faultEntry(rule, fault string) func([]Entry) bool {
	return func(es []Entry) bool {
		for _, e := range es {
			if e.Kind == EntryFault && e.Rule == rule && e.Fault == fault {
				return true
			}
		}
		return false
	}
}

func noteEntry(substr string) func([]Entry) bool {
	return func(es []Entry) bool {
		for _, e := range es {
			if e.Kind == EntryNote && strings.Contains(e.Text, substr) {
				return true
			}
		}
		return false
	}
}

// hasNote reports whether a note containing substr was recorded.
func hasNote(tr *Transcript, substr string) bool { return noteEntry(substr)(tr.Entries()) }

// methodsOf returns the JSON-RPC methods of events, in order.
func methodsOf(evs ...sse.Event) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, jsonrpc.Parse([]byte(ev.Data)).Method)
	}
	return out
}

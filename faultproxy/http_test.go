package faultproxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	r3sse "github.com/r3labs/sse/v2"
	"go.uber.org/goleak"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/sse"
)

// The HTTP tests run real HTTP over loopback: an httptest upstream written
// in the test (a small scripted MCP-ish server), the proxy in front of it,
// and a plain net/http client. Upstream handlers never block unbounded:
// they wait on a channel, their request's context or `wait`, whichever
// comes first, so a failing test cannot hang httptest.Server.Close.

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

// ---------------------------------------------------------------------
// Transparency with no rule: a seeded property test.

// script is what the upstream answers to one scripted exchange.
type script struct {
	status int
	header http.Header
	chunks [][]byte // the body, each piece written and flushed on its own
	sse    bool
	events int // complete events in the body (SSE)
}

func (s *script) body() []byte { return bytes.Join(s.chunks, nil) }

// received is what the upstream saw of one exchange.
type received struct {
	method, uri string
	header      http.Header
	body        []byte
}

// A random JSON-RPC-ish value, with unknown fields, escapes and unicode.
func randJSON(rng *rand.Rand, i int) string {
	switch rng.IntN(6) {
	case 0:
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"héllo \u00e9 \"q\" %d"}],"x-unknown":[1,2,{"z":null}]}}`, i, rng.IntN(1e6))
	case 1:
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t%d","progress":%d,"total":100}}`, i, rng.IntN(100))
	case 2:
		return fmt.Sprintf(`{ "id" : "s-%d" , "error" : { "code" : -32602, "message" : "bad\u0000params" }, "jsonrpc":"2.0" }`, i)
	case 3:
		return strings.Repeat(`{"pad":"`+strings.Repeat("x", rng.IntN(64))+`"},`, rng.IntN(40)+1)
	case 4:
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"n":%f}}}`, i, rng.Float64())
	default:
		return "not json at all \x01 \xff\xfe"
	}
}

// randStream builds an event stream: comments, ids, event types, retry,
// multi-line data, unknown fields, LF/CRLF/CR endings, blank lines between
// events, sometimes a BOM, trailing blank lines or a final incomplete event.
// It returns the bytes and the number of complete events.
func randStream(rng *rand.Rand, i int) ([]byte, int) {
	var b bytes.Buffer
	if rng.IntN(10) == 0 {
		b.WriteString("\xef\xbb\xbf")
	}
	eols := []string{"\n", "\r\n", "\r"}
	n := rng.IntN(8)
	for e := 0; e < n; e++ {
		eol := eols[rng.IntN(3)]
		if rng.IntN(8) == 0 {
			b.WriteString(eol)
		}
		writeBlock(&b, rng, i, e, eol)
		b.WriteString(eol)
	}
	switch rng.IntN(5) {
	case 0: // a final incomplete event
		writeBlock(&b, rng, i, n, eols[rng.IntN(3)])
		if rng.IntN(2) == 0 {
			b.WriteString("data: no line end")
		}
	case 1: // trailing blank lines
		b.WriteString("\n\n")
	}
	// Count the complete events as a strict reader sees them in one read.
	rd := sse.NewReader(bytes.NewReader(b.Bytes()), sse.Options{})
	count := 0
	for {
		if _, err := rd.Next(); err != nil {
			break
		}
		count++
	}
	return b.Bytes(), count
}

func writeBlock(b *bytes.Buffer, rng *rand.Rand, i, e int, eol string) {
	if rng.IntN(6) == 0 {
		fmt.Fprintf(b, ": heartbeat %d%s", e, eol)
		return
	}
	if rng.IntN(3) == 0 {
		fmt.Fprintf(b, "id: %d-%d%s", i, e, eol)
	}
	if rng.IntN(4) == 0 {
		fmt.Fprintf(b, "event: message%s", eol)
	}
	if rng.IntN(6) == 0 {
		fmt.Fprintf(b, "retry: %d%s", rng.IntN(5000), eol)
	}
	if rng.IntN(6) == 0 {
		fmt.Fprintf(b, "x-unknown-field: %d%s", rng.IntN(9), eol)
	}
	if rng.IntN(8) == 0 {
		fmt.Fprintf(b, ":inner comment%s", eol)
	}
	data := randJSON(rng, i*100+e)
	if rng.IntN(3) == 0 && len(data) > 4 {
		// Multi-line data: the same text split over several data lines.
		k := rng.IntN(len(data)-2) + 1
		fmt.Fprintf(b, "data: %s%sdata:%s%s", data[:k], eol, data[k:], eol)
	} else if rng.IntN(10) == 0 {
		fmt.Fprintf(b, "data%s", eol)
	} else {
		fmt.Fprintf(b, "data: %s%s", data, eol)
	}
}

// split cuts b into random pieces.
func split(rng *rand.Rand, b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		n := min(len(b), 1+rng.IntN(200))
		out = append(out, b[:n])
		b = b[n:]
	}
	return out
}

// exchangeCase is one random request and the scripted answer.
type exchangeCase struct {
	method string
	query  string
	header http.Header
	body   []byte
	resp   script
}

func randCase(rng *rand.Rand, i int) exchangeCase {
	c := exchangeCase{method: http.MethodPost, header: http.Header{}, query: fmt.Sprintf("?q=%d&x=%%2F", i)}
	c.header.Set("X-Case", strconv.Itoa(i))
	c.header.Set("Authorization", fmt.Sprintf("Bearer secret-%d", i))
	c.header.Set("Mcp-Session-Id", fmt.Sprintf("sess-%x", rng.Uint64()))
	c.header.Set("MCP-Protocol-Version", []string{"2025-06-18", "2025-11-25", "2026-07-28"}[rng.IntN(3)])
	c.header.Set("Origin", "http://localhost:"+strconv.Itoa(1000+rng.IntN(9000)))
	c.header.Set("Accept", "application/json, text/event-stream")
	sessOut := fmt.Sprintf("srv-%x", rng.Uint64())
	h := http.Header{}
	if rng.IntN(2) == 0 {
		h.Set("Mcp-Session-Id", sessOut)
	}
	switch k := rng.IntN(10); {
	case k < 3: // JSON response
		c.body = []byte(randJSON(rng, i))
		body := []byte(randJSON(rng, i+1))
		if rng.IntN(8) == 0 {
			body = bytes.Repeat(body, 200) // larger than any single buffer
		}
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", strconv.Itoa(len(body)))
		c.resp = script{status: http.StatusOK, header: h, chunks: [][]byte{body}}
	case k < 6: // SSE on a POST
		c.body = []byte(randJSON(rng, i))
		fallthrough
	case k == 6: // a standalone GET stream
		if c.body == nil {
			c.method = http.MethodGet
			c.header.Set("Last-Event-ID", fmt.Sprintf("%d-%d", i, rng.IntN(5)))
		}
		h.Set("Content-Type", []string{"text/event-stream", "text/event-stream; charset=utf-8"}[rng.IntN(2)])
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no")
		b, n := randStream(rng, i)
		c.resp = script{status: http.StatusOK, header: h, chunks: split(rng, b), sse: true, events: n}
	case k == 7: // a notification accepted with 202 and no body
		c.body = []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		c.resp = script{status: http.StatusAccepted, header: h}
	case k == 8: // 4xx with a body
		c.body = []byte(randJSON(rng, i))
		body := []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"case %d"}}`, i))
		if rng.IntN(2) == 0 {
			h.Set("Content-Type", "application/json")
		} else {
			h.Set("Content-Type", "text/plain; charset=utf-8")
			body = []byte("Bad Request: no session\n")
		}
		c.resp = script{status: []int{400, 403, 404, 405, 406, 415}[rng.IntN(6)], header: h, chunks: [][]byte{body}}
	default: // an empty body: a DELETE, or an empty POST answered 200
		if rng.IntN(2) == 0 {
			c.method = http.MethodDelete
		} else {
			c.header.Set("Content-Type", "application/json")
		}
		h.Set("Content-Type", "application/json")
		c.resp = script{status: http.StatusOK, header: h}
	}
	if c.method == http.MethodPost {
		c.header.Set("Content-Type", "application/json")
	}
	return c
}

// scriptedUpstream answers each request with the script named by its
// X-Case header and records what it received.
type scriptedUpstream struct {
	mu    sync.Mutex
	cases map[int]*exchangeCase
	got   map[int]received
}

func (su *scriptedUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), 500)
		return
	}
	i, _ := strconv.Atoi(r.Header.Get("X-Case"))
	su.mu.Lock()
	c := su.cases[i]
	su.got[i] = received{method: r.Method, uri: r.URL.RequestURI(), header: r.Header.Clone(), body: body}
	su.mu.Unlock()
	if c == nil {
		http.Error(w, "unknown case", 500)
		return
	}
	for k, v := range c.resp.header {
		w.Header()[k] = v
	}
	w.WriteHeader(c.resp.status)
	for _, ch := range c.resp.chunks {
		if _, err := w.Write(ch); err != nil {
			return
		}
		if c.resp.sse {
			w.(http.Flusher).Flush()
		}
	}
}

func TestHTTPTransparentWithoutRules(t *testing.T) {
	const n = 400
	rng := rand.New(rand.NewPCG(7, 11))
	su := &scriptedUpstream{cases: map[int]*exchangeCase{}, got: map[int]received{}}
	for i := range n {
		c := randCase(rng, i)
		su.cases[i] = &c
	}
	up := newUpstream(t, su.ServeHTTP)
	p := startHTTPProxy(t, up)
	client := newHTTPClient(t)

	type answer struct {
		status int
		header http.Header
		body   []byte
		length int64
	}
	answers := make([]answer, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range 4 {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				c := su.cases[i]
				var rb io.Reader = http.NoBody
				if c.body != nil {
					rb = bytes.NewReader(c.body)
				}
				req, err := http.NewRequest(c.method, p.URL()+c.query, rb)
				if err != nil {
					errs <- err
					return
				}
				req.Header = c.header.Clone()
				resp, err := client.Do(req)
				if err != nil {
					errs <- fmt.Errorf("case %d: %w", i, err)
					return
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					errs <- fmt.Errorf("case %d: reading: %w", i, err)
					return
				}
				answers[i] = answer{resp.StatusCode, resp.Header, b, resp.ContentLength}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	// Map each case to its stream name through the recorded request head.
	entries := p.Transcript().Entries()
	streamOf := map[int]string{}
	for _, e := range entries {
		if e.Kind == EntryHTTP && e.Dir == ClientToServer {
			i, _ := strconv.Atoi(e.HTTP.Header["X-Case"][0])
			streamOf[i] = e.Stream
			if got := e.HTTP.Header["Authorization"]; len(got) != 1 || got[0] != "[redacted]" {
				t.Errorf("case %d: Authorization in the transcript = %q", i, got)
			}
		}
	}
	type seen struct {
		c2s, s2c [][]byte
		partial  []byte
	}
	byStream := map[string]*seen{}
	for _, e := range entries {
		s := byStream[e.Stream]
		if s == nil {
			s = &seen{}
			byStream[e.Stream] = s
		}
		switch {
		case e.Kind == EntryMessage && e.Dir == ClientToServer:
			s.c2s = append(s.c2s, e.Raw)
		case e.Kind == EntryMessage && e.Dir == ServerToClient:
			s.s2c = append(s.s2c, e.Raw)
		case e.Kind == EntryNote && strings.Contains(e.Text, "incomplete event"):
			s.partial = e.Raw
		}
	}

	kinds := map[string]int{}
	for i := range n {
		c, a := su.cases[i], answers[i]
		want := c.resp.body()
		// The upstream saw the request as the client sent it.
		got := su.got[i]
		if got.method != c.method || got.uri != "/mcp"+c.query {
			t.Errorf("case %d: upstream saw %s %s, want %s /mcp%s", i, got.method, got.uri, c.method, c.query)
		}
		if !bytes.Equal(got.body, c.body) {
			t.Errorf("case %d: upstream body %q, want %q", i, got.body, c.body)
		}
		for _, k := range []string{"Mcp-Session-Id", "MCP-Protocol-Version", "Origin", "Last-Event-ID", "Authorization", "Content-Type", "Accept"} {
			if g, w := got.header.Values(k), c.header.Values(k); !slices.Equal(g, w) {
				t.Errorf("case %d: upstream header %s = %q, want %q", i, k, g, w)
			}
		}
		// The client got the response as the upstream sent it.
		if a.status != c.resp.status {
			t.Errorf("case %d: status %d, want %d", i, a.status, c.resp.status)
		}
		for _, k := range []string{"Content-Type", "Mcp-Session-Id", "Cache-Control", "X-Accel-Buffering"} {
			if g, w := a.header.Values(k), c.resp.header.Values(k); !slices.Equal(g, w) {
				t.Errorf("case %d: response header %s = %q, want %q", i, k, g, w)
			}
		}
		if !bytes.Equal(a.body, want) {
			t.Errorf("case %d: body differs:\n got %q\nwant %q", i, a.body, want)
		}
		if !c.resp.sse && len(want) > 0 && a.length != int64(len(want)) {
			t.Errorf("case %d: Content-Length %d, want %d", i, a.length, len(want))
		}
		// The transcript holds every message of the exchange.
		s := byStream[streamOf[i]]
		if s == nil {
			t.Errorf("case %d: no transcript for its stream", i)
			continue
		}
		if len(s.c2s) != 1 || !bytes.Equal(s.c2s[0], c.body) {
			t.Errorf("case %d: request messages in the transcript: %q", i, s.c2s)
		}
		switch {
		case c.resp.sse:
			kinds["sse"]++
			if len(s.s2c) != c.resp.events {
				t.Errorf("case %d: %d events recorded, want %d", i, len(s.s2c), c.resp.events)
			}
			rec := append(bytes.Join(s.s2c, nil), s.partial...)
			if !bytes.HasPrefix(want, rec) {
				t.Errorf("case %d: recorded events are not the stream:\n got %q\nwant %q", i, rec, want)
			}
			// What no message carries can only be the blank lines (and
			// BOM) that ended the stream.
			if rest := want[len(rec):]; len(bytes.Trim(rest, "\r\n\xef\xbb\xbf")) > 0 {
				t.Errorf("case %d: stream bytes not in the transcript: %q", i, rest)
			}
			if s.partial != nil {
				kinds["incomplete"]++
			}
		case len(want) > 0:
			kinds[fmt.Sprint(c.resp.status)[:1]+"xx body"]++
			if len(s.s2c) != 1 || !bytes.Equal(s.s2c[0], want) {
				t.Errorf("case %d: response messages in the transcript: %d", i, len(s.s2c))
			}
		default:
			kinds["empty"]++
			if len(s.s2c) != 0 {
				t.Errorf("case %d: empty body recorded as %d messages", i, len(s.s2c))
			}
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	t.Logf("exchange kinds: %v", kinds)
	for _, k := range []string{"sse", "incomplete", "2xx body", "4xx body", "empty"} {
		if kinds[k] == 0 {
			t.Errorf("the generator produced no %q exchange", k)
		}
	}
	var jl bytes.Buffer
	if err := p.Transcript().WriteJSONL(&jl); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(jl.Bytes(), []byte("secret-")) {
		t.Error("an Authorization value leaked into the transcript")
	}
}

// ---------------------------------------------------------------------
// Streaming behaviour with no rule.

func TestHTTPFlushesEachEvent(t *testing.T) {
	// The upstream writes one event, then waits until the test has seen
	// that very event at the client: any buffering in the proxy deadlocks
	// this handshake (bounded by `wait`).
	seen := make([]chan struct{}, 3)
	for i := range seen {
		seen[i] = make(chan struct{})
	}
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		sseHead(w)
		for i := range seen {
			sendEvent(w, note(fmt.Sprintf("e%d", i)))
			if !waitOn(r, seen[i]) {
				return
			}
		}
	})
	p := startHTTPProxy(t, up)
	resp := post(t, newHTTPClient(t), p.URL(), `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`)
	es := readEvents(resp.Body)
	for i := range seen {
		if got := methodsOf(es.next(t)); got[0] != fmt.Sprintf("e%d", i) {
			t.Fatalf("event %d: %v", i, got)
		}
		close(seen[i])
	}
	if err := es.end(t); !errors.Is(err, io.EOF) {
		t.Fatalf("stream ended with %v", err)
	}
}

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
	resp := post(t, newHTTPClient(t), p.URL(), `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`)
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
	resp := post(t, newHTTPClient(t), p.URL(), `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`)
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
	resp := post(t, newHTTPClient(t), p.URL(), `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`)
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != `{"jsonrpc":"2.0","id":1,` || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("client read %q and %v; want the partial body and an unexpected EOF", b, err)
	}
	if !hasNote(p.Transcript(), "reading the response body") {
		t.Fatal("truncated body not recorded")
	}
}

// ---------------------------------------------------------------------
// Faults.

// progressUpstream answers every POST with an event stream of the given
// notifications, then the response to id 1, then ends.
func progressUpstream(t testing.TB, methods ...string) *httptest.Server {
	return newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		sseHead(w)
		for _, m := range methods {
			sendEvent(w, note(m))
		}
		sendEvent(w, sse.Encode(sse.Event{Data: `{"jsonrpc":"2.0","id":1,"result":{}}`, HasData: true}))
	})
}

func TestHTTPDropEvent(t *testing.T) {
	up := progressUpstream(t, "a", "b", "c")
	p := startHTTPProxy(t, up, Rule{Name: "lose-b", Match: Match{Dir: ServerToClient, Method: "b"}, Fault: Drop{}})
	resp := post(t, newHTTPClient(t), p.URL(), `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`)
	es := readEvents(resp.Body)
	got := methodsOf(es.next(t), es.next(t), es.next(t))
	if strings.Join(got, ",") != "a,c," {
		t.Fatalf("events %q, want a, c and the response", got)
	}
	if err := es.end(t); !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	if !hasFault(p.Transcript(), "lose-b", "drop") {
		t.Fatal("drop not recorded")
	}
}

func TestHTTPDropJSONResponse(t *testing.T) {
	var calls atomic.Int32
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":5,"result":{"done":true}}`)
	})
	p := startHTTPProxy(t, up, Rule{Name: "lose", Match: Match{Dir: ServerToClient, Kind: jsonrpc.Response}, Fault: Drop{}})
	resp := post(t, newHTTPClient(t), p.URL(), `{"jsonrpc":"2.0","id":5,"method":"tools/call"}`)
	body := readAll(t, resp)
	// The server answered; the client gets an event stream that ends with
	// no event: the response was lost in transit.
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" || len(body) != 0 {
		t.Fatalf("client got %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	if calls.Load() != 1 {
		t.Fatalf("upstream called %d times", calls.Load())
	}
	if !hasFault(p.Transcript(), "lose", "drop") || !hasNote(p.Transcript(), "response lost in transit") {
		t.Fatal("drop not recorded")
	}
}

func TestHTTPDropClientMessages(t *testing.T) {
	var calls atomic.Int32
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { calls.Add(1) })
	p := startHTTPProxy(t, up, Rule{Name: "lose", Match: Match{Dir: ClientToServer}, Fault: Drop{}})
	c := newHTTPClient(t)
	// A lost request: an event stream that ends with no event.
	resp := post(t, c, p.URL(), `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`)
	if b := readAll(t, resp); resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" || len(b) != 0 {
		t.Fatalf("lost request answered %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	// A lost notification: 202, as if accepted.
	resp = post(t, c, p.URL(), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
	if readAll(t, resp); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("lost notification answered %d", resp.StatusCode)
	}
	if calls.Load() != 0 {
		t.Fatalf("upstream saw %d requests", calls.Load())
	}
}

func TestHTTPDelayEvent(t *testing.T) {
	const d = 300 * time.Millisecond
	up := progressUpstream(t, "a", "b", "c")
	p := startHTTPProxy(t, up, Rule{Name: "late-a", Match: Match{Dir: ServerToClient, Method: "a"}, Fault: Delay{For: d}})
	start := time.Now()
	resp := post(t, newHTTPClient(t), p.URL(), `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`)
	es := readEvents(resp.Body)
	got := methodsOf(es.next(t), es.next(t), es.next(t), es.next(t))
	if strings.Join(got, ",") != "b,c,,a" {
		t.Fatalf("events %q: the delayed event should arrive last", got)
	}
	if el := time.Since(start); el < d {
		t.Fatalf("delayed event arrived after %s", el)
	}
	if err := es.end(t); !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	if !hasFault(p.Transcript(), "late-a", "release") {
		t.Fatal("release not recorded")
	}
}

func TestHTTPDelayClientPost(t *testing.T) {
	const d = 250 * time.Millisecond
	arrived := make(chan time.Time, 1)
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		arrived <- time.Now()
		w.WriteHeader(http.StatusAccepted)
	})
	p := startHTTPProxy(t, up, Rule{Name: "slow", Match: Match{Dir: ClientToServer, Method: "notifications/x"}, Fault: Delay{For: d}})
	start := time.Now()
	resp := post(t, newHTTPClient(t), p.URL(), `{"jsonrpc":"2.0","method":"notifications/x"}`)
	readAll(t, resp)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if at := <-arrived; at.Sub(start) < d {
		t.Fatalf("upstream got the POST after %s, want ≥ %s", at.Sub(start), d)
	}
}

func TestHTTPHoldPostUntilEventOnAnotherStream(t *testing.T) {
	// The client's cancellation (a POST) is held until the event "go" has
	// passed on the standalone GET stream: the upstream must see them in
	// that order, whatever the timing.
	var mu sync.Mutex
	var order []string
	log := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	sendGo := make(chan struct{})
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			sseHead(w)
			sendEvent(w, note("hello"))
			if !waitOn(r, sendGo) {
				return
			}
			log("go sent")
			sendEvent(w, note("go"))
			<-r.Context().Done()
			return
		}
		log("post received")
		w.WriteHeader(http.StatusAccepted)
	})
	p := startHTTPProxy(t, up, Rule{
		Name:  "late-cancel",
		Match: Match{Dir: ClientToServer, Method: "notifications/cancelled"},
		Fault: HoldUntil{Until: Match{Dir: ServerToClient, Method: "go"}},
	})
	c := newHTTPClient(t)
	req, _ := http.NewRequest(http.MethodGet, p.URL(), nil)
	req.Header.Set("Accept", "text/event-stream")
	gresp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	es := readEvents(gresp.Body)
	es.next(t) // hello

	posted := make(chan *http.Response, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, p.URL(), strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`))
		resp, err := c.Do(req)
		if err != nil {
			posted <- nil
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		posted <- resp
	}()
	waitTranscript(t, p.Transcript(), "the hold", faultEntry("late-cancel", "hold"))
	mu.Lock()
	early := slices.Clone(order)
	mu.Unlock()
	if len(early) != 0 {
		t.Fatalf("upstream saw %v while the POST was held", early)
	}
	close(sendGo)
	if got := methodsOf(es.next(t)); got[0] != "go" {
		t.Fatalf("GET stream event %v", got)
	}
	select {
	case resp := <-posted:
		if resp == nil || resp.StatusCode != http.StatusAccepted {
			t.Fatalf("held POST answered %v", resp)
		}
	case <-time.After(wait):
		t.Fatal("held POST never answered")
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(order, ",") != "go sent,post received" {
		t.Fatalf("upstream order %v", order)
	}
	if !hasFault(p.Transcript(), "late-cancel", "release") {
		t.Fatal("release not recorded")
	}
	gresp.Body.Close()
}

func TestHTTPHoldEventUntilLaterEvent(t *testing.T) {
	up := progressUpstream(t, "first", "second", "third")
	p := startHTTPProxy(t, up, Rule{
		Name:  "swap",
		Match: Match{Dir: ServerToClient, Method: "first"},
		Fault: HoldUntil{Until: Match{Dir: ServerToClient, Method: "second"}},
	})
	resp := post(t, newHTTPClient(t), p.URL(), `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`)
	es := readEvents(resp.Body)
	got := methodsOf(es.next(t), es.next(t), es.next(t), es.next(t))
	// The released event may be overtaken by later ones too, but never
	// comes before its trigger.
	if got[0] != "second" || slices.Index(got, "first") < 1 || len(slices.Compact(slices.Sorted(slices.Values(got)))) != 4 {
		t.Fatalf("events %q, want second first and the held event after it", got)
	}
	if err := es.end(t); !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
}

func TestHTTPDuplicatePost(t *testing.T) {
	var calls atomic.Int32
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"result":{"n":%d}}`, n)
	})
	p := startHTTPProxy(t, up, Rule{Name: "twice", Match: Match{Dir: ClientToServer, Method: "tools/call"}, Fault: Duplicate{}})
	resp := post(t, newHTTPClient(t), p.URL(), `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`)
	if b := readAll(t, resp); string(b) != `{"jsonrpc":"2.0","id":1,"result":{"n":1}}` {
		t.Fatalf("client got %q, want the first answer only", b)
	}
	if calls.Load() != 2 {
		t.Fatalf("upstream saw the POST %d times, want 2", calls.Load())
	}
	if !hasNote(p.Transcript(), "answer to the duplicate") {
		t.Fatal("the duplicate's answer was not recorded")
	}
}

func TestHTTPInjectTowardClient(t *testing.T) {
	const extra = `{"jsonrpc":"2.0","method":"notifications/injected"}`
	up := progressUpstream(t, "a", "b")
	p := startHTTPProxy(t, up, Rule{Name: "add", Match: Match{Dir: ServerToClient, Method: "a"}, Fault: Inject{Raw: []byte(extra)}})
	resp := post(t, newHTTPClient(t), p.URL(), `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`)
	es := readEvents(resp.Body)
	a, inj, b := es.next(t), es.next(t), es.next(t)
	if got := methodsOf(a, inj, b); strings.Join(got, ",") != "a,notifications/injected,b" {
		t.Fatalf("events %q", got)
	}
	if string(inj.Raw) != "data: "+extra+"\n\n" {
		t.Fatalf("injected event %q", inj.Raw)
	}
	es.next(t)
	if err := es.end(t); !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
}

func TestHTTPInjectOnRequestStream(t *testing.T) {
	// Matched on the client's request, a synthetic server message goes out
	// as the first event of that request's response stream, after the
	// stream's head.
	const extra = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}`
	up := progressUpstream(t, "a")
	p := startHTTPProxy(t, up, Rule{Name: "early", Match: Match{Dir: ClientToServer, Method: "tools/call"},
		Fault: Inject{Dir: ServerToClient, Raw: []byte(extra), Before: true}})
	resp := post(t, newHTTPClient(t), p.URL(), `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	es := readEvents(resp.Body)
	if got := methodsOf(es.next(t), es.next(t), es.next(t)); strings.Join(got, ",") != "notifications/message,a," {
		t.Fatalf("events %q", got)
	}
	if err := es.end(t); !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}

	// Replacing the request instead: the server never sees it, and the
	// client's stream carries only the synthetic answer.
	var calls atomic.Int32
	up2 := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { calls.Add(1) })
	const fake = `{"jsonrpc":"2.0","id":2,"result":{"fake":true}}`
	p2 := startHTTPProxy(t, up2, Rule{Name: "fake", Match: Match{Dir: ClientToServer, Method: "tools/call"},
		Fault: Inject{Dir: ServerToClient, Raw: []byte(fake), Replace: true}})
	resp = post(t, newHTTPClient(t), p2.URL(), `{"jsonrpc":"2.0","id":2,"method":"tools/call"}`)
	if b := readAll(t, resp); string(b) != "data: "+fake+"\n\n" || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("client got %q %q", resp.Header.Get("Content-Type"), b)
	}
	if calls.Load() != 0 {
		t.Fatal("the replaced request reached the server")
	}
}

func TestHTTPInjectTowardServer(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, r.Header.Get("Mcp-Session-Id")+" "+jsonrpc.Parse(b).Method)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	})
	const extra = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`
	p := startHTTPProxy(t, up, Rule{Name: "add", Match: Match{Dir: ClientToServer, Method: "tools/call"}, Fault: Inject{Raw: []byte(extra)}})
	resp := post(t, newHTTPClient(t), p.URL(), `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, "Mcp-Session-Id", "s1")
	if b := readAll(t, resp); string(b) != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Fatalf("client got %q", b)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(seen, ",") != "s1 tools/call,s1 notifications/cancelled" {
		t.Fatalf("upstream saw %q", seen)
	}
	if !hasNote(p.Transcript(), "answer to the injected message") {
		t.Fatal("injected message's answer not recorded")
	}
}

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
	resp := post(t, newHTTPClient(t), p.URL(), `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`)
	b := readAll(t, resp) // a clean end: readAll fails on an error
	if string(b) != string(note("a")) {
		t.Fatalf("client got %q, want only the first event", b)
	}
	select {
	case <-gone:
	case <-time.After(wait):
		t.Fatal("upstream did not see the disconnect")
	}
	if !hasFault(p.Transcript(), "cut", "cut") || !hasNote(p.Transcript(), "stream cut") {
		t.Fatal("cut not recorded")
	}
}

func TestHTTPCutBeforeEvent(t *testing.T) {
	gone := make(chan struct{})
	up := blockingUpstream(t, gone, note("a"), note("b"))
	p := startHTTPProxy(t, up, Rule{Name: "cut", Match: Match{Dir: ServerToClient, Method: "b"}, Fault: Cut{}})
	resp := post(t, newHTTPClient(t), p.URL(), `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`)
	if b := readAll(t, resp); string(b) != string(note("a")) {
		t.Fatalf("client got %q", b)
	}
	select {
	case <-gone:
	case <-time.After(wait):
		t.Fatal("upstream did not see the disconnect")
	}
}

func TestHTTPResetMidStream(t *testing.T) {
	gone := make(chan struct{})
	up := blockingUpstream(t, gone, note("a"), note("b"))
	p := startHTTPProxy(t, up, Rule{Name: "rst", Match: Match{Dir: ServerToClient, Method: "b"}, Fault: Reset{}})
	resp := post(t, newHTTPClient(t), p.URL(), `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`)
	es := readEvents(resp.Body)
	es.next(t)
	err := es.end(t)
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, sse.ErrIncomplete) {
		t.Fatalf("stream ended with %v, want a connection error", err)
	}
	select {
	case <-gone:
	case <-time.After(wait):
		t.Fatal("upstream did not see the disconnect")
	}
	if !hasFault(p.Transcript(), "rst", "reset") {
		t.Fatal("reset not recorded")
	}
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
	resp := post(t, newHTTPClient(t), p.URL(), `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`)
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
	resp := post(t, newHTTPClient(t), p.URL(), `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`)
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
	resp := post(t, newHTTPClient(t), p.URL(), `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`)
	b := readAll(t, resp)
	if resp.StatusCode != 404 || !strings.Contains(string(b), "Session not found") || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("client got %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	if calls.Load() != 0 {
		t.Fatal("the request was forwarded")
	}
	if !hasFault(p.Transcript(), "gone", "status") {
		t.Fatal("status not recorded")
	}
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
	resp := post(t, newHTTPClient(t), p.URL(), `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`)
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
	resp := post(t, newHTTPClient(t), p.URL(), `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`)
	b := readAll(t, resp)
	if resp.StatusCode != 200 || string(b) != string(note("a")) {
		t.Fatalf("client got %d %q", resp.StatusCode, b)
	}
	select {
	case <-gone:
	case <-time.After(wait):
		t.Fatal("upstream did not see the disconnect")
	}
	waitTranscript(t, p.Transcript(), "the status-turned-cut", func(es []Entry) bool {
		for _, e := range es {
			if e.Kind == EntryFault && e.Rule == "late" && strings.Contains(e.Text, "stream cut instead") {
				return true
			}
		}
		return false
	})
}

func TestParseHTTPRules(t *testing.T) {
	rules, err := ParseRules([]byte(`
rules:
  - name: cut-progress
    match: {dir: s2c, method: notifications/progress}
    nth: 2
    fault: {cut: true, deliver: true}
  - name: rst
    match: {dir: s2c, httpMethod: GET}
    fault: {reset: true}
  - name: nginx
    match: {dir: s2c, comment: true}
    times: 1
    fault: {buffer: 4096}
  - name: nginx-all
    match: {dir: s2c}
    fault: {buffer: 0}
  - name: slow
    match: {dir: s2c}
    fault: {throttle: 2000}
  - name: expired
    match: {dir: c2s, method: tools/call}
    fault: {status: 404, body: '{"error":"no session"}'}
  - name: accepted
    match: {dir: c2s}
    fault: {status: 202}
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 7 {
		t.Fatalf("%d rules", len(rules))
	}
	if c, ok := rules[0].Fault.(Cut); !ok || !c.Deliver || rules[0].Nth != 2 {
		t.Errorf("rule 0: %+v %+v", rules[0], rules[0].Fault)
	}
	if _, ok := rules[1].Fault.(Reset); !ok || rules[1].Match.HTTPMethod != "GET" {
		t.Errorf("rule 1: %+v", rules[1])
	}
	if b, ok := rules[2].Fault.(Buffer); !ok || b.Bytes != 4096 || !rules[2].Match.Comment || rules[2].Times != 1 {
		t.Errorf("rule 2: %+v", rules[2])
	}
	if b, ok := rules[3].Fault.(Buffer); !ok || b.Bytes != 0 {
		t.Errorf("rule 3: %+v", rules[3].Fault)
	}
	if th, ok := rules[4].Fault.(Throttle); !ok || th.BytesPerSecond != 2000 {
		t.Errorf("rule 4: %+v", rules[4].Fault)
	}
	if s, ok := rules[5].Fault.(Status); !ok || s.Code != 404 || string(s.Body) != `{"error":"no session"}` {
		t.Errorf("rule 5: %+v", rules[5].Fault)
	}
	if s, ok := rules[6].Fault.(Status); !ok || s.Code != 202 || len(s.Body) != 0 {
		t.Errorf("rule 6: %+v", rules[6].Fault)
	}
	for name, doc := range map[string]string{
		"neg buffer":   "rules: [{name: a, fault: {buffer: -1}}]",
		"neg throttle": "rules: [{name: a, fault: {throttle: -5}}]",
		"low status":   "rules: [{name: a, fault: {status: 99}}]",
		"high status":  "rules: [{name: a, fault: {status: 600}}]",
		"two faults":   "rules: [{name: a, fault: {cut: true, reset: true}}]",
		"cut typo":     "rules: [{name: a, fault: {cut: true, delivr: true}}]",
		"buffer text":  "rules: [{name: a, fault: {buffer: lots}}]",
	} {
		if _, err := ParseRules([]byte(doc)); err == nil {
			t.Errorf("%s: accepted %q", name, doc)
		} else if !strings.Contains(err.Error(), "rule file") {
			t.Errorf("%s: error lacks context: %v", name, err)
		}
	}
}

// ---------------------------------------------------------------------
// Lifetime.

func TestHTTPCloseWithOpenStreamsAndHeldMessages(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			sseHead(w)
			sendEvent(w, note("hello"))
			<-r.Context().Done() // until the proxy goes
			return
		}
		w.WriteHeader(http.StatusAccepted)
	})
	rs := NewRules()
	_ = rs.Set(Rule{Name: "forever", Match: Match{Dir: ClientToServer, HTTPMethod: http.MethodPost},
		Fault: HoldUntil{Until: Match{Method: "never"}, Max: time.Minute}})
	p, err := StartHTTP(context.Background(), HTTPOptions{Upstream: up.URL + "/mcp", Rules: rs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	c := newHTTPClient(t)
	var streams []*evStream
	for range 3 {
		req, _ := http.NewRequest(http.MethodGet, p.URL(), nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		es := readEvents(resp.Body)
		es.next(t)
		streams = append(streams, es)
	}
	posted := make(chan error, 2)
	for range 2 {
		go func() {
			resp, err := c.Post(p.URL(), "application/json", strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/x"}`))
			if err == nil {
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			posted <- err
		}()
	}
	waitTranscript(t, p.Transcript(), "two held POSTs", func(es []Entry) bool {
		n := 0
		for _, e := range es {
			if e.Kind == EntryFault && e.Fault == "hold" {
				n++
			}
		}
		return n == 2
	})
	start := time.Now()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("Close took %s", el)
	}
	for _, es := range streams {
		es.end(t) // ended, one way or another
	}
	for range 2 {
		select {
		case <-posted:
		case <-time.After(wait):
			t.Fatal("a held POST was left hanging after Close")
		}
	}
	if hasNote(p.Transcript(), "did not drain") {
		t.Fatal("handlers did not drain")
	}
	// goleak (TestMain) checks that nothing the proxy started outlives it.
}

func TestHTTPCloseReleasesUpstreamConnections(t *testing.T) {
	// The upstream outlives the proxy (as a real server does): Close must
	// not leave the proxy's idle keep-alive connections to it open, each
	// with its goroutines on both sides.
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	})
	before := goleak.IgnoreCurrent()
	p, err := StartHTTP(context.Background(), HTTPOptions{Upstream: up.URL + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{DisableCompression: true}
	c := &http.Client{Transport: tr, Timeout: wait}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			resp, err := c.Post(p.URL(), "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	tr.CloseIdleConnections()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := goleak.Find(before); err != nil {
		t.Fatalf("after Close: %v", err)
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

package faultproxy

// Transparency with no rule: a seeded property test (scripted upstreams
// of random exchanges), and streaming with no rule.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcp-conform/mcp-conform/sse"
)

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
	resp := postCall(t, p)
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

package faultproxy

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// The proxy's own HTTP/1.1 server (httpserve.go) and upstream connections
// (httpupstream.go): what net/http did for the proxy before, it must still
// do.

// TestHTTPClientCloseCancelsUpstreamWhileEventsHeld: the client goes away
// while a fault holds the stream's events; the server sees its request
// cancelled at once, not when the held events are let go.
func TestHTTPClientCloseCancelsUpstreamWhileEventsHeld(t *testing.T) {
	cancelled := make(chan struct{})
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		sseHead(w)
		for i := 0; ; i++ {
			sendEvent(w, note(fmt.Sprint("e", i)))
			select {
			case <-r.Context().Done():
				close(cancelled)
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
	p := startHTTPProxy(t, up, Rule{Name: "hold", Match: Match{Dir: ServerToClient}, Fault: Delay{For: time.Minute}})
	resp := postCall(t, p)
	waitTranscript(t, p.Transcript(), "a held event", func(es []Entry) bool {
		return slices.ContainsFunc(es, func(e Entry) bool { return e.Kind == EntryFault && e.Outcome == OutcomeHeld })
	})
	resp.Body.Close()
	select {
	case <-cancelled:
	case <-time.After(wait):
		t.Fatal("the upstream request was not cancelled when the client went away")
	}
}

// TestHTTPRelaysJSONBodiesOfUnknownLength: an upstream JSON answer without
// a Content-Length (chunked), short and longer than what the server holds
// back before its head, reaches the client whole, with a length or
// chunked, and the connection carries the next exchange.
func TestHTTPRelaysJSONBodiesOfUnknownLength(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		n := len(r.URL.Query().Get("n"))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush() // no Content-Length: chunked
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"result":{"pad":"%s"}}`, strings.Repeat("x", n*1000))
	})
	p := startHTTPProxy(t, up)
	c := newHTTPClient(t)
	for _, n := range []int{0, 1, 5, 20, 70} {
		resp := post(t, c, p.URL()+"?n="+strings.Repeat("k", n), `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"result":{"pad":"%s"}}`, strings.Repeat("x", n*1000))
		if err != nil || string(b) != want {
			t.Fatalf("n=%d: read %d bytes (%v), want %d", n, len(b), err, len(want))
		}
		if resp.ContentLength >= 0 && resp.ContentLength != int64(len(want)) {
			t.Fatalf("n=%d: Content-Length %d for %d bytes", n, resp.ContentLength, len(want))
		}
	}
}

// rawExchange writes req on a new connection to the proxy and returns
// what came back before the proxy closed the connection or wait passed.
func rawExchange(t *testing.T, p *HTTP, req string, closeAfter time.Duration) string {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Written beside the read: a proxy that answers before it read it all
	// must not block the test.
	go func() { _, _ = io.WriteString(c, req) }()
	_ = c.SetReadDeadline(time.Now().Add(closeAfter))
	b, _ := io.ReadAll(c)
	return string(b)
}

func TestHTTPServerSpeaksHTTP11(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Seen-Host", r.Host)
		_, _ = w.Write(b)
	})
	p := startHTTPProxy(t, up)
	body := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	post := func(extra, proto string) string {
		return fmt.Sprintf("POST /mcp %s\r\nHost: x\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n%s", proto, extra, len(body), body)
	}
	t.Run("keep-alive, several exchanges on one connection", func(t *testing.T) {
		got := rawExchange(t, p, post("", "HTTP/1.1")+post("", "HTTP/1.1")+post("Connection: close\r\n", "HTTP/1.1"), wait)
		if n := strings.Count(got, "HTTP/1.1 200 OK\r\n"); n != 3 || strings.Count(got, body) != 3 {
			t.Fatalf("%d answers:\n%s", n, got)
		}
		if !strings.Contains(got, "Connection: close\r\n") {
			t.Errorf("the last answer does not say the connection closes:\n%s", got)
		}
	})
	t.Run("HTTP/1.0 gets a response that ends with the connection", func(t *testing.T) {
		got := rawExchange(t, p, post("", "HTTP/1.0"), wait)
		if !strings.HasPrefix(got, "HTTP/1.1 200 OK\r\n") || !strings.HasSuffix(got, body) {
			t.Fatalf("got:\n%s", got)
		}
	})
	t.Run("Expect: 100-continue", func(t *testing.T) {
		got := rawExchange(t, p, post("Expect: 100-continue\r\n", "HTTP/1.1")+post("Connection: close\r\n", "HTTP/1.1"), wait)
		if !strings.HasPrefix(got, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n") || strings.Count(got, body) != 2 {
			t.Fatalf("got:\n%s", got)
		}
	})
	t.Run("a chunked request body", func(t *testing.T) {
		req := fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(body), body)
		got := rawExchange(t, p, req, wait)
		if !strings.HasPrefix(got, "HTTP/1.1 200 OK\r\n") || !strings.HasSuffix(got, body) {
			t.Fatalf("got:\n%s", got)
		}
	})
	t.Run("the upstream gets its own Host and the client's fields", func(t *testing.T) {
		got := rawExchange(t, p, post("Connection: close\r\n", "HTTP/1.1"), wait)
		if !strings.Contains(got, "X-Seen-Host: "+strings.TrimPrefix(up.URL, "http://")+"\r\n") {
			t.Fatalf("got:\n%s", got)
		}
	})
	for name, req := range map[string]string{
		"a malformed request line": "POST\r\n\r\n",
		"no Host":                  "GET /mcp HTTP/1.1\r\n\r\n",
		"two Host fields":          "GET /mcp HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
		"a bad field name":         "GET /mcp HTTP/1.1\r\nHost: a\r\nBad Name: v\r\n\r\n",
	} {
		t.Run(name+" gets 400", func(t *testing.T) {
			if got := rawExchange(t, p, req, wait); !strings.HasPrefix(got, "HTTP/1.1 400 Bad Request\r\n") {
				t.Fatalf("got:\n%q", got)
			}
		})
	}
	t.Run("a head over net/http's limit gets 431", func(t *testing.T) {
		req := "GET /mcp HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("b", 2<<20) + "\r\n\r\n"
		if got := rawExchange(t, p, req, wait); !strings.HasPrefix(got, "HTTP/1.1 431 Request Header Fields Too Large\r\n") {
			t.Fatalf("got:\n%.200q", got)
		}
	})
	t.Run("the transcript has no Host field", func(t *testing.T) {
		for _, e := range p.Transcript().Entries() {
			if e.Kind == EntryHTTP && e.Dir == ClientToServer {
				if _, ok := e.HTTP.Header["Host"]; ok {
					t.Fatalf("request head in the transcript with a Host field: %v", e.HTTP.Header)
				}
			}
		}
	})
}

// TestHTTPUpstreamConnectionClosedByServer: the server closes an idle
// keep-alive connection between two exchanges; the next exchange goes on a
// new connection, the client sees nothing of it.
func TestHTTPUpstreamConnectionClosedByServer(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	})
	p := startHTTPProxy(t, up)
	c := newHTTPClient(t)
	for i := range 3 {
		resp := post(t, c, p.URL(), `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !bytes.Contains(b, []byte(`"result"`)) {
			t.Fatalf("exchange %d: %d %s", i, resp.StatusCode, b)
		}
		up.CloseClientConnections() // the server drops its idle connections
		time.Sleep(2 * probeIdle)
	}
}

// TestHTTPServerReadsSlowHeads: a request head that arrives in pieces is
// read (by the standard library) once whole.
func TestHTTPServerReadsSlowHeads(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) })
	p := startHTTPProxy(t, up)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, part := range []string{"POST /mcp HTTP/1.1\r\nHo", "st: x\r\nContent-Le", "ngth: 2\r\n\r\n{}"} {
		_, _ = io.WriteString(c, part)
		time.Sleep(20 * time.Millisecond)
	}
	_ = c.SetReadDeadline(time.Now().Add(wait))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("%v %v", resp, err)
	}
}

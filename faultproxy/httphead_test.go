package faultproxy

import (
	"bufio"
	"bytes"
	"io"
	"maps"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

// Heads the fast path must read (what MCP clients and servers send), and
// heads it must leave to the standard library.
var (
	fastRequests = []string{
		"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: Go-http-client/1.1\r\nContent-Length: 13\r\nAccept: application/json, text/event-stream\r\n" +
			"Content-Type: application/json\r\nMcp-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: abc\r\n\r\n{\"jsonrpc\":1}",
		"GET /mcp?x=1&y=%20z HTTP/1.1\r\nHost: localhost\r\naccept: text/event-stream\r\nlast-event-id: 7\r\nX-Custom_Thing: a\r\nx-custom_thing:  b \t\r\n\r\n",
		"DELETE /mcp HTTP/1.1\r\nHost: [::1]:9\r\nMcp-Session-Id: s\r\nAuthorization: Bearer t\r\n\r\n",
		"POST /a/b%2Fc HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\nGET / HTTP/1.1\r\n",
	}
	slowRequests = []string{
		"POST /mcp HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
		"POST /mcp HTTP/1.0\r\nHost: h\r\nContent-Length: 1\r\n\r\nx",
		"GET /mcp HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
		"GET /mcp HTTP/1.1\r\nHost: h\r\nX: a\r\n  folded\r\n\r\n",
		"GET http://h/mcp HTTP/1.1\r\nHost: h\r\n\r\n",
		"GET /mcp HTTP/1.1\r\nHost: h\r\nHost: i\r\n\r\n",
		"GET /mcp HTTP/1.1\r\nX: y\r\n\r\n",
		"POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx",
		"POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Length: +1\r\n\r\nx",
		"POST /mcp HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nx",
		"GET /mcp HTTP/1.1\r\nHost: h\r\nPragma: no-cache\r\n\r\n",
		"GET /mcp HTTP/1.1\r\nHost: h\r\nBad Key: v\r\n\r\n",
		"GET /mcp HTTP/1.1\r\nHost: h\r\nK: caf\xc3\xa9\r\n\r\n",
		"GET /mcp HTTP/1.1\nHost: h\n\n",
		"get /mcp HTTP/1.1\r\nHost: h\r\n\r\n",
		"GET /mcp HTTP/1.1\r\nHost: h\r\n", // not whole yet
	}
	fastResponses = []string{
		"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nDate: Mon, 01 Dec 2026 10:00:00 GMT\r\nMcp-Session-Id: s\r\n\r\n{}",
		"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 204 No Content\r\nX: y\r\n\r\n",
		"HTTP/1.1 404 Not Found\r\nContent-Type: text/plain; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\nContent-Length: 10\r\n\r\nnot found\n",
		"HTTP/1.1 299 \r\nContent-Length: 1\r\n\r\nxHTTP/1.1 200 OK\r\n",
		"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\nHTTP/1.1 200 OK\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nc8\r\n" + strings.Repeat("d", 200) + "\r\n3;ext=1\r\nabc\r\n0\r\nX-Trailer: t\r\n\r\nnext",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel",
	}
	slowResponses = []string{
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
		"HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\nuntil close",
		"HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx",
		"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n",
	}
)

func bufferedReader(in string) *bufio.Reader {
	br := bufio.NewReaderSize(strings.NewReader(in), 64<<10)
	_, _ = br.Peek(1)
	return br
}

// requestSame compares a request the fast path read with the library's
// reading of the same bytes; it reports whether the fast path read it.
func requestSame(t *testing.T, in string) bool {
	t.Helper()
	fbr := bufferedReader(in)
	fast := readRequestFast(fbr, nil, nil)
	if fast == nil {
		if fbr.Buffered() != len(in) && len(in) > 0 {
			t.Errorf("%q: the fast path declined but consumed bytes", in)
		}
		return false
	}
	sbr := bufferedReader(in)
	std, err := http.ReadRequest(sbr)
	if err != nil {
		t.Errorf("%q: the fast path read what http.ReadRequest refuses (%v)", in, err)
		return true
	}
	fh := maps.Clone(fast.Header)
	delete(fh, "Host") // as the server deletes it, and http.ReadRequest does
	type view struct {
		Method, URL, RequestURI, Proto, Host string
		Major, Minor                         int
		Header                               http.Header
		Length                               int64
		Close                                bool
		TE                                   []string
	}
	fv := view{fast.Method, fast.URL.String(), fast.RequestURI, fast.Proto, fast.Host, fast.ProtoMajor, fast.ProtoMinor, fh, fast.ContentLength, fast.Close, fast.TransferEncoding}
	sv := view{std.Method, std.URL.String(), std.RequestURI, std.Proto, std.Host, std.ProtoMajor, std.ProtoMinor, std.Header, std.ContentLength, std.Close, std.TransferEncoding}
	if !reflect.DeepEqual(fv, sv) {
		t.Errorf("%q:\nfast %+v\n std %+v", in, fv, sv)
	}
	sameBodies(t, in, fast.Body, std.Body, fbr, sbr)
	return true
}

func sameBodies(t *testing.T, in string, fb, sb io.Reader, fbr, sbr *bufio.Reader) {
	t.Helper()
	f, ferr := io.ReadAll(fb)
	s, serr := io.ReadAll(sb)
	if !bytes.Equal(f, s) || (ferr == nil) != (serr == nil) {
		t.Errorf("%q: body %q (%v), library %q (%v)", in, f, ferr, s, serr)
	}
	if ferr != nil || serr != nil {
		return // the connection is not used again after a broken body
	}
	fr, _ := io.ReadAll(fbr)
	sr, _ := io.ReadAll(sbr)
	if !bytes.Equal(fr, sr) {
		t.Errorf("%q: left %q after the message, library %q", in, fr, sr)
	}
}

func responseSame(t *testing.T, in string) bool {
	t.Helper()
	req := &http.Request{Method: http.MethodPost}
	fbr := bufferedReader(in)
	fast := readResponseFast(fbr, req, nil)
	if fast == nil {
		if fbr.Buffered() != len(in) && len(in) > 0 {
			t.Errorf("%q: the fast path declined but consumed bytes", in)
		}
		return false
	}
	sbr := bufferedReader(in)
	std, err := http.ReadResponse(sbr, req)
	if err != nil {
		t.Errorf("%q: the fast path read what http.ReadResponse refuses (%v)", in, err)
		return true
	}
	type view struct {
		Status, Proto string
		Code, Major   int
		Minor         int
		Header        http.Header
		Length        int64
		Close         bool
		TE            []string
	}
	fv := view{fast.Status, fast.Proto, fast.StatusCode, fast.ProtoMajor, fast.ProtoMinor, fast.Header, fast.ContentLength, fast.Close, fast.TransferEncoding}
	sv := view{std.Status, std.Proto, std.StatusCode, std.ProtoMajor, std.ProtoMinor, std.Header, std.ContentLength, std.Close, std.TransferEncoding}
	if !reflect.DeepEqual(fv, sv) {
		t.Errorf("%q:\nfast %+v\n std %+v", in, fv, sv)
	}
	sameBodies(t, in, fast.Body, std.Body, fbr, sbr)
	return true
}

func TestHeadFastPathMatchesStdlib(t *testing.T) {
	for _, in := range fastRequests {
		if !requestSame(t, in) {
			t.Errorf("the fast path declined %q", in)
		}
	}
	for _, in := range slowRequests {
		if requestSame(t, in) {
			t.Errorf("the fast path read %q, which it leaves to the library", in)
		}
	}
	for _, in := range fastResponses {
		if !responseSame(t, in) {
			t.Errorf("the fast path declined %q", in)
		}
	}
	for _, in := range slowResponses {
		if responseSame(t, in) {
			t.Errorf("the fast path read %q, which it leaves to the library", in)
		}
	}
}

// TestHeadFastPathTruncatedBody: a body that ends early is an unexpected
// end, as the library's body says.
func TestHeadFastPathTruncatedBody(t *testing.T) {
	in := "POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nabc"
	req := readRequestFast(bufferedReader(in), nil, nil)
	if req == nil {
		t.Fatal("declined")
	}
	b, err := io.ReadAll(req.Body)
	if string(b) != "abc" || err != io.ErrUnexpectedEOF {
		t.Fatalf("read %q, %v; want abc, unexpected EOF", b, err)
	}
}

// FuzzHeadFastPath: whatever the fast path reads, the standard library
// reads to the same message.
func FuzzHeadFastPath(f *testing.F) {
	for _, s := range [][]string{fastRequests, slowRequests, fastResponses, slowResponses} {
		for _, in := range s {
			f.Add(in)
		}
	}
	f.Fuzz(func(t *testing.T, in string) {
		requestSame(t, in)
		responseSame(t, in)
	})
}

// BenchmarkReadHead reads a typical MCP request head (a tools/call POST)
// and a typical JSON answer head, with the fast path and with the
// standard library (what the proxy used for every head before).
func BenchmarkReadHead(b *testing.B) {
	req := fastRequests[0]
	resp := fastResponses[0]
	hreq := &http.Request{Method: http.MethodPost}
	run := func(b *testing.B, in string, read func(*bufio.Reader) error) {
		r := strings.NewReader(in)
		br := bufio.NewReaderSize(r, 64<<10)
		b.ReportAllocs()
		for b.Loop() {
			r.Reset(in)
			br.Reset(r)
			_, _ = br.Peek(1)
			if err := read(br); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("request/fast", func(b *testing.B) {
		run(b, req, func(br *bufio.Reader) error {
			if readRequestFast(br, nil, nil) == nil {
				return io.ErrUnexpectedEOF
			}
			return nil
		})
	})
	b.Run("request/stdlib", func(b *testing.B) {
		run(b, req, func(br *bufio.Reader) error { _, err := http.ReadRequest(br); return err })
	})
	b.Run("response/fast", func(b *testing.B) {
		run(b, resp, func(br *bufio.Reader) error {
			if readResponseFast(br, hreq, nil) == nil {
				return io.ErrUnexpectedEOF
			}
			return nil
		})
	})
	b.Run("response/stdlib", func(b *testing.B) {
		run(b, resp, func(br *bufio.Reader) error { _, err := http.ReadResponse(br, hreq); return err })
	})
}

// TestURLCache: a connection's remembered target gives what
// url.ParseRequestURI gives, a copy of its own each time, and a new target
// is parsed anew.
func TestURLCache(t *testing.T) {
	var c urlCache
	for _, target := range []string{"/mcp", "/mcp", "/mcp?x=1&y=%20", "/mcp?x=1&y=%20", "/a%2Fb", "/mcp", "/bad%zz", "/mcp"} {
		want, werr := url.ParseRequestURI(target)
		got := c.parse(target)
		if (werr != nil) != (got == nil) {
			t.Fatalf("%q: parse %v, ParseRequestURI error %v", target, got, werr)
		}
		if got == nil {
			continue
		}
		if *got != *want {
			t.Fatalf("%q: parse %#v, ParseRequestURI %#v", target, *got, *want)
		}
		got.Path = "/changed" // the next request's URL is its own
	}
}

package faultproxy

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httputil"
	"net/textproto"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// The plain HTTP/1.1 heads that clients and servers exchange with the
// proxy (a request line or status line, a few token: value fields, a
// Content-Length) are read here in one pass over the buffered head, with
// one string for all its values, one block for the value slices and the
// common field names interned: about half the allocations and time of
// http.ReadRequest/http.ReadResponse, which read everything else. A head
// qualifies only if http.ReadRequest or http.ReadResponse would read it to
// the same message (TestHeadFastPathMatchesStdlib and FuzzHeadFastPath
// compare the two); anything else (a head not yet whole in the buffer,
// obs-fold, HTTP/1.0, a Transfer-Encoding, Connection, Expect, Trailer,
// Upgrade or Pragma field, an absolute-form target, several Host or
// Content-Length fields, a body delimited by the connection's end) goes
// to the standard library, as before.

// readRequestFast reads a request head that qualifies, or returns nil
// having consumed nothing. Its body, if any, is lb (reused by the caller
// from one request to the next) or a new one when lb is nil.
func readRequestFast(br *bufio.Reader, lb *lengthBody, uc *urlCache) *http.Request {
	buf := peekBuffered(br)
	end := bytes.Index(buf, crlfcrlf)
	if end < 0 || int64(end+4) > maxHeaderBytes {
		return nil
	}
	head := string(buf[:end+2]) // every value is a substring of it
	i := indexCRLF(head, 0)
	if i < 0 {
		return nil
	}
	line := head[:i]
	sp1 := indexByte(line, ' ', 0)
	if sp1 <= 0 {
		return nil
	}
	sp2 := indexByte(line, ' ', sp1+1)
	if sp2 < 0 || line[sp2+1:] != "HTTP/1.1" {
		return nil
	}
	method, target := line[:sp1], line[sp1+1:sp2]
	if !upperToken(method) || method == "CONNECT" || len(target) == 0 || target[0] != '/' || !plainTarget(target) {
		return nil
	}
	h, host, fl, ok := parseFields(head, i+2)
	if !ok || fl&(fieldFallback|fieldChunked) != 0 || fl&fieldHost == 0 {
		return nil
	}
	if !plainHost(host) {
		return nil
	}
	var length int64
	if fl&fieldLength != 0 {
		if length, ok = parseLength(h["Content-Length"][0]); !ok {
			return nil
		}
	}
	var (
		req *http.Request
		u   *url.URL
	)
	if uc.hit(target) {
		// The request and its copy of the remembered URL in one
		// allocation (neither outlives the exchange: the transcript
		// keeps the header map, not the request).
		ru := &requestURL{u: uc.u}
		req, u = &ru.req, &ru.u
	} else {
		if u = uc.parse(target); u == nil {
			return nil
		}
		req = new(http.Request)
	}
	*req = http.Request{Method: method, URL: u, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Host: host, RequestURI: target, ContentLength: length, Body: http.NoBody}
	if length > 0 {
		req.Body = newLengthBody(lb, br, length)
	}
	_, _ = br.Discard(end + 4)
	return req
}

// readResponseFast reads a response head to req that qualifies, with a
// Content-Length body (or none, by its status), or returns nil having
// consumed nothing. Its body is lb, as for readRequestFast.
func readResponseFast(br *bufio.Reader, req *http.Request, lb *lengthBody) *http.Response {
	if req.Method == http.MethodHead {
		return nil
	}
	buf := peekBuffered(br)
	end := bytes.Index(buf, crlfcrlf)
	if end < 0 || int64(end+4) > maxHeaderBytes {
		return nil
	}
	head := string(buf[:end+2])
	i := indexCRLF(head, 0)
	if i < 0 {
		return nil
	}
	line := head[:i]
	// HTTP/1.1 NNN Reason
	if len(line) < len("HTTP/1.1 200 ") || line[:9] != "HTTP/1.1 " || line[12] != ' ' {
		return nil
	}
	code := 0
	for _, c := range []byte(line[9:12]) {
		if c < '0' || c > '9' {
			return nil
		}
		code = code*10 + int(c-'0')
	}
	if code < 200 || !plainText(line[13:]) {
		return nil
	}
	h, _, fl, ok := parseFields(head, i+2)
	chunked := fl&fieldChunked != 0
	if !ok || fl&(fieldFallback|fieldHost) != 0 || chunked && fl&fieldLength != 0 {
		return nil
	}
	resp := &http.Response{Status: line[9:], StatusCode: code, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Request: req, Body: http.NoBody}
	var length int64
	if fl&fieldLength != 0 {
		if length, ok = parseLength(h["Content-Length"][0]); !ok {
			return nil
		}
	}
	switch {
	case code == http.StatusNoContent || code == http.StatusNotModified:
		if chunked {
			return nil
		}
		length = 0
	case chunked:
		// As http.ReadResponse: the field leaves the header for
		// TransferEncoding, the length is unknown.
		delete(h, "Transfer-Encoding")
		resp.TransferEncoding = []string{"chunked"}
		length = -1
	case fl&fieldLength == 0:
		return nil // a body that ends with the connection
	}
	resp.ContentLength = length
	switch {
	case chunked:
		resp.Body = &chunkedBody{br: br, cr: httputil.NewChunkedReader(br)}
	case length > 0:
		resp.Body = newLengthBody(lb, br, length)
	}
	_, _ = br.Discard(end + 4)
	return resp
}

// chunkedBody is a chunked response body: httputil's chunked reader, then
// the trailer section (its fields are dropped: the proxy relays none), so
// that the connection is at the next response.
// urlCache remembers the last request target a connection parsed (a
// client sends the same one every time): each request gets its own copy
// of the URL, without parsing again. A nil cache parses each time.
type urlCache struct {
	target string
	u      url.URL
}

// requestURL is a request read by readRequestFast with room for its URL.
type requestURL struct {
	req http.Request
	u   url.URL
}

// hit reports whether target is the remembered one (c.u is its URL).
func (c *urlCache) hit(target string) bool {
	return c != nil && c.target == target && target != ""
}

// parse is url.ParseRequestURI(target), or nil when that fails.
func (c *urlCache) parse(target string) *url.URL {
	if c.hit(target) {
		u := c.u
		return &u
	}
	u, err := url.ParseRequestURI(target)
	if err != nil {
		return nil
	}
	if c != nil && u.User == nil {
		c.target, c.u = strings.Clone(target), *u
	}
	return u
}

type chunkedBody struct {
	br   *bufio.Reader
	cr   io.Reader
	done bool
	err  error
}

func (b *chunkedBody) Read(p []byte) (int, error) {
	if b.done {
		return 0, b.err
	}
	n, err := b.cr.Read(p)
	if err == io.EOF {
		b.done = true
		b.err = b.readTrailer()
		if b.err == nil {
			b.err = io.EOF
		}
		return n, b.err
	}
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		b.done, b.err = true, err
	}
	return n, err
}

func (b *chunkedBody) readTrailer() error {
	// As net/http reads a trailer: a CRLF, or fields read by textproto.
	buf, err := b.br.Peek(2)
	if len(buf) == 2 && buf[0] == '\r' && buf[1] == '\n' {
		_, _ = b.br.Discard(2)
		return nil
	}
	if len(buf) < 2 {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	if err != nil {
		return err
	}
	// A field section ends within the buffer (net/http's guard against an
	// endless trailer).
	for n := 4; ; n++ {
		buf, err := b.br.Peek(n)
		if bytes.HasSuffix(buf, crlfcrlf) {
			break
		}
		if err != nil || n >= b.br.Size() {
			return errors.New("faultproxy: trailer too long or not ended")
		}
	}
	_, err = textproto.NewReader(b.br).ReadMIMEHeader()
	return err
}

func (b *chunkedBody) Close() error { return nil }

var crlfcrlf = []byte("\r\n\r\n")

// What parseFields saw.
const (
	fieldHost    = 1 << iota // a Host field
	fieldLength              // a Content-Length field
	fieldChunked             // Transfer-Encoding: chunked, the one coding
	// fieldFallback: a field the fast path leaves to the standard library.
	fieldFallback
)

// parseFields reads the fields of head from offset i (each line ends with
// CRLF; head ends with the last one). ok is false for anything
// textproto.Reader.ReadMIMEHeader would read differently or refuse. The
// Host field is host, not an entry of h (a request's Host is not one of
// its headers: http.ReadRequest deletes it from them).
func parseFields(head string, i int) (h http.Header, host string, fl int, ok bool) {
	n := strings.Count(head[i:], "\n")
	h = make(http.Header, n)
	strs := make([]string, n)
	var seen [16]string
	keys := seen[:0]
	for i < len(head) {
		e := indexCRLF(head, i)
		if e < 0 {
			return nil, "", 0, false
		}
		line := head[i:e]
		i = e + 2
		colon := indexByte(line, ':', 0)
		if colon <= 0 {
			return nil, "", 0, false
		}
		key, ok := canonicalKey(line[:colon])
		if !ok {
			return nil, "", 0, false
		}
		v := trimOWS(line[colon+1:])
		if !plainValue(v) {
			return nil, "", 0, false
		}
		switch key {
		case "Host":
			if fl&fieldHost != 0 {
				return nil, "", 0, false
			}
			fl |= fieldHost
			host = v
			continue
		case "Content-Length":
			if fl&fieldLength != 0 {
				fl |= fieldFallback // several: the library decides
			}
			fl |= fieldLength
		case "Transfer-Encoding":
			if fl&fieldChunked != 0 || v != "chunked" {
				fl |= fieldFallback
			}
			fl |= fieldChunked
		case "Connection", "Keep-Alive", "Proxy-Connection", "Expect", "Trailer", "Te", "Upgrade", "Pragma":
			fl |= fieldFallback
		}
		if slices.Contains(keys, key) {
			h[key] = append(h[key], v)
			continue
		}
		keys = append(keys, key)
		strs[0] = v
		h[key] = strs[:1:1]
		strs = strs[1:]
	}
	return h, host, fl, true
}

// indexCRLF is the index of the CRLF that ends the line at from, or -1
// for a line that ends with a bare LF or not at all. A lone CR inside the
// line stays in it, where the checks of what the line holds refuse it.
func indexCRLF(s string, from int) int {
	j := strings.IndexByte(s[from:], '\n')
	if j < 1 || s[from+j-1] != '\r' {
		return -1
	}
	return from + j - 1
}

func indexByte(s string, c byte, from int) int {
	if j := strings.IndexByte(s[from:], c); j >= 0 {
		return from + j
	}
	return -1
}

// upperToken: an upper-case method name (GET, POST, DELETE, ...).
func upperToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return true
}

// plainTarget: printable ASCII, no space, no fragment.
func plainTarget(s string) bool {
	for _, c := range []byte(s) {
		if c <= ' ' || c >= 0x7f || c == '#' {
			return false
		}
	}
	return true
}

// plainHost: the characters of a host name, an IP literal and a port.
func plainHost(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '.' || c == '-' || c == ':' || c == '[' || c == ']' || c == '_':
		default:
			return false
		}
	}
	return true
}

// plainText: a reason phrase of printable ASCII and spaces.
func plainText(s string) bool {
	for _, c := range []byte(s) {
		if c < ' ' || c >= 0x7f {
			return false
		}
	}
	return true
}

// plainValue: a field value of printable ASCII, spaces and tabs (no
// obs-text, which the library reads its own way).
func plainValue(s string) bool {
	for _, c := range []byte(s) {
		if (c < ' ' && c != '\t') || c >= 0x7f {
			return false
		}
	}
	return true
}

func trimOWS(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

// parseLength: one to eighteen digits.
func parseLength(s string) (int64, bool) {
	if s == "" || len(s) > 18 {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || s[0] == '+' || s[0] == '-' {
		return 0, false
	}
	return n, true
}

// canonicalKey returns the canonical form of a field name made of token
// characters (textproto.CanonicalMIMEHeaderKey), without an allocation
// for the names MCP traffic carries; ok is false for any other name.
func canonicalKey(k string) (string, bool) {
	if k == "" || len(k) > 64 {
		return "", false
	}
	var b [64]byte
	upper := true
	for i := range len(k) {
		c := k[i]
		if !isTokenByte(c) {
			return "", false
		}
		if upper && 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		} else if !upper && 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
		upper = c == '-'
	}
	if s, ok := commonKey(b[:len(k)]); ok {
		return s, true
	}
	return textproto.CanonicalMIMEHeaderKey(k), true
}

// commonKey interns the field names of MCP traffic (a switch compiles to
// comparisons, cheaper than hashing into a map).
func commonKey(b []byte) (string, bool) {
	switch string(b) {
	case "Accept":
		return "Accept", true
	case "Accept-Encoding":
		return "Accept-Encoding", true
	case "Accept-Language":
		return "Accept-Language", true
	case "Authorization":
		return "Authorization", true
	case "Cache-Control":
		return "Cache-Control", true
	case "Connection":
		return "Connection", true
	case "Content-Length":
		return "Content-Length", true
	case "Content-Type":
		return "Content-Type", true
	case "Cookie":
		return "Cookie", true
	case "Date":
		return "Date", true
	case "Host":
		return "Host", true
	case "Last-Event-Id":
		return "Last-Event-Id", true
	case "Mcp-Method":
		return "Mcp-Method", true
	case "Mcp-Name":
		return "Mcp-Name", true
	case "Mcp-Protocol-Version":
		return "Mcp-Protocol-Version", true
	case "Mcp-Session-Id":
		return "Mcp-Session-Id", true
	case "Origin":
		return "Origin", true
	case "Server":
		return "Server", true
	case "Set-Cookie":
		return "Set-Cookie", true
	case "User-Agent":
		return "User-Agent", true
	case "Vary":
		return "Vary", true
	case "X-Accel-Buffering":
		return "X-Accel-Buffering", true
	case "X-Content-Type-Options":
		return "X-Content-Type-Options", true
	}
	return "", false
}

// isTokenByte: RFC 9110 tchar.
func isTokenByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}

// lengthBody is a body of a known length read from the connection's
// buffered reader: io.ErrUnexpectedEOF when the connection ends first, as
// the library's body says.
type lengthBody struct {
	r *bufio.Reader
	n int64
}

func newLengthBody(lb *lengthBody, r *bufio.Reader, n int64) *lengthBody {
	if lb == nil {
		lb = new(lengthBody)
	}
	*lb = lengthBody{r: r, n: n}
	return lb
}

func (b *lengthBody) Read(p []byte) (int, error) {
	if b.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > b.n {
		p = p[:b.n]
	}
	n, err := b.r.Read(p)
	b.n -= int64(n)
	if err == io.EOF {
		if b.n > 0 {
			err = io.ErrUnexpectedEOF
		} else {
			err = nil
		}
	}
	if b.n <= 0 && err == nil && n == 0 {
		err = io.EOF
	}
	return n, err
}

func (b *lengthBody) Close() error { return nil }

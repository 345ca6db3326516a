package faultproxy

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// upstreamDialer opens the upstream connections that the proxy's server
// keeps one per client connection (an http:// upstream and no
// HTTPOptions.Transport; otherwise every exchange goes through the
// http.Client).
type upstreamDialer struct {
	addr   string // host:port to dial
	host   string // the Host header
	url    *url.URL
	dialer *net.Dialer
}

func newUpstreamDialer(u *url.URL) *upstreamDialer {
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	return &upstreamDialer{addr: addr, host: u.Host, url: u,
		dialer: &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: fixedRecvBuffer}}
}

// upConn is one upstream connection, used by one exchange at a time.
type upConn struct {
	c    net.Conn
	rw   io.ReadWriter // c, read and written by rawConnIO
	br   *bufio.Reader
	buf  []byte // the request being written, reused
	used time.Time
	// body and lb are the response body of the exchange using the
	// connection, reused by each.
	body upBody
	lb   lengthBody
	// interrupted: interruptUp stopped the exchange using it (its
	// deadline is in the past): it is not used again. Guarded by the
	// srvConn's upMu.
	interrupted bool
	// raw, out, rest, sent, werr and await: sendAwait's (raw nil: it
	// writes as any net.Conn is written).
	raw       syscall.RawConn
	out, rest []byte
	sent      bool
	werr      error
	await     func(uintptr) bool
}

func (uc *upConn) close() { _ = uc.c.Close() }

// probeIdle is how long an upstream connection may have been idle before
// it is checked (without blocking) for the server having closed it: a
// connection used a moment ago was not, and the check is a system call.
const probeIdle = 10 * time.Millisecond

// skipRequestHeader reports whether a request header is hop-by-hop
// (hopHeaders), or one that writeRequest writes itself.
func skipRequestHeader(k string) bool {
	switch k {
	case "Host", "Content-Length", "User-Agent":
		return true
	}
	return hopHeader(k)
}

// roundTrip forwards r with body on the connection's own upstream
// connection. ok is false when it has none to offer (no dialer, or the
// connection is in use by the same exchange's earlier delivery: a
// duplicate); the caller then uses the http.Client. The response's body
// must be closed; it gives the connection back when read to its end, and
// closes it otherwise.
func (sc *srvConn) roundTrip(ctx context.Context, r *http.Request, uri string, body []byte) (resp *http.Response, ok bool, err error) {
	d := sc.s.up
	if d == nil || !sc.upBusy.CompareAndSwap(false, true) {
		return nil, false, nil
	}
	resp, err = sc.upRoundTrip(ctx, d, r, uri, body)
	if err != nil {
		sc.upBusy.Store(false)
		return nil, true, &url.Error{Op: urlErrorOp(r.Method), URL: upstreamURL(d.url, r), Err: err}
	}
	return resp, true, nil
}

func (sc *srvConn) upRoundTrip(ctx context.Context, d *upstreamDialer, r *http.Request, uri string, body []byte) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		sc.upMu.Lock()
		uc := sc.up
		if uc != nil && (uc.interrupted || time.Since(uc.used) >= probeIdle && !connAlive(uc.c)) {
			uc.close()
			uc, sc.up = nil, nil
		}
		sc.upMu.Unlock()
		reused := uc != nil
		if uc == nil {
			c, err := d.dialer.DialContext(ctx, "tcp", d.addr)
			if err != nil {
				return nil, err
			}
			rw := rawConnIO(c) // reads and writes without waking sysmon (rawio_linux.go)
			uc = &upConn{c: c, rw: rw, br: bufio.NewReaderSize(rw, 32<<10), raw: awaitConn(c)}
			uc.await = uc.sendThenWait
			sc.upMu.Lock()
			sc.up = uc
			sc.upMu.Unlock()
		}
		fail := func(err error) error {
			sc.dropUp(uc)
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			return err
		}
		// A cancellation from now on interrupts uc (interruptUp); one
		// before is seen here.
		if err := ctx.Err(); err != nil {
			return nil, fail(err)
		}
		if err := uc.writeRequest(d, r, uri, body); err != nil {
			err = fail(err)
			if reused && attempt == 0 && ctx.Err() == nil {
				continue // a stale connection: the server read nothing
			}
			return nil, err
		}
		if _, err := uc.br.Peek(1); err != nil {
			err = fail(err)
			if reused && attempt == 0 && ctx.Err() == nil && replayable(r) {
				continue
			}
			return nil, err
		}
		resp := readResponseFast(uc.br, r, &uc.lb)
		var err error
		for resp == nil {
			resp, err = http.ReadResponse(uc.br, r)
			if err != nil {
				break
			}
			if resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols {
				// 1xx (100 Continue, 103 Early Hints): the final head
				// follows.
				resp = readResponseFast(uc.br, r, &uc.lb)
			}
		}
		if err != nil {
			return nil, fail(err)
		}
		uc.body = upBody{sc: sc, uc: uc, rc: resp.Body, ctx: ctx, keep: !resp.Close}
		resp.Body = &uc.body
		return resp, nil
	}
}

// dropUp closes uc and forgets it.
func (sc *srvConn) dropUp(uc *upConn) {
	uc.close()
	sc.upMu.Lock()
	if sc.up == uc {
		sc.up = nil
	}
	sc.upMu.Unlock()
}

// interruptUp stops the exchange using the upstream connection, if one
// is, by closing the connection: its blocked read or write returns at
// once, and the server sees its request go, at once too (as when
// http.Transport cancels a request), even while the exchange still waits
// on its faults. The exchange's upstream context has ended already (its
// upStop, or the end of the connection's upParent).
func (sc *srvConn) interruptUp() {
	sc.upMu.Lock()
	if uc := sc.up; uc != nil && sc.upBusy.Load() {
		uc.interrupted = true
		uc.close()
	}
	sc.upMu.Unlock()
}

// replayable is what http.Transport retries after a reused connection
// broke before the answer: a method without side effects.
func replayable(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	return false
}

// writeRequest writes the request line, r's headers less the hop-by-hop
// ones, and the body, as http.Transport would write them for the proxy's
// upstream request: Host from the upstream URL, the client's path and
// query, Content-Length when there is a body (or the method has one).
func (uc *upConn) writeRequest(d *upstreamDialer, r *http.Request, uri string, body []byte) error {
	b := uc.buf[:0]
	b = append(b, r.Method...)
	b = append(b, ' ')
	b = append(b, uri...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, d.host...)
	b = append(b, "\r\n"...)
	if ua, ok := r.Header["User-Agent"]; !ok {
		b = append(b, "User-Agent: Go-http-client/1.1\r\n"...)
	} else if len(ua) > 0 && ua[0] != "" {
		b = append(b, "User-Agent: "...)
		b = appendHeaderValue(b, ua[0])
		b = append(b, "\r\n"...)
	}
	b = appendHeaderLines(b, r.Header, skipRequestHeader)
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
		b = appendContentLength(b, len(body))
	default:
		if len(body) > 0 {
			b = appendContentLength(b, len(body))
		}
	}
	b = append(b, "\r\n"...)
	const inline = 64 << 10
	if len(body) <= inline {
		b = append(b, body...)
		body = nil
	}
	if cap(b) <= 2*inline {
		uc.buf = b
	}
	return uc.sendAwait(b, body)
}

// sendAwait writes b and then rest, and waits until the answer can be
// read, without the read that would find nothing yet: that read (a
// system call returning EAGAIN before the exchange waits in the network
// poller) was one of the few system calls per exchange. The write is
// made inside syscall.RawConn.Read, which first forgets any readiness
// the poller saw before and then waits for the next; as the connection
// is read by no one else and its buffer is empty, every byte of the
// answer arrives after the write, so that the wait sees it (or the
// connection's end, or its close by interruptUp). The read after it
// reports any error. Without a raw connection, or with bytes already
// buffered, it only writes.
func (uc *upConn) sendAwait(b, rest []byte) error {
	if uc.raw == nil || uc.br.Buffered() > 0 {
		return uc.send(b, rest)
	}
	uc.out, uc.rest, uc.sent, uc.werr = b, rest, false, nil
	err := uc.raw.Read(uc.await)
	sent, werr := uc.sent, uc.werr
	uc.out, uc.rest, uc.werr = nil, nil, nil
	switch {
	case werr != nil:
		return werr
	case !sent && err != nil:
		return err // closed before the write
	case !sent:
		return uc.send(b, rest)
	}
	return nil
}

// sendThenWait is sendAwait's callback: the first call writes and asks
// for the wait (unless the write failed), the next one ends it.
func (uc *upConn) sendThenWait(uintptr) bool {
	if uc.sent {
		return true
	}
	uc.sent = true
	uc.werr = uc.send(uc.out, uc.rest)
	return uc.werr != nil
}

func (uc *upConn) send(b, rest []byte) error {
	if _, err := uc.rw.Write(b); err != nil {
		return err
	}
	if len(rest) > 0 {
		if _, err := uc.rw.Write(rest); err != nil {
			return err
		}
	}
	return nil
}

func appendContentLength(b []byte, n int) []byte {
	b = append(b, "Content-Length: "...)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, "\r\n"...)
}

// upstreamURL is the URL the request went to, for errors (as
// http.Client.Do names it).
func upstreamURL(u *url.URL, r *http.Request) string {
	v := *u
	v.Path, v.RawPath, v.RawQuery = r.URL.Path, r.URL.RawPath, r.URL.RawQuery
	return v.String()
}

// urlErrorOp is http.Client's Op for a method: "Post", "Get".
func urlErrorOp(method string) string {
	if method == "" {
		return "Get"
	}
	if lm, ok := lowerASCII(method); ok {
		return method[:1] + lm[1:]
	}
	return method
}

func lowerASCII(s string) (string, bool) {
	b := []byte(s)
	for i, c := range b {
		if c >= 0x80 {
			return "", false
		}
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b), true
}

// upBody is an upstream response body read from an upConn.
type upBody struct {
	sc   *srvConn
	uc   *upConn
	rc   io.ReadCloser
	ctx  context.Context
	keep bool // the response allows the connection's reuse

	mu     sync.Mutex
	eof    bool
	closed bool
}

func (b *upBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil {
		if err == io.EOF {
			b.mu.Lock()
			b.eof = true
			b.mu.Unlock()
		} else if cerr := b.ctx.Err(); cerr != nil {
			// Stopped by the cancellation: say so, as http.Client's
			// body does.
			err = cerr
		}
	}
	return n, err
}

// Close gives the connection back for the next exchange when the body was
// read to its end (and the response allows it); otherwise the connection
// is closed, as http.Transport closes one whose body was not drained.
func (b *upBody) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	b.sc.upMu.Lock()
	reuse := b.eof && b.keep && !b.uc.interrupted && b.uc.br.Buffered() == 0
	b.sc.upMu.Unlock()
	if reuse {
		b.uc.used = time.Now()
	} else {
		b.sc.dropUp(b.uc)
	}
	b.sc.upBusy.Store(false)
	return nil
}

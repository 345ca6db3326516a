package faultproxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http/httpguts"
)

// httpServer is the proxy's client-facing HTTP/1.1 server. It does what
// net/http.Server does for the proxy with less per request, on one
// goroutine per connection that reads the request (http.ReadRequest, the
// standard library's parser), runs the handler and writes the response:
//
//   - no read of the connection while the handler runs (net/http starts
//     a background read for every request): one watch loop for the server
//     looks, without blocking, whether the clients of exchanges older
//     than watchAfter went away, and ends their context (watchLoop);
//   - its responseWriter writes the head and the body into one buffered
//     writer, and a response the handler ends without a flush goes out
//     as one write with its Content-Length;
//   - each connection has an upstream connection of its own (upConn,
//     httpupstream.go), so that the exchange is forwarded and answered on
//     the handler's goroutine, without http.Transport's pool and the two
//     goroutines it runs per upstream connection.
//
// Concurrency: serve runs once per accepted connection; shutdown may be
// called from any goroutine, once.
type httpServer struct {
	handler http.Handler
	ln      net.Listener
	// base ends the exchanges' upstream requests when the proxy closes.
	base context.Context
	// up opens the connections' own upstream connections; nil: none is
	// kept (the handler forwards with its http.Client).
	up *upstreamDialer

	mu      sync.Mutex
	conns   map[*srvConn]struct{}
	closing bool
	wg      sync.WaitGroup // connection goroutines

	// armed counts exchanges that may be watched; looping is true while
	// watchLoop runs.
	armed   atomic.Int64
	looping atomic.Bool
}

// Server limits, as the proxy set them on net/http.Server (ReadHeaderTimeout)
// and as net/http applies them itself (the body it drains to keep a
// connection, the header size).
const (
	headerTimeout  = 10 * time.Second
	maxDrain       = 256 << 10
	maxHeaderBytes = int64(http.DefaultMaxHeaderBytes)
	// watchAfter is the watch loop's tick: an exchange is first looked
	// at between one and two ticks after its request body was read.
	watchAfter = 5 * time.Millisecond
	// pendMax is how much body a response buffers before its head is
	// written (net/http's 2 KiB bufferBeforeChunkingSize, with room for a
	// typical JSON-RPC answer).
	pendMax = 8 << 10
)

func newHTTPServer(base context.Context, h http.Handler, ln net.Listener, up *upstreamDialer) *httpServer {
	return &httpServer{base: base, handler: h, ln: ln, up: up, conns: map[*srvConn]struct{}{}}
}

// serve accepts connections until the listener is closed.
func (s *httpServer) serve() {
	var delay time.Duration
	for {
		c, err := s.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				// Out of descriptors or alike: back off as net/http does.
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				time.Sleep(delay)
				continue
			}
			return
		}
		delay = 0
		sc := &srvConn{s: s, c: c, remote: c.RemoteAddr().String()}
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			_ = c.Close()
			continue
		}
		s.conns[sc] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go sc.serve()
	}
}

// shutdown stops accepting, closes idle connections, waits until ctx ends
// for the others to finish their exchange, then closes them too and waits
// (bounded) for their goroutines, so that their upstream connections are
// closed when it returns.
func (s *httpServer) shutdown(ctx context.Context) {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	_ = s.ln.Close()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		s.mu.Lock()
		for sc := range s.conns {
			if sc.state.Load() == connIdle {
				sc.closeNow()
			}
		}
		s.mu.Unlock()
		select {
		case <-done:
			return
		case <-tick.C:
			continue
		case <-ctx.Done():
		}
		break
	}
	s.mu.Lock()
	for sc := range s.conns {
		sc.closeNow()
	}
	s.mu.Unlock()
	select {
	case <-done:
	case <-time.After(time.Second):
	}
}

// The states of a connection.
const (
	connIdle   = iota // between requests
	connActive        // reading a request or running its exchange
	connClosed
)

// srvConn is one client connection.
//
// The handler finds its contexts here, through the responseWriter, and
// not in the request (which carries none, to save a copy of it): ctx
// ends when the client goes away (the watch sees it) or the connection
// closes; upParent, a child of ctx that also ends when the proxy closes,
// is the parent of each exchange's upstream request.
type srvConn struct {
	s        *httpServer
	c        net.Conn
	remote   string
	ctx      context.Context
	cancel   context.CancelFunc
	upParent context.Context
	br       *bufio.Reader
	bw       *bufio.Writer
	state    atomic.Int32
	// up is this connection's upstream connection (nil until the first
	// exchange forwarded on it, and after it broke); upMu guards its
	// replacement against interruptUp.
	upMu sync.Mutex
	up   *upConn
	// upBusy is held by the exchange using up (a duplicate delivery of
	// the same exchange finds it taken and uses the http.Client).
	upBusy atomic.Bool
	// pend and chunk are the response body buffers, rw the response
	// and hook the request body of the exchange, reused by each exchange
	// (the handler keeps none of them once it returned).
	pend, chunk []byte
	cr          connReader
	rw          responseWriter
	hook        eofHook
	body        lengthBody
	sseBuf      []byte // the event reader's buffer (relaySSE)

	// The watch. n numbers the exchanges; exch is the running one's
	// number once its request body has been read (0 otherwise), and
	// pipelined says the buffer held bytes of a next request then; seen
	// and ticks are what the server's watchLoop saw (only it uses them).
	// wmu guards wgone.
	n         uint64
	exch      atomic.Uint64
	pipelined atomic.Bool
	seen      uint64
	ticks     int
	wmu       sync.Mutex
	wgone     bool // the watch saw the client go away
}

func (sc *srvConn) closeNow() {
	if sc.state.Swap(connClosed) != connClosed {
		_ = sc.c.Close()
	}
}

func (sc *srvConn) serve() {
	defer func() {
		sc.closeNow()
		sc.upMu.Lock()
		if sc.up != nil {
			sc.up.close()
		}
		sc.upMu.Unlock()
		sc.s.mu.Lock()
		delete(sc.s.conns, sc)
		sc.s.mu.Unlock()
		sc.s.wg.Done()
	}()
	sc.ctx, sc.cancel = context.WithCancel(context.Background())
	upParent, upCancel := context.WithCancel(sc.ctx)
	sc.upParent = upParent
	stopBase := context.AfterFunc(sc.s.base, upCancel)
	stopUp := context.AfterFunc(upParent, sc.interruptUp)
	defer func() { stopBase(); stopUp(); upCancel(); sc.cancel() }()
	sc.cr = connReader{c: sc.c, remain: math.MaxInt64}
	sc.br = bufio.NewReaderSize(&sc.cr, 16<<10)
	sc.bw = bufio.NewWriterSize(sc.c, 16<<10)
	for {
		// Idle until the next request's first byte; the header timeout
		// starts then, as net/http's ReadHeaderTimeout does.
		if _, err := sc.br.Peek(1); err != nil {
			return
		}
		if !sc.state.CompareAndSwap(connIdle, connActive) {
			return
		}
		// A head already whole in the buffer needs no deadline, and most
		// are read by the fast path (httphead.go).
		req := readRequestFast(sc.br, &sc.body)
		if req == nil {
			_ = sc.c.SetReadDeadline(time.Now().Add(headerTimeout))
			sc.cr.remain = maxHeaderBytes + 4096 - int64(sc.br.Buffered()) // as net/http bounds a head
			var err error
			req, err = http.ReadRequest(sc.br)
			sc.cr.remain = math.MaxInt64
			_ = sc.c.SetReadDeadline(time.Time{})
			if err == nil {
				err = checkRequest(req)
			}
			if err != nil {
				if !errors.Is(err, io.EOF) {
					sc.badRequest(err)
				}
				return
			}
		}
		// As http.ReadRequest: the Host field is the request's Host, not
		// a header.
		delete(req.Header, "Host")
		if !sc.serveOne(req) {
			return
		}
		if !sc.state.CompareAndSwap(connActive, connIdle) {
			return
		}
	}
}

func peekBuffered(br *bufio.Reader) []byte {
	b, _ := br.Peek(br.Buffered())
	return b
}

// connReader is the client connection as its buffered reader reads it:
// while a head is read by the library, at most remain bytes (net/http's
// limit on a request head), then errHeadTooLarge.
type connReader struct {
	c      net.Conn
	remain int64
}

var errHeadTooLarge = errors.New("faultproxy: request head too large")

func (r *connReader) Read(p []byte) (int, error) {
	if r.remain <= 0 {
		return 0, errHeadTooLarge
	}
	if int64(len(p)) > r.remain {
		p = p[:r.remain]
	}
	n, err := r.c.Read(p)
	r.remain -= int64(n)
	return n, err
}

// checkRequest refuses what net/http's server refuses in a request that
// http.ReadRequest read: another HTTP version than 1.x, an HTTP/1.1
// request without exactly one valid Host field, an invalid field name or
// value.
func checkRequest(req *http.Request) error {
	if req.ProtoMajor != 1 {
		return errors.New("unsupported protocol version")
	}
	// http.ReadRequest moved the Host field (one at most) to req.Host.
	if req.ProtoAtLeast(1, 1) && req.Host == "" && req.Method != http.MethodConnect {
		return errors.New("missing required Host header")
	}
	if req.Host != "" && !httpguts.ValidHostHeader(req.Host) {
		return errors.New("malformed Host header")
	}
	for k, vv := range req.Header {
		if !httpguts.ValidHeaderFieldName(k) {
			return errors.New("invalid header name")
		}
		for _, v := range vv {
			if !httpguts.ValidHeaderFieldValue(v) {
				return errors.New("invalid header value")
			}
		}
	}
	return nil
}

// badRequest answers a request that could not be read, as net/http does.
func (sc *srvConn) badRequest(err error) {
	msg := "400 Bad Request"
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return
	case errors.Is(err, errHeadTooLarge):
		msg = "431 Request Header Fields Too Large"
	}
	_, _ = fmt.Fprintf(sc.bw, "HTTP/1.1 %s\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n%s", msg, msg)
	_ = sc.bw.Flush()
	// As net/http: end the sending side and let the client read the
	// answer before the close, so that unread bytes of its request do
	// not make the close a reset that loses the answer (bounded).
	if tc, ok := sc.c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
		_ = tc.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		_, _ = io.Copy(io.Discard, io.LimitReader(tc, 4<<20))
	}
}

// serveOne runs the handler on one request and finishes its response; it
// reports whether the connection carries another request.
func (sc *srvConn) serveOne(req *http.Request) (keep bool) {
	req.RemoteAddr = sc.remote
	w := &sc.rw
	*w = responseWriter{sc: sc, req: req, cl: -1, pend: sc.pend[:0], chunk: sc.chunk[:0]}
	defer func() {
		if cap(w.pend) <= 2*pendMax {
			sc.pend = w.pend[:0]
		}
		if cap(w.chunk) <= 2*chunkMax {
			sc.chunk = w.chunk[:0]
		}
	}()
	if req.ProtoAtLeast(1, 1) && headerHas(req.Header, "Expect", "100-continue") && req.Body != http.NoBody {
		_, _ = sc.bw.WriteString("HTTP/1.1 100 Continue\r\n\r\n")
		if err := sc.bw.Flush(); err != nil {
			return false
		}
	}
	sc.n++
	sc.wmu.Lock()
	sc.wgone = false
	sc.wmu.Unlock()
	body := req.Body
	var hook *eofHook
	if body == http.NoBody {
		sc.armWatch()
	} else {
		hook = &sc.hook
		*hook = eofHook{rc: body, sc: sc}
		req.Body = hook
	}
	aborted := sc.run(w, req)
	gone := sc.endWatch()
	if aborted || gone {
		// What the exchange had written goes out before the connection
		// breaks (net/http's final flush); a response not yet committed
		// does not.
		if w.committed && w.chunked {
			w.emitChunk()
		}
		_ = sc.bw.Flush()
		return false
	}
	if err := w.finish(); err != nil {
		return false
	}
	// The rest of a body the handler did not read, within bounds.
	if hook != nil && !hook.done {
		n, err := io.Copy(io.Discard, io.LimitReader(body, maxDrain+1))
		if n > maxDrain || err != nil {
			return false
		}
	}
	return !w.closeAfter
}

// run calls the handler; a panic ends the connection (http.ErrAbortHandler
// quietly, as the proxy's reset does; any other is logged, as net/http
// does) and reports true.
func (sc *srvConn) run(w *responseWriter, req *http.Request) (aborted bool) {
	defer func() {
		if err := recover(); err != nil {
			aborted = true
			if err != http.ErrAbortHandler {
				buf := make([]byte, 64<<10)
				buf = buf[:runtime.Stack(buf, false)]
				log.Printf("faultproxy: panic serving %s: %v\n%s", sc.remote, err, buf)
			}
		}
	}()
	sc.s.handler.ServeHTTP(w, req)
	return false
}

// eofHook arms the watch once its body has been read to the end.
type eofHook struct {
	rc   io.ReadCloser
	sc   *srvConn
	done bool
}

func (b *eofHook) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		b.sc.armWatch()
	}
	return n, err
}

func (b *eofHook) Close() error { return b.rc.Close() }

// armWatch lets the server's watchLoop watch the connection for the
// client going away, once the exchange has run for watchAfter or more:
// the request body has been read, and nothing else reads the connection
// until the exchange ends. Exchanges that end sooner (most) cost no watch
// at all.
func (sc *srvConn) armWatch() {
	// Bytes of a next request already read: the client is there.
	sc.pipelined.Store(sc.br.Buffered() > 0)
	sc.exch.Store(sc.n)
	s := sc.s
	s.armed.Add(1)
	if !s.looping.Load() && s.looping.CompareAndSwap(false, true) {
		go s.watchLoop()
	}
}

// watchLoop runs while exchanges are armed: every watchAfter it looks, for
// each exchange it saw armed at its earlier ticks too, whether the client
// closed its connection (clientGone: one non-blocking system call, no
// goroutine and no deadline per exchange), at ticks 1, 2, 4, 8 and 16 of
// the exchange and every 16th after: a client that goes away is seen
// within 5–80 ms. One loop for the whole server instead of a timer per
// exchange (resetting a timer can wake the network poller).
func (s *httpServer) watchLoop() {
	for {
		time.Sleep(watchAfter)
		if s.armed.Load() == 0 {
			s.looping.Store(false)
			if s.armed.Load() == 0 || !s.looping.CompareAndSwap(false, true) {
				return
			}
			continue
		}
		s.mu.Lock()
		for sc := range s.conns {
			e := sc.exch.Load()
			if e == 0 || e != sc.seen {
				sc.seen, sc.ticks = e, 0
				continue
			}
			sc.ticks++
			if t := sc.ticks; t&(t-1) == 0 && t <= watchEvery || t%watchEvery == 0 {
				sc.probe(e)
			}
		}
		s.mu.Unlock()
	}
}

// watchEvery is how many ticks apart an old exchange's connection is
// looked at.
const watchEvery = 16

// probe looks whether the client of exchange e closed its connection; if
// it did, the connection's context ends (as net/http cancels a request's
// when its client goes away) and the connection closes after the
// exchange.
func (sc *srvConn) probe(e uint64) {
	if sc.pipelined.Load() || !clientGone(sc.c) {
		return
	}
	sc.wmu.Lock()
	ours := sc.exch.Load() == e // not ended meanwhile
	if ours {
		sc.wgone = true
	}
	sc.wmu.Unlock()
	if ours {
		sc.cancel()
	}
}

// endWatch ends the watch of the exchange that ended and reports whether
// it saw the client go away.
func (sc *srvConn) endWatch() (gone bool) {
	if sc.exch.Swap(0) != 0 {
		sc.s.armed.Add(-1)
	}
	sc.wmu.Lock()
	gone = sc.wgone
	sc.wmu.Unlock()
	return gone
}

func headerHas(h http.Header, key, token string) bool {
	for _, v := range h[key] {
		if asciiEqualFold(v, token) {
			return true
		}
	}
	return false
}

func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(a) {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// responseWriter is the http.ResponseWriter of one exchange. It holds the
// body back (up to pendMax) until the first flush or the end of the
// handler, so that a short answer goes out as one write with its length;
// a longer or flushed one without a Content-Length is chunked.
//
// It is used by one goroutine at a time (the exchange serializes its
// writes under its own lock).
type responseWriter struct {
	sc          *srvConn
	req         *http.Request
	header      http.Header
	status      int
	wroteHeader bool
	committed   bool
	chunked     bool
	cl          int64 // Content-Length of the response, -1 none
	written     int64
	pend        []byte
	chunk       []byte // chunked: the bytes of the next chunk
	closeAfter  bool
	err         error
	// shared: header is the upstream response's, adopted without a copy
	// (the transcript holds it too): it is not changed; hop-by-hop
	// headers (and Content-Length, with dropLength) are left out when the
	// head is written, and Header makes a copy first.
	shared     bool
	dropLength bool
}

var (
	_ http.ResponseWriter = (*responseWriter)(nil)
	_ http.Flusher        = (*responseWriter)(nil)
)

func (w *responseWriter) Header() http.Header {
	if w.shared {
		w.header, w.shared = w.header.Clone(), false
		for _, k := range hopHeaders {
			delete(w.header, k)
		}
		if w.dropLength {
			// Dropped from the copy: a length set from now on is the
			// response's own.
			delete(w.header, "Content-Length")
			w.dropLength = false
		}
	}
	if w.header == nil {
		w.header = make(http.Header)
	}
	return w.header
}

// adopt takes h, an upstream response head that is not changed afterwards,
// as the response's head, less the hop-by-hop headers and, with
// dropLength, its Content-Length (the proxy copied and deleted them
// before; this writes the same head without the copy).
func (w *responseWriter) adopt(h http.Header, dropLength bool) {
	w.header, w.shared, w.dropLength = h, true, dropLength
}

func (w *responseWriter) WriteHeader(code int) {
	if w.wroteHeader {
		return
	}
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code))
	}
	if code < 200 {
		// An informational head goes out on its own (the proxy sends
		// none of its own; kept for any handler).
		w.Header()
		_, _ = fmt.Fprintf(w.sc.bw, "HTTP/1.1 %03d %s\r\n", code, http.StatusText(code))
		_ = w.header.Write(w.sc.bw)
		_, _ = w.sc.bw.WriteString("\r\n")
		_ = w.sc.bw.Flush()
		return
	}
	w.wroteHeader = true
	w.status = code
	if w.dropLength {
		return
	}
	if v := w.header.Get("Content-Length"); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
			w.cl = n
		} else {
			w.Header()
			delete(w.header, "Content-Length")
		}
	}
}

// bodyAllowed is false for the statuses that have no body.
func bodyAllowed(code int) bool {
	return code >= 200 && code != http.StatusNoContent && code != http.StatusNotModified
}

func (w *responseWriter) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if !bodyAllowed(w.status) {
		return 0, http.ErrBodyNotAllowed
	}
	if w.err != nil {
		return 0, w.err
	}
	if w.cl >= 0 && w.written+int64(len(w.pend))+int64(len(p)) > w.cl {
		return 0, http.ErrContentLength
	}
	if !w.committed {
		if len(w.pend)+len(p) <= pendMax {
			w.pend = append(w.pend, p...)
			return len(p), nil
		}
		w.commit(false)
	}
	return len(p), w.body(p)
}

// commit writes the head; final means the handler has ended, so that a
// body held back in full gets its length.
func (w *responseWriter) commit(final bool) {
	if w.committed {
		return
	}
	w.committed = true
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.header == nil {
		w.header = make(http.Header)
	}
	h := w.header
	switch {
	case !bodyAllowed(w.status):
	case w.cl >= 0:
	case final:
		w.cl = int64(len(w.pend))
		if w.req.Method != http.MethodHead || w.cl > 0 {
			w.Header()["Content-Length"] = []string{strconv.FormatInt(w.cl, 10)}
			h = w.header
		}
	case w.req.ProtoAtLeast(1, 1):
		w.chunked = true
	default:
		w.closeAfter = true // an HTTP/1.0 body ends with the connection
	}
	if w.req.Close || !w.req.ProtoAtLeast(1, 1) {
		w.closeAfter = true
	}
	bw := w.sc.bw
	b := bw.AvailableBuffer()
	b = append(b, "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(w.status), 10)
	b = append(b, ' ')
	if t := http.StatusText(w.status); t != "" {
		b = append(b, t...)
	} else {
		b = append(b, "status code "...)
		b = strconv.AppendInt(b, int64(w.status), 10)
	}
	b = append(b, "\r\n"...)
	for k, vs := range h {
		if hopHeader(k) || (w.dropLength && k == "Content-Length") || !validHeaderKey(k) {
			continue
		}
		for _, v := range vs {
			b = append(b, k...)
			b = append(b, ": "...)
			b = appendHeaderValue(b, v)
			b = append(b, "\r\n"...)
		}
	}
	if _, ok := h["Date"]; !ok {
		b = append(b, "Date: "...)
		b = append(b, httpDate()...)
		b = append(b, "\r\n"...)
	}
	if w.chunked {
		b = append(b, "Transfer-Encoding: chunked\r\n"...)
	}
	if w.closeAfter {
		b = append(b, "Connection: close\r\n"...)
	}
	b = append(b, "\r\n"...)
	_, _ = bw.Write(b)
	if len(w.pend) > 0 {
		p := w.pend
		w.pend = w.pend[:0]
		w.err = w.body(p)
	}
}

// body writes body bytes after the head. Chunked, the bytes written
// between two flushes go out as one chunk (up to chunkMax): a client
// reading a stream of small events decodes one chunk per flush, not one
// per event.
func (w *responseWriter) body(p []byte) error {
	if len(p) == 0 || w.req.Method == http.MethodHead {
		return nil
	}
	w.written += int64(len(p))
	if w.chunked {
		if len(w.chunk)+len(p) > chunkMax {
			w.emitChunk()
		}
		if len(p) <= chunkMax {
			w.chunk = append(w.chunk, p...)
			return w.err
		}
		w.writeChunk(p)
		return w.err
	}
	if _, err := w.sc.bw.Write(p); err != nil && w.err == nil {
		w.err = err
	}
	return w.err
}

// chunkMax bounds the bytes a chunked response holds before a flush.
const chunkMax = 32 << 10

// emitChunk writes the bytes held for the next chunk.
func (w *responseWriter) emitChunk() {
	if len(w.chunk) > 0 {
		w.writeChunk(w.chunk)
		w.chunk = w.chunk[:0]
	}
}

func (w *responseWriter) writeChunk(p []byte) {
	bw := w.sc.bw
	b := bw.AvailableBuffer()
	b = strconv.AppendInt(b, int64(len(p)), 16)
	b = append(b, "\r\n"...)
	_, _ = bw.Write(b)
	_, _ = bw.Write(p)
	if _, err := bw.WriteString("\r\n"); err != nil && w.err == nil {
		w.err = err
	}
}

// FlushError sends what was written: the head and the body so far.
func (w *responseWriter) FlushError() error {
	w.commit(false)
	w.emitChunk()
	if w.err != nil {
		return w.err
	}
	if err := w.sc.bw.Flush(); err != nil {
		w.err = err
		return err
	}
	return nil
}

// Flush implements http.Flusher.
func (w *responseWriter) Flush() { _ = w.FlushError() }

// finish ends the response after the handler returned.
func (w *responseWriter) finish() error {
	w.commit(true)
	if w.chunked {
		w.emitChunk()
		_, _ = w.sc.bw.WriteString("0\r\n\r\n")
	}
	if w.cl >= 0 && w.written < w.cl && w.req.Method != http.MethodHead && bodyAllowed(w.status) {
		// Fewer bytes than announced: only closing tells the client.
		w.closeAfter = true
	}
	if err := w.sc.bw.Flush(); err != nil {
		return err
	}
	return w.err
}

// hopHeader reports whether k is one of hopHeaders: never relayed.
func hopHeader(k string) bool {
	switch k {
	case "Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer",
		"Transfer-Encoding", "Upgrade":
		return true
	}
	return false
}

func validHeaderKey(k string) bool {
	if k == "" {
		return false
	}
	for i := range len(k) {
		c := k[i]
		if c <= ' ' || c == ':' || c >= 0x7f {
			return false
		}
	}
	return true
}

// appendHeaderValue appends v with line breaks turned into spaces (as
// net/http writes header values).
func appendHeaderValue(b []byte, v string) []byte {
	if strings.IndexByte(v, '\r') < 0 && strings.IndexByte(v, '\n') < 0 {
		return append(b, v...)
	}
	for i := range len(v) {
		c := v[i]
		if c == '\r' || c == '\n' {
			c = ' '
		}
		b = append(b, c)
	}
	return b
}

// httpDate is the Date header's value, formatted once a second.
func httpDate() string {
	now := time.Now()
	sec := now.Unix()
	if d := dateCache.Load(); d != nil && d.sec == sec {
		return d.s
	}
	d := &cachedDate{sec: sec, s: now.UTC().Format(http.TimeFormat)}
	dateCache.Store(d)
	return d.s
}

type cachedDate struct {
	sec int64
	s   string
}

var dateCache atomic.Pointer[cachedDate]

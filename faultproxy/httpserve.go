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
	sseBuf      []byte   // the event reader's buffer (relaySSE)
	urls        urlCache // the last request target parsed

	// The watch. n numbers the exchanges; exch is the running one's
	// number once its request body has been read (0 otherwise), and
	// pipelined says the buffer held bytes of a next request then; seen
	// and ticks are what the server's watchLoop saw (only it uses them).
	// wmu guards wgone, and holds a probe and the exchange's end apart
	// (probe, endWatch in httpwatch.go).
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
	rw := rawConnIO(sc.c) // reads and writes without waking sysmon (rawio_linux.go)
	sc.cr = connReader{c: rw, remain: math.MaxInt64}
	sc.br = bufio.NewReaderSize(&sc.cr, 16<<10)
	sc.bw = bufio.NewWriterSize(rw, 16<<10)
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
		req := readRequestFast(sc.br, &sc.body, &sc.urls)
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
			// The Host field is the request's Host, not a header (the
			// fast path leaves it out of the header itself).
			delete(req.Header, "Host")
		}
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
	c      io.Reader // the connection (rawConnIO)
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

package faultproxy

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// HTTPOptions configures a Streamable HTTP link.
type HTTPOptions struct {
	Options
	// Upstream is the server's MCP endpoint URL.
	Upstream string
	// Listen is the proxy's address; empty means 127.0.0.1:0.
	Listen string
	// Rules is the rule set to start with; nil means none.
	Rules *Rules
	// Transport carries requests upstream; nil means a clone of
	// http.DefaultTransport with compression left to the endpoints.
	Transport http.RoundTripper
	// Signal, when set, reaches the process group of a server the harness
	// started, for crash and pause faults.
	Signal func(Signal) error
	// Redact lists header names whose values the transcript hides, besides
	// those SensitiveHeader names (Authorization, Cookie, X-Api-Key, ...).
	Redact []string
	// Authorize, when set, is called on every request the proxy sends
	// upstream (each relayed POST, GET and DELETE, and each injected
	// POST), after the client's headers were copied: it adds the
	// credentials the proxy holds for its clients (`proxy --url
	// --header`, the harness's --header and OAuth token). The transcript
	// records the client's request as it arrived, so what it adds is
	// never recorded. An error fails the request (502, noted in the
	// transcript).
	Authorize func(req *http.Request) error
	// Transcript, when set, is used instead of a new one (to share it with
	// the server process's output).
	Transcript *Transcript
}

// HTTP is a fault proxy in front of a Streamable HTTP server: each POST
// body, each JSON response and each SSE event is a message that goes
// through the rules; with no rule active it relays bytes unchanged and
// flushes at every event boundary.
type HTTP struct {
	*core
	opts     HTTPOptions
	upstream *url.URL
	srv      *http.Server
	ln       net.Listener
	client   *http.Client
	exch     atomic.Int64
	handlers sync.WaitGroup
	redact   map[string]bool

	liveMu sync.Mutex
	live   map[*exchange]struct{} // event streams being relayed
}

// StartHTTP starts a proxy listening on opts.Listen in front of
// opts.Upstream.
func StartHTTP(ctx context.Context, opts HTTPOptions) (*HTTP, error) {
	up, err := url.Parse(opts.Upstream)
	if err != nil || up.Scheme == "" || up.Host == "" {
		return nil, fmt.Errorf("faultproxy: upstream %q is not an absolute URL", opts.Upstream)
	}
	ln, tr, err := listenNet(&opts.Options, &opts.Listen, opts.Transcript)
	if err != nil {
		return nil, err
	}
	rt := opts.Transport
	if rt == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.DisableCompression = true
		t.MaxIdleConnsPerHost = 64
		d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: fixedRecvBuffer}
		t.DialContext = d.DialContext
		rt = t
	}
	p := &HTTP{
		core:     newCore(ctx, tr, opts.Rules, opts.Signal),
		opts:     opts,
		upstream: up,
		ln:       ln,
		client:   &http.Client{Transport: rt, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		redact:   map[string]bool{},
	}
	for _, h := range opts.Redact {
		p.redact[http.CanonicalHeaderKey(h)] = true
	}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(fixedSendBuffers{ln}) }()
	p.tr.Add(Entry{Kind: EntryNote, Text: fmt.Sprintf("proxy %s → %s", p.URL(), opts.Upstream)})
	return p, nil
}

// listenNet fills in the defaults a network link shares (MaxFrame, a
// loopback address on a free port), opens its listener, and returns tr or
// a new transcript.
func listenNet(o *Options, listen *string, tr *Transcript) (net.Listener, *Transcript, error) {
	if o.MaxFrame <= 0 {
		o.MaxFrame = DefaultMaxFrame
	}
	if *listen == "" {
		*listen = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return nil, nil, fmt.Errorf("faultproxy: listen %s: %w", *listen, err)
	}
	if tr == nil {
		tr = NewTranscript(o.TranscriptSink)
	}
	return ln, tr, nil
}

// URL is the proxy's endpoint: the upstream URL with the proxy's address.
func (p *HTTP) URL() string {
	u := *p.upstream
	u.Scheme = "http"
	u.Host = p.ln.Addr().String()
	return u.String()
}

// CutStreams cuts every event stream being relayed, at once (as Cut does
// for one: the client sees its stream end, the upstream request is
// cancelled), and returns how many it cut. A herd test calls it when a
// message barrier says every client has its stream open.
func (p *HTTP) CutStreams(reason string) int {
	p.liveMu.Lock()
	exs := make([]*exchange, 0, len(p.live))
	for ex := range p.live {
		exs = append(exs, ex)
	}
	p.liveMu.Unlock()
	for _, ex := range exs {
		ex.Cut(reason)
	}
	return len(exs)
}

// Addr is the proxy's listening address.
func (p *HTTP) Addr() string { return p.ln.Addr().String() }

// Close stops held messages, closes every open stream and the listener,
// and waits (bounded) for the handlers to end.
func (p *HTTP) Close() error {
	p.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_ = p.srv.Shutdown(ctx)
	_ = p.srv.Close()
	done := make(chan struct{})
	go func() { p.handlers.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		p.tr.Note("proxy handlers did not drain within 3s")
	}
	// Keep-alive connections to the upstream would otherwise stay open
	// (with their goroutines) until the server times them out.
	p.client.CloseIdleConnections()
	return nil
}

// ServeHTTP relays one exchange.
func (p *HTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.handlers.Add(1)
	defer p.handlers.Done()
	n := p.exch.Add(1)
	ex := &exchange{p: p, w: w, r: r, name: fmt.Sprintf("%s#%d", r.Method, n)}
	ex.upCtx, ex.upStop = context.WithCancel(r.Context())
	defer ex.upStop()
	stop := context.AfterFunc(p.ctx, ex.upStop)
	defer stop()

	body, err := io.ReadAll(io.LimitReader(r.Body, int64(p.opts.MaxFrame)+1))
	if err != nil {
		p.tr.Add(Entry{Kind: EntryNote, Stream: ex.name, Text: "reading the request body: " + err.Error()})
		return
	}
	if len(body) > p.opts.MaxFrame {
		p.tr.Add(Entry{Kind: EntryNote, Stream: ex.name, Text: fmt.Sprintf("request body over %d bytes refused with 413", p.opts.MaxFrame)})
		http.Error(w, "request too large for the proxy", http.StatusRequestEntityTooLarge)
		return
	}
	ex.body = body
	p.tr.Add(Entry{Kind: EntryHTTP, Dir: ClientToServer, Stream: ex.name, HTTP: &HTTPInfo{Method: r.Method, Path: r.URL.RequestURI(), Header: p.headers(r.Header)}})
	msg := &Message{Seq: p.seq.Add(1), Dir: ClientToServer, Raw: body, At: p.tr.Since(), Stream: ex.name, HTTPMethod: r.Method}
	p.record(msg)
	p.apply(msg, reqSink{ex})
	ex.pend.Wait()

	ex.mu.Lock()
	forwarded, resp, fwdErr, replaced, reset := ex.forwarded, ex.resp, ex.fwdErr, ex.replaced, ex.reset
	ex.mu.Unlock()
	if reset {
		// Reset on the client's own message: no answer at all.
		if resp != nil {
			resp.Body.Close()
		}
		panic(http.ErrAbortHandler)
	}
	switch {
	case replaced != 0:
		ex.writeReplacement()
		return
	case !forwarded:
		ex.lost(msg)
		return
	case fwdErr != nil:
		ex.discardEarly()
		p.tr.Add(Entry{Kind: EntryNote, Stream: ex.name, Text: "upstream: " + fwdErr.Error()})
		if r.Context().Err() == nil {
			http.Error(w, "mcp-conform proxy: upstream unreachable: "+fwdErr.Error(), http.StatusBadGateway)
		}
		return
	}
	defer resp.Body.Close()
	p.tr.Add(Entry{Kind: EntryHTTP, Dir: ServerToClient, Stream: ex.name, HTTP: &HTTPInfo{Status: resp.StatusCode, Header: p.headers(resp.Header)}})
	if isEventStream(resp.Header) {
		ex.relaySSE(resp)
	} else {
		ex.relayBody(resp)
	}
	if ex.reset {
		panic(http.ErrAbortHandler)
	}
}

func isEventStream(h http.Header) bool {
	mt, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	return mt == "text/event-stream"
}

// headers copies h for the transcript, hiding secrets.
func (p *HTTP) headers(h http.Header) map[string][]string {
	out := make(map[string][]string, len(h))
	for k, v := range h {
		if p.redact[http.CanonicalHeaderKey(k)] || SensitiveHeader(k) {
			out[k] = []string{"[redacted]"}
			continue
		}
		out[k] = append([]string(nil), v...)
	}
	return out
}

// sensitiveWords mark a header name whose values are credentials.
var sensitiveWords = []string{"auth", "cookie", "token", "secret", "password", "passwd", "credential", "api-key", "apikey", "x-key", "signature"}

// SensitiveHeader reports whether a header's values are secrets by its
// name: Authorization, Proxy-Authorization, Cookie, Set-Cookie, and any
// name holding auth, token, secret, password, credential, api-key or
// signature (X-Api-Key, X-Auth-Token, ...), but not WWW-Authenticate or
// Authentication-Info, whose values are public (a 401's challenge). The
// transcript shows their values as "[redacted]". (reports.SensitiveHeader
// is the same rule for what the reports show.)
func SensitiveHeader(name string) bool {
	c := http.CanonicalHeaderKey(name)
	if c == "Www-Authenticate" || c == "Authentication-Info" {
		return false
	}
	l := strings.ToLower(c)
	for _, w := range sensitiveWords {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// upstreamRecvBuffer is the receive buffer of the proxy's upstream
// connections. It is fixed (setting it turns the kernel's autotuning off):
// a throttled stream is read slowly, and an autotuned buffer would grow to
// tens of MiB, letting the server write a whole flood into the kernel as
// though the consumer were fast. Fixed, backpressure reaches the server
// after a few hundred KiB, as it would from a real slow consumer.
const upstreamRecvBuffer = 256 << 10

// downstreamSendBuffer is the send buffer of the connections the proxy
// accepts from clients, fixed for the reason upstreamRecvBuffer is: a
// client that reads slowly must hold the relay back within a few hundred
// KiB, not after megabytes of autotuned kernel buffer.
const downstreamSendBuffer = 256 << 10

// fixedSendBuffers sets downstreamSendBuffer on every accepted connection.
type fixedSendBuffers struct{ net.Listener }

func (l fixedSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(downstreamSendBuffer)
	}
	return c, err
}

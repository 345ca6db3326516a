package faultproxy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
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
	// Transport carries requests upstream. Nil means: for an http://
	// upstream, each client connection's own upstream connection
	// (httpupstream.go), with a clone of http.DefaultTransport
	// (compression left to the endpoints, 64 idle connections per host)
	// for duplicates and injected messages; for any other upstream, that
	// clone for everything. A Transport given here carries everything.
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
// flushes at every event boundary, except that events that have already
// arrived together leave together (nothing waits for bytes to come).
type HTTP struct {
	*core
	opts     HTTPOptions
	upstream *url.URL
	srv      *httpServer
	ln       net.Listener
	client   *http.Client
	exch     atomic.Int64
	handlers sync.WaitGroup
	redact   []string // canonical header names the transcript hides
	// secrets is secret's answers, header name → secret: a map that is
	// never changed once published (a new name publishes a copy with it,
	// under secretsMu), so that the lookup of each header name of each
	// head is a plain map read.
	secrets   atomic.Pointer[map[string]bool]
	secretsMu sync.Mutex

	liveMu sync.Mutex
	live   map[*exchange]struct{} // event streams being relayed
	// idle are closed when live next becomes empty (WaitStreamsEnded).
	idle []chan struct{}
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
	var direct *upstreamDialer
	if rt == nil && up.Scheme == "http" {
		// Each client connection gets an upstream connection of its own
		// (httpupstream.go); the client below carries only what that
		// cannot: a duplicate delivery, an injected message.
		direct = newUpstreamDialer(up)
	}
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
		redact:   []string{"Authorization", "Cookie", "Set-Cookie", "Proxy-Authorization"},
	}
	for _, h := range opts.Redact {
		if k := http.CanonicalHeaderKey(h); !slices.Contains(p.redact, k) {
			p.redact = append(p.redact, k)
		}
	}
	p.srv = newHTTPServer(p.ctx, p, fixedSendBuffers{ln}, direct)
	go p.srv.serve()
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

// WaitStreamsEnded waits until no event stream is being relayed, or ctx
// ends; then it says how many were still open. A herd phase waits for the
// previous phase's streams to end, so that its own cut counts only its own.
func (p *HTTP) WaitStreamsEnded(ctx context.Context) error {
	p.liveMu.Lock()
	if len(p.live) == 0 {
		p.liveMu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	p.idle = append(p.idle, ch)
	p.liveMu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		p.liveMu.Lock()
		n := len(p.live)
		p.liveMu.Unlock()
		return fmt.Errorf("%d event streams still open: %w", n, ctx.Err())
	}
}

// Addr is the proxy's listening address.
func (p *HTTP) Addr() string { return p.ln.Addr().String() }

// Close stops held messages, closes every open stream and the listener,
// and waits (bounded) for the handlers to end.
func (p *HTTP) Close() error {
	p.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	p.srv.shutdown(ctx)
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
	ex := &exchange{p: p, w: w, r: r, name: exchangeName(r.Method, n), cctx: r.Context()}
	if cw, ok := w.(*responseWriter); ok {
		// The proxy's own server: the contexts are the connection's, and
		// stopping the upstream request interrupts its connection.
		ex.sc = cw.sc
		ex.cctx = ex.sc.ctx
		ex.own.parent = ex.sc.upParent
		ex.upCtx = &ex.own
		defer ex.upStop()
	} else {
		ex.upCtx, ex.upCancel = context.WithCancel(r.Context())
		defer ex.upStop()
		stop := context.AfterFunc(p.ctx, ex.upCancel)
		defer stop()
	}

	body, err := readBody(r.Body, r.ContentLength, p.opts.MaxFrame)
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
	ex.uri = r.URL.RequestURI()
	ex.rec = new(exchangeRecord)
	ex.rec.req = HTTPInfo{Method: r.Method, Path: ex.uri, Header: p.headers(r.Header)}
	p.tr.add(&Entry{Kind: EntryHTTP, Dir: ClientToServer, Stream: ex.name, HTTP: &ex.rec.req})
	msg := &ex.rec.msgs[0]
	*msg = Message{Seq: p.seq.Add(1), Dir: ClientToServer, Raw: body, At: p.tr.Since(), Stream: ex.name, HTTPMethod: r.Method,
		Session: r.Header.Get("Mcp-Session-Id")}
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
		if ex.cctx.Err() == nil {
			http.Error(w, "mcp-conform proxy: upstream unreachable: "+fwdErr.Error(), http.StatusBadGateway)
		}
		return
	}
	defer resp.Body.Close()
	ex.rec.resp = HTTPInfo{Status: resp.StatusCode, Header: p.headers(resp.Header)}
	p.tr.add(&Entry{Kind: EntryHTTP, Dir: ServerToClient, Stream: ex.name, HTTP: &ex.rec.resp})
	if isEventStream(resp.Header) {
		ex.relaySSE(resp)
	} else {
		ex.relayBody(resp)
	}
	if ex.reset {
		panic(http.ErrAbortHandler)
	}
}

// exchangeRecord is what the transcript and the rules keep of an exchange
// with a JSON answer, in one allocation: its two heads and two messages
// (the request's, the answer's; an event stream's events are carved
// elsewhere). Each part is written once, before it is shared.
type exchangeRecord struct {
	req, resp HTTPInfo
	msgs      [2]Message
}

// exchangeName is "METHOD#n", in one allocation.
func exchangeName(method string, n int64) string {
	var b [40]byte
	s := append(append(b[:0], method...), '#')
	return string(strconv.AppendInt(s, n, 10))
}

// isEventStream reports whether the media type of h's Content-Type is
// text/event-stream (what mime.ParseMediaType would say of it, without
// parsing the parameters).
func isEventStream(h http.Header) bool {
	mt, _, _ := strings.Cut(h.Get("Content-Type"), ";")
	return strings.EqualFold(strings.TrimSpace(mt), "text/event-stream")
}

// headers is h for the transcript, with secrets hidden. The request and
// response heads are not changed once recorded (the proxy sends copies on),
// so the transcript shares h, or, when it holds a secret, a copy that
// shares every other value.
func (p *HTTP) headers(h http.Header) map[string][]string {
	secret := false
	for k := range h {
		if p.secret(k) {
			secret = true
			break
		}
	}
	if !secret {
		return h
	}
	out := make(map[string][]string, len(h))
	for k, v := range h {
		if p.secret(k) {
			out[k] = redactedValue
			continue
		}
		out[k] = v
	}
	return out
}

var redactedValue = []string{"[redacted]"}

// secret reports whether the transcript hides header k: a name given in
// Options.Redact, or one SensitiveHeader names. The answer is remembered
// per name (a proxy sees the same few names on every message), for up to
// maxSecretNames names; others are decided each time.
func (p *HTTP) secret(k string) bool {
	m := p.secrets.Load()
	if m != nil {
		if v, ok := (*m)[k]; ok {
			return v
		}
	}
	s := p.secretOf(k)
	p.secretsMu.Lock()
	defer p.secretsMu.Unlock()
	m = p.secrets.Load()
	if v, ok := secretsOrEmpty(m)[k]; ok {
		return v
	}
	if len(secretsOrEmpty(m)) < maxSecretNames {
		next := make(map[string]bool, len(secretsOrEmpty(m))+1)
		for name, v := range secretsOrEmpty(m) {
			next[name] = v
		}
		// A copy: k may be a part of a whole request head.
		next[strings.Clone(k)] = s
		p.secrets.Store(&next)
	}
	return s
}

func secretsOrEmpty(m *map[string]bool) map[string]bool {
	if m == nil {
		return nil
	}
	return *m
}

// maxSecretNames bounds the header names secret remembers.
const maxSecretNames = 512

func (p *HTTP) secretOf(k string) bool {
	for _, r := range p.redact {
		if len(r) == len(k) && (r == k || r == http.CanonicalHeaderKey(k)) {
			return true
		}
	}
	return SensitiveHeader(k)
}

// sensitiveWords mark a header name whose values are credentials.
var sensitiveWords = []string{"auth", "cookie", "token", "secret", "password", "passwd", "credential", "api-key", "apikey", "x-key", "signature"}

// SensitiveHeader reports whether a header's values are secrets by its
// name: Authorization, Proxy-Authorization, Cookie, Set-Cookie, and any
// name holding auth, token, secret, password, credential, api-key or
// signature (X-Api-Key, X-Auth-Token, ...), but not WWW-Authenticate or
// Authentication-Info, whose values are public (a 401's challenge). The
// transcript shows their values as "[redacted]". (reports.SensitiveHeader
// is the same rule for what the reports show.) It does not allocate for a
// name of up to 128 bytes: the proxy asks it of every header name it has
// not seen before.
func SensitiveHeader(name string) bool {
	if strings.EqualFold(name, "Www-Authenticate") || strings.EqualFold(name, "Authentication-Info") {
		return false
	}
	// The name in lower case, once (ASCII only: the words are ASCII, and
	// a non-ASCII byte matches none of them).
	var buf [128]byte
	var l []byte
	if len(name) <= len(buf) {
		l = buf[:len(name)]
	} else {
		l = make([]byte, len(name))
	}
	for i := range len(name) {
		c := name[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		l[i] = c
	}
	for _, w := range sensitiveWords {
		if bytes.Contains(l, []byte(w)) {
			return true
		}
	}
	return false
}

// readBody reads a message body of up to max bytes, and one byte more when
// it is longer: in one allocation of its size when the length is known.
// It reads to the end of a body within max (a server that waits for the
// end of the body to act sees it).
func readBody(r io.Reader, length int64, max int) ([]byte, error) {
	if length < 0 || length > int64(max) {
		return io.ReadAll(io.LimitReader(r, int64(max)+1))
	}
	b := make([]byte, length, length+1)
	if n, err := io.ReadFull(r, b); err != nil {
		return b[:n], err
	}
	// The end: nothing more to read for a body of this length.
	n, err := r.Read(b[length:cap(b)])
	b = b[:length+int64(n)]
	if err == io.EOF {
		err = nil
	}
	if n > 0 {
		rest, rerr := io.ReadAll(io.LimitReader(r, int64(max)+1-int64(len(b))))
		b = append(b, rest...)
		err = rerr
	}
	return b, err
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

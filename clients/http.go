package clients

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// DefaultMaxEventSize bounds one SSE event, and one non-SSE response body,
// when HTTPOptions.MaxEventSize is zero.
const DefaultMaxEventSize = DefaultMaxLine

// rawSSEWindow bounds how long RawPOST reads an SSE response.
const rawSSEWindow = 2 * time.Second

// Errors of the HTTP wire client.
var (
	// ErrClosedByClient is (or is wrapped by) HTTPCall.EndErr when the
	// client ended the stream: HTTPCall.Close, HTTPWire.Cancel in the modern
	// era, HTTPWire.Close, or the end of the context given to Start.
	ErrClosedByClient = errors.New("clients: stream closed by the client")
	// ErrStreamCut is wrapped by HTTPCall.EndErr when the response body
	// ended before the end of the HTTP message (a chunked body without its
	// last chunk, or fewer bytes than Content-Length): the server or an
	// intermediary cut the connection.
	ErrStreamCut = errors.New("clients: response body cut before the end of the HTTP response")
	// ErrNoResponse is wrapped by HTTPCall.Wait when the response stream
	// ended without a JSON-RPC response for the request.
	ErrNoResponse = errors.New("clients: the response stream ended without a response for the request")
	// ErrBodyTooLarge is wrapped by HTTPCall.EndErr (and returned by
	// RawPOST) when a non-SSE body exceeds HTTPOptions.MaxEventSize.
	ErrBodyTooLarge = errors.New("clients: response body exceeds the maximum size")
	// ErrUnexpectedStatus is wrapped by the errors of Negotiate and Cancel
	// when the server answered with an HTTP status the step does not allow.
	ErrUnexpectedStatus = errors.New("clients: unexpected HTTP status")
)

// HTTPOptions configures an HTTPWire. The zero value is usable.
type HTTPOptions struct {
	// Client sends every request. The default has no overall timeout (SSE
	// streams are long), 10s dial and TLS handshake timeouts, a 60s
	// response-header timeout, no transparent gzip (bytes stay as sent; no
	// Accept-Encoding is added) and does not follow redirects. Contexts are
	// the main bound.
	Client *http.Client
	// Header holds extra headers for every request except RawPOST (e.g.
	// Origin, Authorization). They are applied after the computed ones and
	// replace a computed header of the same name.
	Header http.Header
	// ClientName and ClientVersion identify the client (clientInfo, and the
	// User-Agent "name/version"); defaults DefaultClientName and
	// DefaultClientVersion.
	ClientName    string
	ClientVersion string
	// ProbeTimeout bounds Negotiate's server/discover probe, default
	// DefaultProbeTimeout.
	ProbeTimeout time.Duration
	// MaxEventSize bounds one SSE event and one non-SSE response body,
	// default DefaultMaxEventSize.
	MaxEventSize int
	// LenientSSE makes the SSE parser lenient (sse.Options.Lenient); by
	// default it is strict.
	LenientSSE bool
	// MaxMessages bounds the log of JSON-RPC messages (Messages), default
	// DefaultMaxMessages: beyond it the oldest are evicted (see Evicted);
	// Seq numbers keep counting.
	MaxMessages int
}

func (o HTTPOptions) withDefaults() HTTPOptions {
	fillDefaults(&o.ClientName, &o.ClientVersion, &o.ProbeTimeout, &o.MaxMessages)
	if o.MaxEventSize <= 0 {
		o.MaxEventSize = DefaultMaxEventSize
	}
	o.Header = o.Header.Clone()
	return o
}

// HTTPWire is a wire-level MCP client for the Streamable HTTP transport, in
// both protocol eras. It records everything the server sends: each response's
// status and headers, every SSE event (comments, ids, retry fields, raw
// bytes) with its arrival time, and every JSON-RPC message of every stream in
// one arrival-ordered log (Messages). Outbound, a check chooses what is sent:
// requests with explicit ids (Start), extra or wrong headers (StartHeader),
// raw bytes (RawPOST), a GET stream with or without Last-Event-ID (OpenGET),
// DELETE.
//
// Every response body is read by one goroutine, which ends at the end of the
// body, when the client closes the stream, when the request's context ends,
// or at Close. All methods are safe for concurrent use (see Conn for the
// rules).
type HTTPWire struct {
	core // the message log, the session, the ids; core.mu guards the rest

	endpoint  string
	opts      HTTPOptions
	client    *http.Client
	ownClient bool

	getN  atomic.Int64
	postN atomic.Int64
	delN  atomic.Int64
	rawN  atomic.Int64

	// base is cancelled by Close; every request's context follows it.
	base       context.Context
	baseCancel context.CancelFunc
	wg         sync.WaitGroup

	sessionID string
}

// NewHTTPWire returns a client for the MCP endpoint URL. It starts nothing;
// Close it to end every open stream.
func NewHTTPWire(endpoint string, opts HTTPOptions) *HTTPWire {
	opts = opts.withDefaults()
	w := &HTTPWire{core: newCore(opts.MaxMessages), endpoint: endpoint, opts: opts, client: opts.Client}
	if w.client == nil {
		w.client = defaultHTTPClient()
		w.ownClient = true
	}
	w.base, w.baseCancel = context.WithCancel(context.Background())
	return w
}

// NewHTTPClient returns a client configured as HTTPOptions.Client's
// default, for a caller that wraps its Transport (credentials) and passes
// it as HTTPOptions.Client.
func NewHTTPClient() *http.Client { return defaultHTTPClient() }

func defaultHTTPClient() *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           d.DialContext,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: 60 * time.Second,
			ExpectContinueTimeout: time.Second,
			IdleConnTimeout:       90 * time.Second,
			MaxIdleConnsPerHost:   16,
			DisableCompression:    true,
			ForceAttemptHTTP2:     true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Endpoint returns the MCP endpoint URL.
func (w *HTTPWire) Endpoint() string { return w.endpoint }

// Options returns the options in effect (defaults filled in).
func (w *HTTPWire) Options() HTTPOptions { return w.opts }

// SessionID returns the legacy Mcp-Session-Id sent on every request ("" if
// none).
func (w *HTTPWire) SessionID() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sessionID
}

// SetSessionID replaces the Mcp-Session-Id sent on every later request
// ("" sends none), e.g. to probe unknown or foreign sessions.
func (w *HTTPWire) SetSessionID(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sessionID = id
}

func (w *HTTPWire) state() (Session, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.session, w.sessionID
}

// Close ends every open stream (their EndErr is ErrClosedByClient), waits for
// every reader goroutine and in-flight request, and makes later requests fail
// with ErrClosed. It is idempotent.
func (w *HTTPWire) Close() error {
	w.mu.Lock()
	if !w.ended {
		w.endLocked(ErrClosed)
	}
	w.mu.Unlock()
	w.baseCancel()
	w.wg.Wait()
	if w.ownClient {
		w.client.CloseIdleConnections()
	}
	return nil
}

// begin registers one exchange. The returned context ends when ctx ends, when
// the caller calls cancel, or at Close (cause ErrClosedByClient); done must be
// called once the exchange is over.
func (w *HTTPWire) begin(ctx context.Context) (rctx context.Context, cancel context.CancelCauseFunc, done func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, nil, err
	}
	w.mu.Lock()
	if w.ended {
		w.mu.Unlock()
		return nil, nil, nil, ErrClosed
	}
	w.wg.Add(1)
	w.mu.Unlock()
	rctx, cancel = context.WithCancelCause(ctx)
	stop := context.AfterFunc(w.base, func() { cancel(ErrClosedByClient) })
	var once sync.Once
	done = func() {
		once.Do(func() {
			stop()
			cancel(nil)
			w.wg.Done()
		})
	}
	return rctx, cancel, done, nil
}

// ---- building requests ----

// mcpNameParam is the params member Mcp-Name mirrors, per method
// (2026-07-28 streamable-http.mdx "Standard Request Headers"; the tasks
// extension adds taskId for tasks/get, tasks/update and tasks/cancel).
var mcpNameParam = map[string]string{
	"tools/call":     "name",
	"prompts/get":    "name",
	"resources/read": "uri",
	"tasks/get":      "taskId",
	"tasks/update":   "taskId",
	"tasks/cancel":   "taskId",
}

// EncodeHeaderValue returns v as an Mcp-Name / Mcp-Param-* header value: as
// is when it is plain visible ASCII (spaces and tabs inside allowed), else
// the Base64 sentinel form "=?base64?...?=" (2026-07-28 streamable-http.mdx
// "Value Encoding"); values that look like the sentinel are encoded too.
func EncodeHeaderValue(v string) string {
	safe := v == strings.TrimSpace(v) && !(strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?="))
	for i := 0; safe && i < len(v); i++ {
		c := v[i]
		safe = c == '\t' || (c >= 0x20 && c <= 0x7e)
	}
	if safe {
		return v
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?="
}

func (w *HTTPWire) userAgent() string {
	return w.opts.ClientName + "/" + w.opts.ClientVersion
}

// applyHeader copies src into dst, each key replacing dst's values; a key
// with no values deletes the header.
func applyHeader(dst, src http.Header) {
	for k, vs := range src {
		dst.Del(k)
		for _, v := range vs {
			dst.Add(k, v)
		}
	}
}

// baseHeader holds what every request but RawPOST carries.
func (w *HTTPWire) baseHeader(s Session, sid string) http.Header {
	h := http.Header{}
	h.Set("User-Agent", w.userAgent())
	if s.Version != "" {
		h.Set(HeaderProtocolVersion, s.Version)
	}
	if sid != "" {
		h.Set(HeaderSessionID, sid)
	}
	return h
}

// postHeader is the header of a POSTed request or notification.
func (w *HTTPWire) postHeader(s Session, sid, method string, params map[string]any, extra http.Header) http.Header {
	h := w.baseHeader(s, sid)
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	if s.Era == EraModern {
		h.Set(HeaderMethod, method)
		if key, ok := mcpNameParam[method]; ok {
			if v, ok := params[key].(string); ok {
				h.Set(HeaderName, EncodeHeaderValue(v))
			}
		}
	}
	applyHeader(h, w.opts.Header)
	applyHeader(h, extra)
	return h
}

func (w *HTTPWire) newRequest(ctx context.Context, method string, body []byte, h http.Header) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, w.endpoint, rd)
	if err != nil {
		return nil, fmt.Errorf("clients: build %s request: %w", method, err)
	}
	req.Header = h
	if host := h.Get("Host"); host != "" {
		req.Host = host // Go sends req.Host, never a Host entry of Header
	}
	if _, ok := h["User-Agent"]; !ok {
		// Go would add its own; send exactly the headers given.
		req.Header["User-Agent"] = []string{""}
	}
	return req, nil
}

// ---- requests ----

// Start POSTs a request with an explicit id and returns once the response
// headers arrived (or the request failed: an error is returned only when no
// HTTP response was received). Any status is returned as a call, whose
// body is then read by one goroutine until it ends; ctx bounds the whole
// exchange: when it ends, the stream is closed (in 2026-07-28 that is a
// cancellation).
//
// Headers: Content-Type: application/json; Accept: application/json,
// text/event-stream; User-Agent; MCP-Protocol-Version (the session's
// version, once negotiated); Mcp-Session-Id (when set); in the modern era
// Mcp-Method and, for tools/call, prompts/get (params.name),
// resources/read (params.uri) and tasks/get|update|cancel (params.taskId),
// Mcp-Name (Base64-sentinel encoded when needed); then HTTPOptions.Header.
// The body is {"jsonrpc":"2.0","id":id,"method":method,"params":...}; in the
// modern era params gets the per-request _meta keys protocolVersion and
// clientCapabilities, merged without overwriting keys the caller set (the
// caller's maps are not modified); in the legacy era params is sent as given
// and omitted when nil.
func (w *HTTPWire) Start(ctx context.Context, id jsonrpc.ID, method string, params map[string]any) (*HTTPCall, error) {
	return w.StartHeader(ctx, id, method, params, nil)
}

// StartHeader is Start with extra headers applied last: each key replaces the
// computed header of that name, and a key with no values removes it (e.g.
// http.Header{"Mcp-Name": {"wrong"}} or {"Mcp-Method": nil}).
func (w *HTTPWire) StartHeader(ctx context.Context, id jsonrpc.ID, method string, params map[string]any, extra http.Header) (*HTTPCall, error) {
	s, sid := w.state()
	return w.startAs(ctx, s, sid, id, method, params, extra)
}

func (w *HTTPWire) startAs(ctx context.Context, s Session, sid string, id jsonrpc.ID, method string, params map[string]any, extra http.Header) (*HTTPCall, error) {
	body, err := encodeRequest(s, id, method, params)
	if err != nil {
		return nil, err
	}
	body = bytes.TrimSuffix(body, []byte("\n"))
	return w.open(ctx, http.MethodPost, body, w.postHeader(s, sid, method, params, extra), id, id.String())
}

// Call sends a request with a fresh id (NewID) and waits for its response.
// A JSON-RPC error response is returned as a Message, not as an error; a
// stream that ended without a response gives an ErrNoResponse error. The
// stream stays open after the response until the server ends it (anything
// sent afterwards is still recorded), at the latest when ctx ends.
func (w *HTTPWire) Call(ctx context.Context, method string, params map[string]any) (Message, error) {
	return call(ctx, w, method, params)
}

// Send is Start for any Conn: the request's call as an InFlight.
func (w *HTTPWire) Send(ctx context.Context, id jsonrpc.ID, method string, params map[string]any) (InFlight, error) {
	c, err := w.Start(ctx, id, method, params)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// OpenGET opens a GET stream on the endpoint: the standalone stream of the
// legacy era, or a resumption when lastEventID is not "" (it is sent as
// Last-Event-ID, and only then). Headers: Accept: text/event-stream,
// User-Agent, MCP-Protocol-Version and Mcp-Session-Id when known, then
// HTTPOptions.Header. The request is sent in either era (in the modern era,
// to observe the 405). It returns once the response headers arrived; the
// call's stream is named "GET#n" and it has no id (Wait fails).
func (w *HTTPWire) OpenGET(ctx context.Context, lastEventID string) (*HTTPCall, error) {
	s, sid := w.state()
	h := w.baseHeader(s, sid)
	h.Set("Accept", "text/event-stream")
	if lastEventID != "" {
		h.Set(HeaderLastEventID, lastEventID)
	}
	applyHeader(h, w.opts.Header)
	return w.open(ctx, http.MethodGet, nil, h, "", fmt.Sprintf("GET#%d", w.getN.Add(1)))
}

// Notify POSTs a JSON-RPC notification (params marshalled as given, omitted
// when nil; nothing is injected in either era) with the headers of Start
// (Mcp-Method in the modern era) and reads the whole response body (bounded
// by MaxEventSize); JSON-RPC messages in it are recorded on stream "POST#n".
// It returns the HTTP status (202 for an accepted notification); err is only
// for a failed exchange (status 0 when no response arrived; the status with an
// error when the body could not be read to its end).
func (w *HTTPWire) Notify(ctx context.Context, method string, params any) (status int, err error) {
	body, err := encodeNotification(method, params)
	if err != nil {
		return 0, err
	}
	body = bytes.TrimSuffix(body, []byte("\n"))
	s, sid := w.state()
	var pm map[string]any
	if m, ok := params.(map[string]any); ok {
		pm = m
	}
	h := w.postHeader(s, sid, method, pm, nil)
	resp, _, err := w.exchange(ctx, http.MethodPost, body, h, fmt.Sprintf("POST#%d", w.postN.Add(1)), false)
	if resp == nil {
		return 0, err
	}
	return resp.StatusCode, err
}

// Delete sends DELETE to the endpoint with Mcp-Session-Id (when set),
// MCP-Protocol-Version (when known), User-Agent and HTTPOptions.Header, and
// returns the status. The session id is kept (SetSessionID("") forgets it),
// so a check can show the deleted session now gets 404. Errors as for
// Notify.
func (w *HTTPWire) Delete(ctx context.Context) (status int, err error) {
	s, sid := w.state()
	h := w.baseHeader(s, sid)
	applyHeader(h, w.opts.Header)
	resp, _, err := w.exchange(ctx, http.MethodDelete, nil, h, fmt.Sprintf("DELETE#%d", w.delN.Add(1)), false)
	if resp == nil {
		return 0, err
	}
	return resp.StatusCode, err
}

// RawPOST sends exactly body with exactly header (nothing is added: no
// Content-Type, Accept, version or session header, not even Go's default
// User-Agent; Go's transport still writes Host and Content-Length). A "Host"
// entry in header replaces the Host sent (to probe DNS-rebinding defences). It
// returns the response, whose Body is replaced by a reader over the returned
// bytes, and the body bytes: the whole body (at most MaxEventSize bytes;
// ErrBodyTooLarge beyond it), or for an SSE response what arrived until the
// first event carrying data, the end of the body, or 2s, whichever comes
// first. JSON-RPC messages in it are recorded on stream "RAW#n".
func (w *HTTPWire) RawPOST(ctx context.Context, body []byte, header http.Header) (*http.Response, []byte, error) {
	h := header.Clone()
	if h == nil {
		h = http.Header{}
	}
	if body == nil {
		body = []byte{}
	}
	return w.exchange(ctx, http.MethodPost, body, h, fmt.Sprintf("RAW#%d", w.rawN.Add(1)), true)
}

// exchange performs one request whose body is read here (not streamed):
// Notify, Delete and RawPOST. sseWindow: an SSE body is read only until the
// first data event or rawSSEWindow.
func (w *HTTPWire) exchange(ctx context.Context, method string, body []byte, h http.Header, stream string, sseWindow bool) (*http.Response, []byte, error) {
	rctx, cancel, done, err := w.begin(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer done()
	req, err := w.newRequest(rctx, method, body, h)
	if err != nil {
		return nil, nil, err
	}
	resp, err := w.client.Do(req)
	if err != nil {
		return nil, nil, w.requestErr(rctx, method, err)
	}
	c := w.newCall(method, body, req.Header, "", stream, resp)
	c.raw = &bytes.Buffer{}
	var rerr error
	if c.isSSE && sseWindow {
		t := time.AfterFunc(rawSSEWindow, func() { cancel(errRawWindow) })
		rerr = c.readSSE(resp.Body, true)
		t.Stop()
	} else if c.isSSE {
		rerr = c.readSSE(resp.Body, false)
	} else {
		rerr = c.readBody(resp.Body)
	}
	_ = resp.Body.Close()
	raw := c.rawBytes()
	resp.Body = io.NopCloser(bytes.NewReader(raw))
	switch {
	case rerr == nil, errors.Is(rerr, io.EOF), errors.Is(context.Cause(rctx), errRawWindow), errors.Is(rerr, errStopRead):
		return resp, raw, nil
	case rctx.Err() != nil:
		return resp, raw, w.requestErr(rctx, method, rerr)
	default:
		return resp, raw, rerr
	}
}

// errRawWindow ends RawPOST's read of an SSE body after rawSSEWindow.
var errRawWindow = errors.New("clients: raw SSE read window over")

// requestErr explains a failed exchange: ErrClosed after Close, ctx's error
// when ctx ended, else the transport error.
func (w *HTTPWire) requestErr(rctx context.Context, method string, err error) error {
	if errors.Is(context.Cause(rctx), ErrClosedByClient) {
		return ErrClosed
	}
	if rctx.Err() != nil {
		return fmt.Errorf("clients: HTTP %s: %w", method, context.Cause(rctx))
	}
	return fmt.Errorf("clients: HTTP %s: %w", method, err)
}

// open sends a request whose body is streamed by a reader goroutine.
func (w *HTTPWire) open(ctx context.Context, method string, body []byte, h http.Header, id jsonrpc.ID, stream string) (*HTTPCall, error) {
	rctx, cancel, done, err := w.begin(ctx)
	if err != nil {
		return nil, err
	}
	req, err := w.newRequest(rctx, method, body, h)
	if err != nil {
		done()
		return nil, err
	}
	resp, err := w.client.Do(req)
	if err != nil {
		err = w.requestErr(rctx, method, err)
		done()
		return nil, err
	}
	c := w.newCall(method, body, req.Header, id, stream, resp)
	c.cancel = cancel
	go c.run(rctx, resp.Body, done)
	return c, nil
}

// mediaType returns the lower-case media type of a Content-Type value.
func mediaType(ct string) string {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		mt, _, _ = strings.Cut(ct, ";")
	}
	return strings.ToLower(strings.TrimSpace(mt))
}

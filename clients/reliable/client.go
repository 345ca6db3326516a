package reliable

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// Signal is how a request was cancelled on the wire.
type Signal string

// Cancellation signals.
const (
	// SignalNone: nothing was sent.
	SignalNone Signal = ""
	// SignalNotification: notifications/cancelled (stdio in every version,
	// Streamable HTTP in 2025-06-18 / 2025-11-25).
	SignalNotification Signal = "notifications/cancelled"
	// SignalStreamClose: the request's response stream was closed
	// (Streamable HTTP in 2026-07-28, where the close is the cancellation).
	SignalStreamClose Signal = "stream-close"
)

// EventKind classifies what arrives for a request.
type EventKind int

// Event kinds.
const (
	// EvProgress is a notifications/progress for the request's token.
	EvProgress EventKind = iota
	// EvHeartbeat is a transport heartbeat (an SSE comment).
	EvHeartbeat
	// EvResponse is the request's response.
	EvResponse
)

// Event is one thing that arrived for a request.
type Event struct {
	Kind EventKind
	Msg  clients.Message
}

// Exchange is one request in flight on a transport.
type Exchange interface {
	// Next returns the next event for the request. It fails with ctx's
	// error, or with an error wrapping clients.ErrConnEnded when the
	// stream or connection ended.
	Next(ctx context.Context) (Event, error)
	// Cancel sends the transport's cancellation for the request and says
	// which signal it used.
	Cancel(ctx context.Context, reason string) (Signal, error)
	// ID is the request's JSON-RPC id.
	ID() jsonrpc.ID
}

// Transport starts requests.
type Transport interface {
	// Start sends method with params, carrying token as its progress
	// token, under a fresh request id.
	Start(ctx context.Context, method string, params map[string]any, token jsonrpc.ID) (Exchange, error)
}

// Options configures a Client.
type Options struct {
	// ID names the client: it seeds backoff jitter and prefixes progress
	// tokens. Default "reliable".
	ID string
	// Idle is the idle timeout, reset by progress (zero: none).
	Idle time.Duration
	// Max is the maximum timeout, never reset (zero: none).
	Max time.Duration
	// Reason goes into notifications/cancelled. Default "timeout".
	Reason string
	// CancelTimeout bounds sending the cancellation, default 5 s.
	CancelTimeout time.Duration
	// Defect switches on one deliberate bug (the client mutants of
	// `mcp-conform client`); NoDefect is the correct client. The client
	// acts on the defects of its clocks, cancellation, late responses,
	// progress tokens and retries.
	Defect Defect
}

// lateWait is how long the accept-late-response defect waits, after a
// timeout, for a late response to return as the outcome.
const lateWait = 2 * time.Second

// Client is the reliable client: each Call runs under a Coordinator and,
// when a clock expires, the transport's cancellation is sent and whatever
// arrives later is ignored.
type Client struct {
	t    Transport
	opts Options
	n    atomic.Int64

	ctx    context.Context
	stop   context.CancelFunc
	pumps  sync.WaitGroup
	closed atomic.Bool

	// firstID is the id of the first call (the reuse-request-id defect).
	firstMu sync.Mutex
	firstID jsonrpc.ID
}

// New returns a client over t.
func New(t Transport, opts Options) *Client {
	if opts.ID == "" {
		opts.ID = "reliable"
	}
	if opts.Reason == "" {
		opts.Reason = "timeout"
	}
	if opts.CancelTimeout <= 0 {
		opts.CancelTimeout = 5 * time.Second
	}
	ctx, stop := context.WithCancel(context.Background())
	return &Client{t: t, opts: opts, ctx: ctx, stop: stop}
}

// Close stops listening for late events of ended requests.
func (c *Client) Close() {
	c.closed.Store(true)
	c.stop()
	c.pumps.Wait()
}

// Outcome is how a Call ended.
type Outcome struct {
	// State is the final state.
	State State
	// ID is the request's JSON-RPC id (zero when it could not be sent).
	ID jsonrpc.ID
	// Token is the progress token the request carried.
	Token jsonrpc.ID
	// Response is the response, when State is Completed.
	Response clients.Message
	// Signal is the cancellation sent (timeouts and caller cancellation).
	Signal Signal
	// SignalErr is why sending the cancellation failed, if it did.
	SignalErr error
	// Err is the transport error (Failed), or the start error.
	Err error
	// Elapsed is the time from the start to the terminal state.
	Elapsed time.Duration
	// Coordinator is the request's coordinator; its Stats keep counting
	// late events until the client is closed.
	Coordinator *Coordinator
}

// Call sends method with params (and a fresh progress token) and waits for
// the terminal state. ctx's end is the caller's cancellation: the
// transport's cancellation is sent, as on a timeout.
func (c *Client) Call(ctx context.Context, method string, params map[string]any) Outcome {
	return c.call(ctx, method, params, "")
}

// idStarter is a Transport that can send a request under a given id.
type idStarter interface {
	StartID(ctx context.Context, id jsonrpc.ID, method string, params map[string]any, token jsonrpc.ID) (Exchange, error)
}

// call is Call under id when id is set and the transport can choose (the
// reissue-same-id defect); a fresh id otherwise.
func (c *Client) call(ctx context.Context, method string, params map[string]any, id jsonrpc.ID) Outcome {
	start := time.Now()
	n := c.n.Add(1)
	if c.opts.Defect == SharedProgressToken {
		n = 1
	}
	token := jsonrpc.StringID(fmt.Sprintf("%s-%d", c.opts.ID, n))
	out := Outcome{Token: token}
	var (
		ex  Exchange
		err error
	)
	if c.opts.Defect == ReuseRequestID {
		// The defect: every call after the first reuses its id (the lock
		// makes a concurrent second call wait for the first's).
		c.firstMu.Lock()
		if id.IsZero() {
			id = c.firstID
		}
	}
	if st, ok := c.t.(idStarter); ok && !id.IsZero() {
		ex, err = st.StartID(ctx, id, method, params, token)
	} else {
		ex, err = c.t.Start(ctx, method, params, token)
	}
	if err == nil && c.opts.Defect == ReuseRequestID && c.firstID.IsZero() {
		c.firstID = ex.ID()
	}
	if c.opts.Defect == ReuseRequestID {
		c.firstMu.Unlock()
	}
	if err != nil {
		out.State, out.Err = Failed, fmt.Errorf("reliable: start %s: %w", method, err)
		return out
	}
	out.ID = ex.ID()
	var (
		once sync.Once
		sent = make(chan struct{})
	)
	sendCancel := func(st State) {
		once.Do(func() {
			defer close(sent)
			if st.TimedOut() && c.opts.Defect == NoCancelOnTimeout {
				return // the defect: stop waiting, say nothing
			}
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.opts.CancelTimeout)
			defer cancel()
			out.Signal, out.SignalErr = ex.Cancel(cctx, c.opts.Reason)
		})
	}
	idle, maxT := c.opts.Idle, c.opts.Max
	if c.opts.Defect == OneClock {
		maxT = 0 // the idle clock alone, reset by progress
	}
	co := NewCoordinator(idle, maxT, sendCancel)
	out.Coordinator = co
	var (
		mu   sync.Mutex
		resp clients.Message
		perr error
		late = make(chan clients.Message, 1)
	)
	c.pumps.Add(1)
	go func() {
		defer c.pumps.Done()
		for {
			ev, err := ex.Next(c.ctx)
			if err != nil {
				if c.ctx.Err() == nil && co.Fail() {
					mu.Lock()
					perr = err
					mu.Unlock()
				}
				return
			}
			switch ev.Kind {
			case EvProgress:
				if c.opts.Defect == ProgressIgnored {
					co.Heartbeat() // seen, but it resets nothing
				} else {
					co.Progress()
				}
			case EvHeartbeat:
				if c.opts.Defect == HeartbeatResets {
					co.Progress()
				} else {
					co.Heartbeat()
				}
			case EvResponse:
				mu.Lock()
				if co.Complete() {
					resp = ev.Msg
				} else {
					select {
					case late <- ev.Msg:
					default:
					}
				}
				mu.Unlock()
				return
			}
		}
	}()
	select {
	case <-co.Done():
	case <-ctx.Done():
		if co.Cancel() {
			sendCancel(Cancelled)
		}
	}
	out.State = co.State()
	if out.State.TimedOut() || out.State == Cancelled {
		<-sent
	}
	if out.State.TimedOut() && c.opts.Defect == AcceptLateResponse {
		t := time.NewTimer(lateWait)
		select {
		case m := <-late:
			out.State, out.Response = Completed, m // the defect: a late answer taken as the outcome
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	out.Elapsed = time.Since(start)
	mu.Lock()
	if out.Response.Raw == nil {
		out.Response = resp
	}
	out.Err = perr
	mu.Unlock()
	return out
}

// ---- stdio ----

// Stdio is the stdio transport: a clients.Wire after negotiation.
type Stdio struct {
	W *clients.Wire
	// Defect: the stdio transport acts on CancelWrongID.
	Defect Defect
}

// Start implements Transport.
func (s Stdio) Start(ctx context.Context, method string, params map[string]any, token jsonrpc.ID) (Exchange, error) {
	return s.StartID(ctx, s.W.NewID(), method, params, token)
}

// StartID sends the request under id.
func (s Stdio) StartID(ctx context.Context, id jsonrpc.ID, method string, params map[string]any, token jsonrpc.ID) (Exchange, error) {
	from := s.W.Len()
	p, err := s.W.Start(ctx, id, method, s.W.ProgressParams(token, params))
	if err != nil {
		return nil, err
	}
	return &stdioExchange{w: s.W, p: p, token: token, from: from, defect: s.Defect}, nil
}

type stdioExchange struct {
	w      *clients.Wire
	p      *clients.Pending
	token  jsonrpc.ID
	from   int
	defect Defect
}

func (e *stdioExchange) ID() jsonrpc.ID { return e.p.ID() }

func (e *stdioExchange) Next(ctx context.Context) (Event, error) {
	m, err := e.w.WaitFor(ctx, e.from, func(m clients.Message) bool {
		return (m.Env.Method == "notifications/progress" && m.Env.ProgressToken == e.token) ||
			(m.Env.Kind.IsReply() && m.Env.ID == e.p.ID())
	})
	if err != nil {
		return Event{}, err
	}
	e.from = m.Seq + 1
	if m.Env.Kind.IsReply() {
		return Event{Kind: EvResponse, Msg: m}, nil
	}
	return Event{Kind: EvProgress, Msg: m}, nil
}

// Cancel sends notifications/cancelled: the only signal on stdio, in every
// version.
func (e *stdioExchange) Cancel(ctx context.Context, reason string) (Signal, error) {
	err := e.w.Notify(ctx, "notifications/cancelled", map[string]any{"requestId": cancelRef(e.p.ID(), e.defect).Raw(), "reason": reason})
	return SignalNotification, err
}

// cancelRef is the id a cancellation names: the request's own, or with the
// cancel-wrong-id defect one the client never sent.
func cancelRef(id jsonrpc.ID, d Defect) jsonrpc.ID {
	if d != CancelWrongID {
		return id
	}
	var n int64
	if _, err := fmt.Sscan(string(id), &n); err == nil {
		return jsonrpc.IntID(n + 1000)
	}
	return jsonrpc.StringID(string(id) + "-never-sent")
}

// ---- Streamable HTTP ----

// HTTP is the Streamable HTTP transport: a clients.HTTPWire after
// negotiation. Besides sending requests it keeps two duties of the
// transport's client: a 2025 response stream that breaks before its
// response is resumed with GET and Last-Event-ID (transports.mdx
// §Resumability and Redelivery), after the stream's retry field (§Sending
// Messages to the Server, 6: the client "MUST respect the retry field") or
// a jittered backoff, whichever is longer; and an HTTP 404 to a request
// carrying a session id starts a new session ("the client MUST start a new
// session by sending a new InitializeRequest without a session ID
// attached") and sends the request again there. A 2026-07-28 stream that
// breaks fails the call: the client re-issues it with a new id (Client.Do).
type HTTP struct {
	W *clients.HTTPWire
	// ClientID seeds the jitter of the backoff before a resumption
	// (default "reliable"); use the Client's Options.ID.
	ClientID string
	// Resumes bounds the resumptions of one request's stream; zero means
	// 2, negative none.
	Resumes int
	// Defect: the HTTP transport acts on WrongCancelSignal, CancelWrongID,
	// NoResume, IgnoreSSERetry, NoJitter and NoReinitOn404.
	Defect Defect
}

// Start implements Transport.
func (h HTTP) Start(ctx context.Context, method string, params map[string]any, token jsonrpc.ID) (Exchange, error) {
	return h.StartID(ctx, h.W.NewID(), method, params, token)
}

// StartID sends the request under id.
func (h HTTP) StartID(ctx context.Context, id jsonrpc.ID, method string, params map[string]any, token jsonrpc.ID) (Exchange, error) {
	hadSession := h.W.SessionID() != ""
	call, err := h.W.Start(ctx, id, method, h.W.ProgressParams(token, params))
	if err != nil {
		return nil, err
	}
	if call.Status() == http.StatusNotFound && hadSession && h.W.Session().Era == clients.EraLegacy && h.Defect != NoReinitOn404 {
		// The session is gone: a new initialize (Negotiate sends none of
		// the old session id), then the request again, under a new id.
		call.Close()
		if _, err := h.W.Negotiate(ctx, h.W.Session().Version); err != nil {
			return nil, fmt.Errorf("reliable: new session after HTTP 404: %w", err)
		}
		id = h.W.NewID()
		if call, err = h.W.Start(ctx, id, method, h.W.ProgressParams(token, params)); err != nil {
			return nil, err
		}
	}
	resumes := h.Resumes
	switch {
	case resumes == 0:
		resumes = 2
	case resumes < 0:
		resumes = 0
	}
	cid := h.ClientID
	if cid == "" {
		cid = "reliable"
	}
	return &httpExchange{w: h.W, call: call, id: id, token: token, maxResumes: resumes, clientID: cid, defect: h.Defect}, nil
}

type httpExchange struct {
	w     *clients.HTTPWire
	id    jsonrpc.ID
	token jsonrpc.ID
	// call is the stream being read: the POST's, or a GET resumption of
	// it.
	call *clients.HTTPCall
	from int
	done bool

	maxResumes, resumes int
	clientID            string
	defect              Defect
	// retry is the last retry field seen on the request's streams (ms);
	// hasRetry says whether one was.
	retry    int
	hasRetry bool
	// cancelled is set once the client cancelled: a stream it closed
	// itself is not resumed.
	cancelled atomic.Bool
	// mu guards call: Next (the client's pump) replaces it on a
	// resumption while Cancel (a clock's goroutine) may close it.
	mu sync.Mutex
}

func (e *httpExchange) current() *clients.HTTPCall {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.call
}

func (e *httpExchange) ID() jsonrpc.ID { return e.id }

func (e *httpExchange) Next(ctx context.Context) (Event, error) {
	if e.done {
		return Event{}, fmt.Errorf("%w: response already delivered", clients.ErrConnEnded)
	}
	for {
		call := e.current()
		ev, err := call.WaitEvent(ctx, e.from, func(clients.StreamEvent) bool { return true })
		if err != nil {
			// A JSON (non-SSE) body has no events: its response is the body.
			if m, ok := call.Response(); ok && errors.Is(err, clients.ErrConnEnded) {
				e.done = true
				return Event{Kind: EvResponse, Msg: m}, nil
			}
			if errors.Is(err, clients.ErrConnEnded) && e.resumable() {
				rerr := e.resume(ctx)
				if rerr == nil {
					continue
				}
				return Event{}, fmt.Errorf("%w (resumption failed: %v)", err, rerr)
			}
			return Event{}, err
		}
		e.from++
		if ev.HasRetry {
			e.retry, e.hasRetry = ev.Retry, true
		}
		if ev.IsComment {
			return Event{Kind: EvHeartbeat}, nil
		}
		if ev.Seq < 0 {
			continue
		}
		env := jsonrpc.Parse([]byte(ev.Data))
		m := clients.Message{Seq: ev.Seq, At: ev.At, Raw: []byte(ev.Data), Env: env, Stream: call.Stream(), EventID: ev.ID}
		switch {
		case env.Kind.IsReply() && env.ID == e.id:
			e.done = true
			return Event{Kind: EvResponse, Msg: m}, nil
		case env.Method == "notifications/progress" && env.ProgressToken == e.token:
			return Event{Kind: EvProgress, Msg: m}, nil
		}
	}
}

// resumable reports whether the ended stream may be resumed: a 2025
// session, a stream that gave an event id, resumptions left, and a stream
// the client did not close itself.
func (e *httpExchange) resumable() bool {
	return e.defect != NoResume && !e.cancelled.Load() && e.resumes < e.maxResumes &&
		e.w.Session().Era == clients.EraLegacy && e.current().LastEventID() != ""
}

// resume waits (the retry field, or a jittered backoff, whichever is
// longer) and opens GET with Last-Event-ID; the resumed stream replaces
// the ended one.
func (e *httpExchange) resume(ctx context.Context) error {
	wait := Backoff(e.clientID, e.resumes)
	if e.defect == NoJitter {
		wait = 0
	}
	if e.hasRetry && e.defect != IgnoreSSERetry {
		wait = max(wait, time.Duration(e.retry)*time.Millisecond)
	}
	e.resumes++
	if wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
	if e.cancelled.Load() {
		return errors.New("cancelled while waiting to resume")
	}
	g, err := e.w.OpenGET(ctx, e.current().LastEventID())
	if err != nil {
		return fmt.Errorf("GET with Last-Event-ID: %w", err)
	}
	if g.Status() != http.StatusOK || !g.IsSSE() {
		g.Close()
		return fmt.Errorf("GET with Last-Event-ID: HTTP %d, want 200 with an event stream", g.Status())
	}
	e.mu.Lock()
	e.call, e.from = g, 0
	e.mu.Unlock()
	if e.cancelled.Load() {
		g.Close() // cancelled while the GET was being opened
	}
	return nil
}

// Cancel sends the negotiated era's cancellation: in 2026-07-28 it closes
// the response stream (the close is the cancellation, no notification); in
// 2025 it POSTs notifications/cancelled and leaves the stream open. The
// wrong-cancel-signal defect swaps the two.
func (e *httpExchange) Cancel(ctx context.Context, reason string) (Signal, error) {
	e.cancelled.Store(true)
	modern := e.w.Session().Era == clients.EraModern
	if e.defect == WrongCancelSignal {
		modern = !modern
	}
	if modern {
		e.current().Close()
		return SignalStreamClose, nil
	}
	params := map[string]any{"requestId": cancelRef(e.id, e.defect).Raw()}
	if reason != "" {
		params["reason"] = reason
	}
	status, err := e.w.Notify(ctx, "notifications/cancelled", params)
	// Any 2xx delivered the cancellation (a status other than 202 breaks
	// the transport's rule for notifications, which HTTP-NOTIFICATION-202
	// judges, not the cancellation's).
	if err == nil && (status < 200 || status > 299) {
		err = fmt.Errorf("%w: notifications/cancelled answered HTTP %d, want 202", clients.ErrUnexpectedStatus, status)
	}
	return SignalNotification, err
}

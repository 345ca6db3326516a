package reliable

import (
	"context"
	"errors"
	"fmt"
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
}

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
	start := time.Now()
	token := jsonrpc.StringID(fmt.Sprintf("%s-%d", c.opts.ID, c.n.Add(1)))
	out := Outcome{Token: token}
	ex, err := c.t.Start(ctx, method, params, token)
	if err != nil {
		out.State, out.Err = Failed, fmt.Errorf("reliable: start %s: %w", method, err)
		return out
	}
	out.ID = ex.ID()
	var (
		once sync.Once
		sent = make(chan struct{})
	)
	sendCancel := func() {
		once.Do(func() {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.opts.CancelTimeout)
			defer cancel()
			out.Signal, out.SignalErr = ex.Cancel(cctx, c.opts.Reason)
			close(sent)
		})
	}
	co := NewCoordinator(c.opts.Idle, c.opts.Max, func(State) { sendCancel() })
	out.Coordinator = co
	var (
		mu   sync.Mutex
		resp clients.Message
		perr error
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
				co.Progress()
			case EvHeartbeat:
				co.Heartbeat()
			case EvResponse:
				mu.Lock()
				if co.Complete() {
					resp = ev.Msg
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
			sendCancel()
		}
	}
	out.State = co.State()
	out.Elapsed = time.Since(start)
	if out.State.TimedOut() || out.State == Cancelled {
		<-sent
	}
	mu.Lock()
	out.Response, out.Err = resp, perr
	mu.Unlock()
	return out
}

// ---- stdio ----

// Stdio is the stdio transport: a clients.Wire after negotiation.
type Stdio struct{ W *clients.Wire }

// Start implements Transport.
func (s Stdio) Start(ctx context.Context, method string, params map[string]any, token jsonrpc.ID) (Exchange, error) {
	from := s.W.Len()
	p, err := s.W.Start(ctx, s.W.NewID(), method, s.W.ProgressParams(token, params))
	if err != nil {
		return nil, err
	}
	return &stdioExchange{w: s.W, p: p, token: token, from: from}, nil
}

type stdioExchange struct {
	w     *clients.Wire
	p     *clients.Pending
	token jsonrpc.ID
	from  int
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
	err := e.w.Notify(ctx, "notifications/cancelled", map[string]any{"requestId": e.p.ID().Raw(), "reason": reason})
	return SignalNotification, err
}

// ---- Streamable HTTP ----

// HTTP is the Streamable HTTP transport: a clients.HTTPWire after
// negotiation.
type HTTP struct{ W *clients.HTTPWire }

// Start implements Transport.
func (h HTTP) Start(ctx context.Context, method string, params map[string]any, token jsonrpc.ID) (Exchange, error) {
	call, err := h.W.Start(ctx, h.W.NewID(), method, h.W.ProgressParams(token, params))
	if err != nil {
		return nil, err
	}
	return &httpExchange{w: h.W, call: call, token: token}, nil
}

type httpExchange struct {
	w     *clients.HTTPWire
	call  *clients.HTTPCall
	token jsonrpc.ID
	from  int
	done  bool
}

func (e *httpExchange) ID() jsonrpc.ID { return e.call.ID() }

func (e *httpExchange) Next(ctx context.Context) (Event, error) {
	if e.done {
		return Event{}, fmt.Errorf("%w: response already delivered", clients.ErrConnEnded)
	}
	for {
		ev, err := e.call.WaitEvent(ctx, e.from, func(clients.StreamEvent) bool { return true })
		if err != nil {
			// A JSON (non-SSE) body has no events: its response is the body.
			if m, ok := e.call.Response(); ok && errors.Is(err, clients.ErrConnEnded) {
				e.done = true
				return Event{Kind: EvResponse, Msg: m}, nil
			}
			return Event{}, err
		}
		e.from++
		if ev.IsComment {
			return Event{Kind: EvHeartbeat}, nil
		}
		if ev.Seq < 0 {
			continue
		}
		env := jsonrpc.Parse([]byte(ev.Data))
		m := clients.Message{Seq: ev.Seq, At: ev.At, Raw: []byte(ev.Data), Env: env, Stream: e.call.Stream(), EventID: ev.ID}
		switch {
		case env.Kind.IsReply() && env.ID == e.call.ID():
			e.done = true
			return Event{Kind: EvResponse, Msg: m}, nil
		case env.Method == "notifications/progress" && env.ProgressToken == e.token:
			return Event{Kind: EvProgress, Msg: m}, nil
		}
	}
}

// Cancel sends the negotiated era's cancellation: in 2026-07-28 it closes
// the response stream (the close is the cancellation, no notification); in
// 2025 it POSTs notifications/cancelled and leaves the stream open.
func (e *httpExchange) Cancel(ctx context.Context, reason string) (Signal, error) {
	how, err := e.w.Cancel(ctx, e.call, reason)
	if how == "stream-close" {
		return SignalStreamClose, err
	}
	return SignalNotification, err
}

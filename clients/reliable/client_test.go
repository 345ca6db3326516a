package reliable

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// fakeTransport stands for a transport in the coordinator's unit tests: the
// test pushes events and sees which cancellation the client sent. kind
// picks the signal the real adapter would use: "stdio" and "http-2025"
// send notifications/cancelled, "http-2026" closes the stream.
type fakeTransport struct {
	kind string
	mu   sync.Mutex
	ex   *fakeExchange
}

type fakeExchange struct {
	kind    string
	events  chan Event
	mu      sync.Mutex
	signals []Signal
	closed  bool
}

func (f *fakeTransport) Start(context.Context, string, map[string]any, jsonrpc.ID) (Exchange, error) {
	ex := &fakeExchange{kind: f.kind, events: make(chan Event, 16)}
	f.mu.Lock()
	f.ex = ex
	f.mu.Unlock()
	return ex, nil
}

func (f *fakeTransport) exchange() *fakeExchange {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ex
}

func (e *fakeExchange) ID() jsonrpc.ID { return jsonrpc.IntID(1) }

func (e *fakeExchange) Next(ctx context.Context) (Event, error) {
	select {
	case ev, ok := <-e.events:
		if !ok {
			return Event{}, clients.ErrConnEnded
		}
		return ev, nil
	case <-ctx.Done():
		return Event{}, ctx.Err()
	}
}

func (e *fakeExchange) Cancel(context.Context, string) (Signal, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.kind == "http-2026" {
		e.signals = append(e.signals, SignalStreamClose)
		if !e.closed {
			e.closed = true
			close(e.events)
		}
		return SignalStreamClose, nil
	}
	e.signals = append(e.signals, SignalNotification)
	return SignalNotification, nil
}

// push delivers an event unless the stream was closed; it reports whether
// it could.
func (e *fakeExchange) push(ev Event) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return false
	}
	e.events <- ev
	return true
}

// pushEvery pushes ev every d until the stream is closed or stop is.
func pushEvery(ex *fakeExchange, d time.Duration, ev Event, stop <-chan struct{}) {
	tick := time.NewTicker(d)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			if !ex.push(ev) {
				return
			}
		case <-stop:
			return
		}
	}
}

func (e *fakeExchange) sent() []Signal {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Signal(nil), e.signals...)
}

var transports = []struct {
	kind string
	want Signal
}{
	{"stdio", SignalNotification},
	{"http-2025", SignalNotification},
	{"http-2026", SignalStreamClose},
}

var response = Event{Kind: EvResponse, Msg: clients.Message{Raw: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)}}

// callOn starts a call of a new client on a fake transport of kind, inside
// the bubble (startCall), and returns its outcome and its exchange once the
// call is waiting; the client is closed when the test ends.
func callOn(t *testing.T, ctx context.Context, kind string, o Options) (<-chan Outcome, *fakeExchange) {
	t.Helper()
	ft := &fakeTransport{kind: kind}
	c := New(ft, o)
	t.Cleanup(func() { c.Close() })
	ch := startCall(ctx, c)
	synctest.Wait()
	return ch, ft.exchange()
}

// startCall runs c.Call on its own goroutine (inside the bubble) and
// returns a channel with its outcome.
func startCall(ctx context.Context, c *Client) <-chan Outcome {
	ch := make(chan Outcome, 1)
	go func() { ch <- c.Call(ctx, "tools/call", map[string]any{"name": "slow"}) }()
	return ch
}

// Order 1: the idle deadline passes (cancel), then the response arrives
// (complete): the cancellation was sent once with the transport's signal,
// the response is ignored, the state stays final.
func TestCancelThenComplete(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.kind, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ch, ex := callOn(t, t.Context(), tr.kind, Options{Idle: time.Second, Max: 10 * time.Second})
				time.Sleep(999 * time.Millisecond)
				synctest.Wait()
				if s := ex.sent(); len(s) != 0 {
					t.Fatalf("cancelled before the idle deadline: %v", s)
				}
				time.Sleep(time.Millisecond)
				out := <-ch
				if out.State != IdleTimeout || out.Elapsed != time.Second {
					t.Fatalf("outcome %v after %v, want idle-timeout after 1s", out.State, out.Elapsed)
				}
				if out.Signal != tr.want || len(ex.sent()) != 1 {
					t.Fatalf("signal %q (sent %v), want one %q", out.Signal, ex.sent(), tr.want)
				}
				delivered := ex.push(response)
				synctest.Wait()
				if tr.kind == "http-2026" && delivered {
					t.Fatal("a response was delivered on a stream the client closed")
				}
				if delivered && out.Coordinator.Stats().Late != 1 {
					t.Fatalf("late response not counted: %+v", out.Coordinator.Stats())
				}
				if st := out.Coordinator.State(); st != IdleTimeout {
					t.Fatalf("late response changed the final state to %v", st)
				}
			})
		})
	}
}

// Order 2: the response arrives (complete), then the deadlines and a
// cancellation come: nothing is sent, the request stays completed.
func TestCompleteThenCancel(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.kind, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				ch, ex := callOn(t, ctx, tr.kind, Options{Idle: time.Second, Max: 2 * time.Second})
				time.Sleep(500 * time.Millisecond)
				ex.push(Event{Kind: EvProgress})
				ex.push(response)
				out := <-ch
				if out.State != Completed || string(out.Response.Raw) != string(response.Msg.Raw) {
					t.Fatalf("outcome %v %s", out.State, out.Response.Raw)
				}
				cancel()
				if out.Coordinator.Cancel() {
					t.Fatal("a late cancellation changed a completed request")
				}
				time.Sleep(5 * time.Second) // past both deadlines (fake clock)
				synctest.Wait()
				if s := ex.sent(); len(s) != 0 || out.Coordinator.State() != Completed {
					t.Fatalf("after completion: sent %v, state %v", s, out.Coordinator.State())
				}
			})
		})
	}
}

// Order 3: progress before every idle deadline keeps the request alive
// until the maximum, which progress never resets.
func TestProgressUntilMaximum(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.kind, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ch, ex := callOn(t, t.Context(), tr.kind, Options{Idle: time.Second, Max: 3500 * time.Millisecond})
				stop := make(chan struct{})
				go pushEvery(ex, 900*time.Millisecond, Event{Kind: EvProgress}, stop)
				out := <-ch
				close(stop)
				if out.State != MaxTimeout || out.Elapsed != 3500*time.Millisecond {
					t.Fatalf("outcome %v after %v, want max-timeout after 3.5s", out.State, out.Elapsed)
				}
				if st := out.Coordinator.Stats(); st.Progress != 3 {
					t.Fatalf("progress seen %d, want 3 (0.9, 1.8, 2.7 s)", st.Progress)
				}
				if out.Signal != tr.want {
					t.Fatalf("signal %q, want %q", out.Signal, tr.want)
				}
			})
		})
	}
}

// A transport heartbeat resets neither clock: heartbeats alone end in the
// idle timeout at exactly the idle deadline.
func TestHeartbeatResetsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ch, ex := callOn(t, t.Context(), "http-2025", Options{Idle: time.Second, Max: 10 * time.Second})
		stop := make(chan struct{})
		defer close(stop)
		go pushEvery(ex, 300*time.Millisecond, Event{Kind: EvHeartbeat}, stop)
		out := <-ch
		if out.State != IdleTimeout || out.Elapsed != time.Second {
			t.Fatalf("outcome %v after %v, want idle-timeout after 1s despite heartbeats", out.State, out.Elapsed)
		}
		if st := out.Coordinator.Stats(); st.Heartbeats != 3 || st.Progress != 0 {
			t.Fatalf("stats %+v, want 3 heartbeats, 0 progress", st)
		}
	})
}

// Order 4: on 2026 HTTP the cancellation is the stream close; after it the
// stream is gone and no notification was sent. The caller's own
// cancellation (ctx) takes the same path.
func TestHTTPStreamClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		ch, ex := callOn(t, ctx, "http-2026", Options{Idle: time.Minute})
		ex.push(Event{Kind: EvProgress})
		time.Sleep(time.Second)
		cancel()
		out := <-ch
		if out.State != Cancelled || out.Signal != SignalStreamClose {
			t.Fatalf("outcome %v signal %q", out.State, out.Signal)
		}
		if s := ex.sent(); len(s) != 1 || s[0] != SignalStreamClose {
			t.Fatalf("sent %v, want exactly one stream close", s)
		}
		if ex.push(Event{Kind: EvProgress}) {
			t.Fatal("stream still open after the close")
		}
	})
}

// A stream that ends without a response fails the request; a failure is
// final too.
func TestStreamLostIsFinal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ch, ex := callOn(t, t.Context(), "http-2025", Options{Idle: time.Second})
		ex.mu.Lock()
		ex.closed = true
		close(ex.events)
		ex.mu.Unlock()
		out := <-ch
		if out.State != Failed || !errors.Is(out.Err, clients.ErrConnEnded) {
			t.Fatalf("outcome %v err %v", out.State, out.Err)
		}
		time.Sleep(2 * time.Second)
		if out.Coordinator.State() != Failed || len(ex.sent()) != 0 {
			t.Fatalf("after failure: state %v, sent %v", out.Coordinator.State(), ex.sent())
		}
	})
}

package reliable

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// replyTimeout bounds one answer to a server request.
const replyTimeout = 5 * time.Second

// Responder answers the requests a server sends the client on a
// connection: ping with an empty result ("The receiver MUST respond
// promptly with an empty response", basic/utilities/ping.mdx, 2025
// versions); on stdio any other method with the JSON-RPC error -32601, as
// the client declares no capability that would let a server ask for more
// (on HTTP other requests are left unanswered). It reads the connection's
// one message log, so it sees requests on every stream.
type Responder struct {
	conn   clients.Conn
	defect Defect
	opts   RespondOptions
	stop   context.CancelFunc
	done   chan struct{}
	// closing is closed by Close (AbandonOnClose: delayed answers give up).
	closing   chan struct{}
	closeOnce sync.Once

	mu      sync.Mutex
	answers int
	errs    []error
}

// RespondOptions shape a Responder unlike the reliable client's default,
// as other correct clients are shaped: the client variants that show a
// check does not depend on how fast, or how patiently, our client answers.
type RespondOptions struct {
	// Delay is how long after a request arrived its answer goes.
	Delay time.Duration
	// AbandonOnClose: an answer still waiting for its Delay when the
	// responder is closed is not sent (a client whose shutdown aborts
	// what it has in flight), where the default answers everything that
	// arrived before Close returns.
	AbandonOnClose bool
}

// Respond starts answering the server's requests on conn, from the
// message the log holds next on. Close stops it.
func Respond(conn clients.Conn, defect Defect) *Responder {
	return RespondWith(conn, defect, RespondOptions{})
}

// RespondWith is Respond shaped by opts.
func RespondWith(conn clients.Conn, defect Defect, opts RespondOptions) *Responder {
	ctx, stop := context.WithCancel(context.Background())
	r := &Responder{conn: conn, defect: defect, opts: opts, stop: stop, done: make(chan struct{}), closing: make(chan struct{})}
	from := conn.Len()
	go r.run(ctx, from)
	return r
}

func isServerRequest(m clients.Message) bool { return m.Env.Kind == jsonrpc.Request }

func (r *Responder) run(ctx context.Context, from int) {
	defer close(r.done)
	var pending sync.WaitGroup
	defer pending.Wait()
	for {
		m, err := r.conn.WaitFor(ctx, from, isServerRequest)
		if err != nil {
			// Stopping (or the connection ended): answer what already
			// arrived, so that Close never drops a ping on the floor
			// (unless the variant abandons what it has not answered).
			if r.opts.AbandonOnClose {
				return
			}
			for _, m := range r.conn.Since(from) {
				if isServerRequest(m) {
					r.answer(m)
				}
			}
			return
		}
		from = m.Seq + 1
		if r.opts.Delay <= 0 {
			r.answer(m)
			continue
		}
		pending.Add(1)
		go func() {
			defer pending.Done()
			t := time.NewTimer(r.opts.Delay)
			defer t.Stop()
			select {
			case <-t.C:
			case <-r.closing:
				if r.opts.AbandonOnClose {
					return
				}
				<-t.C
			}
			r.answer(m)
		}()
	}
}

func (r *Responder) answer(m clients.Message) {
	if r.defect == IgnorePing {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), replyTimeout)
	defer cancel()
	var err error
	switch w := r.conn.(type) {
	case *clients.Wire:
		if m.Env.Method == "ping" {
			err = w.Reply(ctx, m.Env.ID, struct{}{})
		} else {
			err = w.ReplyError(ctx, m.Env.ID, jsonrpc.CodeMethodNotFound, "Method not found: "+m.Env.Method, nil)
		}
	case *clients.HTTPWire:
		if m.Env.Method != "ping" {
			return
		}
		_, err = w.Reply(ctx, m.Env.ID, struct{}{})
	default:
		err = errors.New("reliable: no way to answer on this connection")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.errs = append(r.errs, err)
		return
	}
	r.answers++
}

// Answers is how many server requests were answered.
func (r *Responder) Answers() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.answers
}

// Close stops the responder after answering every request already
// received, and returns the first error an answer met.
func (r *Responder) Close() error {
	r.closeOnce.Do(func() { close(r.closing) })
	r.stop()
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.errs) > 0 {
		return r.errs[0]
	}
	return nil
}

package clients

import (
	"context"
	"fmt"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// Pending is a request sent by Start, awaiting its response.
//
// Responses are matched by id text (the number 1 and the string "1" differ).
// When several requests with the same id are pending, responses fulfil them
// in the order they were started. A response nobody waits for, and any
// further response for an id already answered, is only recorded in
// Messages.
type Pending struct {
	id      jsonrpc.ID
	request []byte
	done    chan struct{}
	// msg and err are written once, before done is closed.
	msg Message
	err error
}

// ID returns the request's id.
func (p *Pending) ID() jsonrpc.ID { return p.id }

// Request returns the bytes that were written for the request (with the
// trailing newline). Callers must not modify them.
func (p *Pending) Request() []byte { return p.request }

// Done is closed when Wait would return without blocking: the response
// arrived, or the reader ended first.
func (p *Pending) Done() <-chan struct{} { return p.done }

// Wait returns the first response (result or JSON-RPC error, see
// Message.Env.Kind) carrying the request's id. It fails with ctx's error, or
// with an ErrConnEnded/ErrClosed error if the reader ended first. Wait may be
// called again after a ctx failure.
func (p *Pending) Wait(ctx context.Context) (Message, error) {
	select {
	case <-p.done:
		return p.msg, p.err
	default:
	}
	select {
	case <-p.done:
		return p.msg, p.err
	case <-ctx.Done():
		return Message{}, ctx.Err()
	}
}

// Start sends a request with an explicit id and returns its Pending. In the
// modern era (after Negotiate or SetSession) params gets the per-request
// _meta keys protocolVersion and clientCapabilities, merged into an existing
// params["_meta"] map without overwriting keys the caller set; the caller's
// maps are never modified. In the legacy era (or before negotiation) params
// is sent as given, and omitted when nil.
func (w *Wire) Start(ctx context.Context, id jsonrpc.ID, method string, params map[string]any) (*Pending, error) {
	line, err := encodeRequest(w.Session(), id, method, params)
	if err != nil {
		return nil, err
	}
	p := &Pending{id: id, request: line, done: make(chan struct{})}
	w.mu.Lock()
	if w.ended {
		err := w.endErr
		w.mu.Unlock()
		return nil, fmt.Errorf("clients: cannot await a response: %w", err)
	}
	w.pending[id] = append(w.pending[id], p)
	w.mu.Unlock()
	if err := w.SendRaw(ctx, line); err != nil {
		w.unregister(p)
		return nil, err
	}
	return p, nil
}

func (w *Wire) unregister(p *Pending) {
	w.mu.Lock()
	defer w.mu.Unlock()
	q := w.pending[p.id]
	for i, x := range q {
		if x == p {
			q = append(q[:i:i], q[i+1:]...)
			break
		}
	}
	if len(q) == 0 {
		delete(w.pending, p.id)
	} else {
		w.pending[p.id] = q
	}
}

// Send is Start for any Conn: the request's Pending as an InFlight.
func (w *Wire) Send(ctx context.Context, id jsonrpc.ID, method string, params map[string]any) (InFlight, error) {
	p, err := w.Start(ctx, id, method, params)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Call sends a request with a fresh id (NewID) and waits for its response.
// A JSON-RPC error response is returned as a Message, not as an error.
func (w *Wire) Call(ctx context.Context, method string, params map[string]any) (Message, error) {
	return call(ctx, w, method, params)
}

package clients

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// Reserved _meta keys the wire client reads or writes (2026-07-28
// basic/index.mdx, "_meta").
const (
	MetaProgressToken      = "progressToken"
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
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
	if id.IsZero() {
		return nil, errors.New("clients: Start needs an id (use Notify for a notification)")
	}
	line, err := marshalLine(outMsg{JSONRPC: "2.0", ID: id.Raw(), Method: method, Params: w.requestParams(params)})
	if err != nil {
		return nil, err
	}
	p := &Pending{id: id, request: line, done: make(chan struct{})}
	w.mu.Lock()
	if w.ended {
		err := w.endErrLocked()
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

// Call sends a request with a fresh id (NewID) and waits for its response.
// A JSON-RPC error response is returned as a Message, not as an error.
func (w *Wire) Call(ctx context.Context, method string, params map[string]any) (Message, error) {
	p, err := w.Start(ctx, w.NewID(), method, params)
	if err != nil {
		return Message{}, err
	}
	return p.Wait(ctx)
}

// requestParams returns what goes into "params" for a request (nil: omit).
func (w *Wire) requestParams(params map[string]any) any {
	s := w.Session()
	if s.Era != EraModern {
		if params == nil {
			return nil
		}
		return params
	}
	return withMeta(params, map[string]any{
		MetaProtocolVersion:    s.Version,
		MetaClientCapabilities: map[string]any{},
	})
}

// withMeta returns a copy of params whose _meta holds every key of add that
// the caller did not set. A _meta that is not a map[string]any (a deliberate
// oddity of the caller's) is left untouched.
func withMeta(params map[string]any, add map[string]any) map[string]any {
	out := make(map[string]any, len(params)+1)
	maps.Copy(out, params)
	meta := map[string]any{}
	switch m := params["_meta"].(type) {
	case nil:
	case map[string]any:
		maps.Copy(meta, m)
	default:
		return out
	}
	for k, v := range add {
		if _, set := meta[k]; !set {
			meta[k] = v
		}
	}
	out["_meta"] = meta
	return out
}

// ProgressParams returns a copy of params (which may be nil) with
// params._meta.progressToken set to token, merging into an existing _meta
// map; the caller's maps are not modified. token must be a string or an
// integer (int, int64, uint64...; marshalled exactly), or a jsonrpc.ID /
// json.RawMessage holding the token's JSON text. A token already present in
// params._meta is replaced.
func (w *Wire) ProgressParams(token any, params map[string]any) map[string]any {
	if id, ok := token.(jsonrpc.ID); ok {
		token = json.RawMessage(id)
	}
	out := make(map[string]any, len(params)+1)
	maps.Copy(out, params)
	meta := map[string]any{}
	if m, ok := params["_meta"].(map[string]any); ok {
		maps.Copy(meta, m)
	}
	meta[MetaProgressToken] = token
	out["_meta"] = meta
	return out
}

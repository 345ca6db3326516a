package reliable

import (
	"maps"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// Op is a request the client had in flight when its stream broke.
type Op struct {
	Method string
	Params map[string]any
	// Safe marks a request that may be sent again: a read, or a mutation
	// that carries an idempotency key the server honours. An unsafe
	// mutation is never replayed: its outcome is unknown and a replay could
	// run the effect twice.
	Safe bool
}

// Request is one request of a reconnect plan, with its fresh id.
type Request struct {
	ID     jsonrpc.ID
	Method string
	Params map[string]any
}

// Plan is what a client does after its stream broke (2026-07-28
// changelog: "A broken response stream loses the in-flight request; clients
// MUST re-issue it as a new request with a new request ID").
type Plan struct {
	// Reissue are the safe in-flight requests, re-sent with new ids and the
	// filter merged into their params.
	Reissue []Request
	// Refetch re-reads the listed state the stream was keeping current.
	Refetch []Request
	// Unresolved are the unsafe mutations that are not replayed: the caller
	// reconciles them (by key, or by reporting them as unknown).
	Unresolved []Op
}

// Reconnector builds reconnect plans.
type Reconnector struct {
	// NewID returns a fresh request id (never one used before).
	NewID func() jsonrpc.ID
	// Filter is re-sent with every re-issued request (e.g. the
	// subscription's filter); its keys do not overwrite the request's own.
	Filter map[string]any
	// List names the methods that refetch the listed state (e.g.
	// tools/list, tasks/list).
	List []string
}

// Plan turns the in-flight requests into a plan: new requests with new ids
// for the safe ones (filter re-sent), a refetch of every listed method, and
// the unsafe mutations left unresolved (never replayed).
func (r Reconnector) Plan(inflight []Op) Plan {
	var p Plan
	for _, op := range inflight {
		if !op.Safe {
			p.Unresolved = append(p.Unresolved, op)
			continue
		}
		params := make(map[string]any, len(op.Params)+len(r.Filter))
		maps.Copy(params, r.Filter)
		maps.Copy(params, op.Params)
		p.Reissue = append(p.Reissue, Request{ID: r.NewID(), Method: op.Method, Params: params})
	}
	for _, m := range r.List {
		var params map[string]any
		if len(r.Filter) > 0 {
			params = maps.Clone(r.Filter)
		}
		p.Refetch = append(p.Refetch, Request{ID: r.NewID(), Method: m, Params: params})
	}
	return p
}

// Dedupe merges items fetched after a reconnect into those already held,
// keeping one item per stable id (key): a refetched item replaces the held
// one with the same key, new keys are appended in fetched order.
func Dedupe[T any](held, fetched []T, key func(T) string) []T {
	pos := make(map[string]int, len(held))
	out := make([]T, 0, len(held)+len(fetched))
	for _, items := range [][]T{held, fetched} {
		for _, it := range items {
			k := key(it)
			if i, ok := pos[k]; ok {
				out[i] = it
				continue
			}
			pos[k] = len(out)
			out = append(out, it)
		}
	}
	return out
}

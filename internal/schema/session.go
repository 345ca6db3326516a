package schema

import (
	"sync"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// Session validates the messages of one connection (or, on Streamable
// HTTP, one session or one check's exchanges): it remembers the requests the
// client sent so that a result is validated against the result definition
// of the method it answers. It is safe for concurrent use; a transport may
// call ClientSent and ServerSent from different goroutines, as long as a
// request is recorded before its response is validated (the proxy sees the
// request go by first).
type Session struct {
	v *Validator

	mu       sync.Mutex
	requests map[jsonrpc.ID]Request
}

// NewSession starts a session on the validator.
func (v *Validator) NewSession() *Session {
	return &Session{v: v, requests: map[jsonrpc.ID]Request{}}
}

// Validator is the session's validator.
func (s *Session) Validator() *Validator { return s.v }

// ClientSent records a message the client sent; only requests matter. A
// request id used again replaces the earlier request (basic#4 is another
// check's business).
func (s *Session) ClientSent(raw []byte) {
	id, req, ok := RequestOf(raw)
	if !ok || id.IsZero() {
		return
	}
	s.mu.Lock()
	s.requests[id] = req
	s.mu.Unlock()
}

// ServerSent validates a message the server sent; seq is the caller's
// number for it. Requests are kept after their response: a duplicated
// response is validated the same way.
func (s *Session) ServerSent(seq int64, raw []byte) Outcome {
	return s.v.ValidateServerMessage(seq, raw, s.lookup)
}

func (s *Session) lookup(id jsonrpc.ID) (Request, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.requests[id]
	return r, ok
}

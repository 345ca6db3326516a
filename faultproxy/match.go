package faultproxy

import (
	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// Match selects messages. Every non-zero field must agree; the zero Match
// matches every message.
type Match struct {
	// Dir restricts the direction.
	Dir Direction `json:"dir,omitempty" yaml:"dir,omitempty"`
	// Kind restricts the JSON-RPC kind (request, notification, response,
	// error, batch, invalid).
	Kind jsonrpc.Kind `json:"kind,omitempty" yaml:"kind,omitempty"`
	// Method restricts requests and notifications to one method.
	Method string `json:"method,omitempty" yaml:"method,omitempty"`
	// ID restricts to one JSON-RPC id, as canonical JSON text ("1" for the
	// number, "\"1\"" for the string).
	ID jsonrpc.ID `json:"id,omitempty" yaml:"id,omitempty"`
	// ProgressToken restricts to requests carrying this token and to
	// progress notifications for it.
	ProgressToken jsonrpc.ID `json:"progressToken,omitempty" yaml:"progressToken,omitempty"`
	// CancelledID restricts to notifications/cancelled naming this request.
	CancelledID jsonrpc.ID `json:"cancelledId,omitempty" yaml:"cancelledId,omitempty"`
	// RepliesTo restricts to responses and errors whose id is that of a
	// request the proxy has seen with this method (e.g. "tools/call").
	// The rule engine remembers request methods while at least one rule is
	// installed (with none, messages are not parsed at all).
	RepliesTo string `json:"repliesTo,omitempty" yaml:"repliesTo,omitempty"`
	// HTTPMethod restricts to messages of HTTP exchanges with this request
	// method (GET, POST, DELETE); GET and DELETE requests are messages
	// with an empty body.
	HTTPMethod string `json:"httpMethod,omitempty" yaml:"httpMethod,omitempty"`
	// Comment restricts to SSE comment blocks (heartbeats).
	Comment bool `json:"comment,omitempty" yaml:"comment,omitempty"`
}

// IsZero reports whether the match selects everything.
func (m Match) IsZero() bool { return m == Match{} }

// matches reports whether msg satisfies every set field. method is the
// method of the request msg answers, when msg is a reply and it is known.
func (m Match) matches(msg *Message, repliedMethod string) bool {
	if m.Dir != "" && m.Dir != msg.Dir {
		return false
	}
	if m == (Match{Dir: m.Dir}) {
		return true
	}
	if m.HTTPMethod != "" && m.HTTPMethod != msg.HTTPMethod {
		return false
	}
	if m.Comment && !msg.Comment {
		return false
	}
	env := msg.Envelope()
	if m.Kind != "" && m.Kind != env.Kind {
		return false
	}
	if m.Method != "" && m.Method != env.Method {
		return false
	}
	if m.ID != "" && (m.ID != env.ID || env.Kind == jsonrpc.Notification) {
		return false
	}
	if m.ProgressToken != "" && m.ProgressToken != env.ProgressToken {
		return false
	}
	if m.CancelledID != "" && m.CancelledID != env.CancelledID {
		return false
	}
	if m.RepliesTo != "" && (!env.Kind.IsReply() || repliedMethod != m.RepliesTo) {
		return false
	}
	return true
}

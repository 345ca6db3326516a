// Package jsonrpc reads the envelope of a JSON-RPC 2.0 message without
// deciding what the message means: its kind, id, method and, for MCP, the
// progress token it carries. The fault proxy and the clients share it so that
// a rule and a check see a message the same way.
package jsonrpc

import (
	"bytes"
	"encoding/json"
)

// Kind classifies a framed message.
type Kind string

// The kinds of message. Invalid covers bytes that are not a JSON object
// carrying a recognisable JSON-RPC shape (garbage, arrays, truncated JSON).
const (
	Request      Kind = "request"
	Notification Kind = "notification"
	Response     Kind = "response"
	ErrorReply   Kind = "error"
	Batch        Kind = "batch"
	Invalid      Kind = "invalid"
)

// Envelope is the parsed outer shape of one message.
type Envelope struct {
	Kind   Kind
	ID     ID
	Method string
	// Params, Result and Error are the raw members, nil when absent.
	Params json.RawMessage
	Result json.RawMessage
	Error  *ErrorObject
	// ProgressToken is params._meta.progressToken for requests and
	// params.progressToken for notifications/progress; nil when absent.
	ProgressToken ID
	// CancelledID is params.requestId of notifications/cancelled.
	CancelledID ID
}

// ErrorObject is the error member of a JSON-RPC error response.
type ErrorObject struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// ID is a JSON-RPC id (or progress token) kept as its canonical JSON text, so
// that the string "1" and the number 1 stay different, as the protocol
// requires. The zero value means "absent"; the JSON null is "null".
type ID string

// IsZero reports whether the id was absent.
func (id ID) IsZero() bool { return id == "" }

// Raw returns the id as JSON.
func (id ID) Raw() json.RawMessage {
	if id == "" {
		return nil
	}
	return json.RawMessage(id)
}

// String returns the id's JSON text.
func (id ID) String() string { return string(id) }

// IDFrom canonicalises a raw JSON value into an ID (compacted text). A nil
// or empty input gives the zero ID.
func IDFrom(raw json.RawMessage) ID {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return ID(raw)
	}
	return ID(buf.String())
}

// StringID returns the ID of a JSON string.
func StringID(s string) ID {
	b, _ := json.Marshal(s)
	return ID(b)
}

// IntID returns the ID of a JSON integer.
func IntID(n int64) ID {
	b, _ := json.Marshal(n)
	return ID(b)
}

type wire struct {
	JSONRPC *string         `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

type metaParams struct {
	Meta struct {
		ProgressToken json.RawMessage `json:"progressToken"`
	} `json:"_meta"`
	ProgressToken json.RawMessage `json:"progressToken"`
	RequestID     json.RawMessage `json:"requestId"`
}

// Parse reads the envelope of one framed message. It never fails: bytes that
// are not a JSON-RPC object get Kind Invalid (or Batch for a JSON array).
func Parse(raw []byte) Envelope {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if json.Valid(trimmed) {
			return Envelope{Kind: Batch}
		}
		return Envelope{Kind: Invalid}
	}
	var w wire
	if len(trimmed) == 0 || trimmed[0] != '{' || json.Unmarshal(trimmed, &w) != nil {
		return Envelope{Kind: Invalid}
	}
	env := Envelope{ID: IDFrom(w.ID), Params: w.Params, Result: w.Result}
	switch {
	case w.Method != nil:
		env.Method = *w.Method
		if w.ID == nil {
			env.Kind = Notification
		} else {
			env.Kind = Request
		}
	case w.Error != nil:
		env.Kind = ErrorReply
		var eo ErrorObject
		if json.Unmarshal(w.Error, &eo) == nil {
			env.Error = &eo
		}
	case w.Result != nil:
		env.Kind = Response
	default:
		env.Kind = Invalid
		return env
	}
	if len(w.Params) > 0 && w.Params[0] == '{' {
		var mp metaParams
		if json.Unmarshal(w.Params, &mp) == nil {
			switch env.Kind {
			case Request:
				env.ProgressToken = IDFrom(mp.Meta.ProgressToken)
			case Notification:
				if env.Method == "notifications/progress" {
					env.ProgressToken = IDFrom(mp.ProgressToken)
				}
				if env.Method == "notifications/cancelled" {
					env.CancelledID = IDFrom(mp.RequestID)
				}
			}
		}
	}
	return env
}

// IsReply reports whether the kind is a response or an error response.
func (k Kind) IsReply() bool { return k == Response || k == ErrorReply }

// Version is the value of every message's "jsonrpc" member.
const Version = "2.0"

package clients

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// The outbound messages every wire client builds the same way; a
// transport only frames them (a line on stdio, a frame on WebSocket, an
// HTTP body without the newline).

// outMsg is an outbound request or notification.
type outMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  any             `json:"params,omitempty"`
}

// marshalLine encodes v as one line, without HTML escaping (bytes on the wire
// stay what the caller wrote), ending in "\n".
// responseLine is the line of a JSON-RPC response with id and result
// (marshalled as given; nil is sent as null).
func responseLine(id jsonrpc.ID, result any) ([]byte, error) {
	return marshalLine(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result"`
	}{jsonrpc.Version, id.Raw(), result})
}

func marshalLine(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("clients: encode message: %w", err)
	}
	return b.Bytes(), nil
}

// encodeRequest encodes a request with an explicit id under session s
// (the modern per-request _meta injected, see requestParamsFor), as a line.
func encodeRequest(s Session, id jsonrpc.ID, method string, params map[string]any) ([]byte, error) {
	if id.IsZero() {
		return nil, errors.New("clients: Start needs an id (use Notify for a notification)")
	}
	return marshalLine(outMsg{JSONRPC: jsonrpc.Version, ID: id.Raw(), Method: method, Params: requestParamsFor(s, params)})
}

// encodeNotification encodes a notification, params as given (omitted when
// nil, a nil map included; nothing injected in either era), as a line.
func encodeNotification(method string, params any) ([]byte, error) {
	if m, ok := params.(map[string]any); ok && m == nil {
		params = nil
	}
	return marshalLine(outMsg{JSONRPC: jsonrpc.Version, Method: method, Params: params})
}

// requestParamsFor returns what goes into "params" for a request under s
// (nil: omit). In the modern era params gets the per-request _meta keys
// protocolVersion and clientCapabilities, merged into an existing
// params["_meta"] map without overwriting keys the caller set; the caller's
// maps are never modified. In the legacy era (or before negotiation)
// params is sent as given.
func requestParamsFor(s Session, params map[string]any) any {
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

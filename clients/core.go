package clients

import (
	"context"
	"encoding/json"
	"maps"
	"sync/atomic"
	"time"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/protocol"
)

// Names of the protocol the clients read and write, the same constants as
// protocol's: the reserved _meta keys (2026-07-28 basic/index.mdx "Reserved
// keys") and the header names of Streamable HTTP.
const (
	MetaProgressToken      = protocol.MetaProgressToken
	MetaProtocolVersion    = protocol.MetaProtocolVersion
	MetaClientCapabilities = protocol.MetaClientCapabilities
	MetaClientInfo         = protocol.MetaClientInfo
	MetaServerInfo         = protocol.MetaServerInfo

	HeaderProtocolVersion = protocol.HeaderProtocolVersion
	HeaderSessionID       = protocol.HeaderSessionID
	HeaderMethod          = protocol.HeaderMethod
	HeaderName            = protocol.HeaderName
	HeaderLastEventID     = protocol.HeaderLastEventID
)

// core is what every wire client is made of, whatever its transport: the
// one inbound message log (inbox), the negotiated session and the id
// counter. Wire and HTTPWire embed it; inbox.mu guards session.
type core struct {
	inbox
	nextID  atomic.Int64
	session Session
}

func newCore(maxMessages int) core { return core{inbox: newInbox(maxMessages)} }

// fillDefaults fills the zero fields every wire client's options have
// (WireOptions, HTTPOptions).
func fillDefaults(name, version *string, probeTimeout *time.Duration, maxMessages *int) {
	if *name == "" {
		*name = DefaultClientName
	}
	if *version == "" {
		*version = DefaultClientVersion
	}
	if *probeTimeout <= 0 {
		*probeTimeout = DefaultProbeTimeout
	}
	if *maxMessages <= 0 {
		*maxMessages = DefaultMaxMessages
	}
}

// NewID returns a fresh integer id: 1, 2, 3... never reused by this
// client.
func (c *core) NewID() jsonrpc.ID { return jsonrpc.IntID(c.nextID.Add(1)) }

// Session returns the negotiated session (zero before Negotiate).
func (c *core) Session() Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session
}

// SetSession installs a session without negotiating, e.g. to reuse a
// cached era determination (2026-07-28 basic/versioning.mdx allows caching
// it for the lifetime of the server process). Requests built afterwards
// carry its version: in the modern era the per-request _meta (and, on
// HTTP, the modern headers), on HTTP the MCP-Protocol-Version header in
// either era.
func (c *core) SetSession(s Session) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.session = s
}

// ProgressParams returns a copy of params (which may be nil) with
// params._meta.progressToken set to token, merging into an existing _meta
// map; the caller's maps are not modified. token must be a string or an
// integer (int, int64, uint64...; marshalled exactly), or a jsonrpc.ID /
// json.RawMessage holding the token's JSON text. A token already present in
// params._meta is replaced.
func (*core) ProgressParams(token any, params map[string]any) map[string]any {
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

// call is Call on any Conn: a request with a fresh id, awaited.
func call(ctx context.Context, c Conn, method string, params map[string]any) (Message, error) {
	r, err := c.Send(ctx, c.NewID(), method, params)
	if err != nil {
		return Message{}, err
	}
	return r.Wait(ctx)
}

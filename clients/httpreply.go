package clients

import (
	"bytes"
	"context"
	"fmt"
	"net/http"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// Reply POSTs a JSON-RPC response with the given id and result (marshalled
// as given; nil is sent as null), e.g. to answer a ping the server sent on
// an SSE stream (2025 versions: "The body of the POST request MUST be a
// single JSON-RPC request, notification, or response"). It carries the
// headers of Notify (Content-Type, Accept, MCP-Protocol-Version,
// Mcp-Session-Id, then HTTPOptions.Header; no Mcp-Method, as a response has
// no method) and returns the HTTP status (202 when accepted); err is only
// for a failed exchange, as for Notify.
func (w *HTTPWire) Reply(ctx context.Context, id jsonrpc.ID, result any) (status int, err error) {
	line, err := responseLine(id, result)
	if err != nil {
		return 0, err
	}
	body := bytes.TrimSuffix(line, []byte("\n"))
	s, sid := w.state()
	h := w.baseHeader(s, sid)
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	applyHeader(h, w.opts.Header)
	resp, _, err := w.exchange(ctx, http.MethodPost, body, h, fmt.Sprintf("POST#%d", w.postN.Add(1)), false)
	if resp == nil {
		return 0, err
	}
	return resp.StatusCode, err
}

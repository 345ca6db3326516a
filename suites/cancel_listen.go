package suites

// CANCEL-HTTP-CLOSE's other stream: a 2026-07-28 server sends messages only
// on the response streams of the client's requests, so the one channel it
// could use for a request whose stream the client closed is another open
// stream: a subscriptions/listen, which stays open. The check holds one open
// across the close (when the server serves subscriptions/listen), and reads
// every message of every stream after the close.

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// openCloseListen opens a subscriptions/listen (toolsListChanged) on c and
// waits for its acknowledgment; nil, with the reason, when the server does
// not serve one (an error answer, no SSE stream, no acknowledgment within
// the call timeout): the check then has no other stream to read.
func openCloseListen(h *H, c *HConn) (*clients.HTTPCall, string) {
	id := jsonrpc.StringID(unique("close-listen"))
	call, err := c.W.Start(h.Ctx(), id, "subscriptions/listen", map[string]any{"notifications": map[string]any{"toolsListChanged": true}})
	if err != nil {
		return nil, fmt.Sprintf("no subscriptions/listen stream held open (%v)", err)
	}
	ctx, cancel := context.WithTimeout(h.Ctx(), h.Cfg().CallTimeout)
	defer cancel()
	e, err := call.WaitEvent(ctx, 0, func(e clients.StreamEvent) bool {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		return e.Seq >= 0 && json.Unmarshal([]byte(e.Data), &m) == nil &&
			(m.Method == "notifications/subscriptions/acknowledged" || len(m.ID) > 0)
	})
	if err != nil || !isAck(e.Data) {
		call.Close()
		what := "no acknowledgment"
		if err == nil {
			what = clip([]byte(e.Data))
		}
		return nil, fmt.Sprintf("no subscriptions/listen stream held open (HTTP %d: %s)", call.Status(), what)
	}
	return call, ""
}

func isAck(data string) bool {
	var m struct {
		Method string `json:"method"`
	}
	return json.Unmarshal([]byte(data), &m) == nil && m.Method == "notifications/subscriptions/acknowledged"
}

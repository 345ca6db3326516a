package suites

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/protocol"
)

// How SUBSCRIPTION-TEARDOWN-CANCELLED and SUBSCRIPTION-GRACEFUL-CLOSE make
// the server end a subscriptions/listen on its own initiative: with the
// endSubscriptions role (a tool call after which the server ends the
// subscriptions open at the time, a contract the manifest declares), on
// every transport; without it, over stdio only, by shutting the server
// down (closing its stdin), the spec's own example ("for example, during
// shutdown").

// endSubscriptionsRole is the manifest role of a tool call that makes the
// server end every open subscriptions/listen on its own initiative.
const endSubscriptionsRole = "endSubscriptions"

// subscriptionEnd is what a check saw of a subscription the server was
// made to end.
type subscriptionEnd struct {
	id        jsonrpc.ID
	declared  bool             // by the endSubscriptions role (else: a stdio shutdown)
	answer    *clients.Message // the response to the listen request, if any
	cancelled *clients.Message // notifications/cancelled referencing it, if any
	how       string           // how the end was provoked, for the report
}

// provokeSubscriptionEnd opens subscriptions/listen with {toolsListChanged:
// true} (an error answer: SKIP) and makes the server end it: the
// endSubscriptions role's call when the manifest declares one (then it
// reads until both the listen's response and a notifications/cancelled
// for it came, or wait passed since the call), else, on stdio, closing
// the server's stdin and reading until its stdout ends (at most
// stdioExitBound). Any other target SKIPs.
func provokeSubscriptionEnd(h *H, name string, want func(e *subscriptionEnd) bool) *subscriptionEnd {
	if _, ok := h.Target().Roles[endSubscriptionsRole]; ok {
		return endByRole(h, name, want)
	}
	if h.Target().Via() != protocol.TransportStdio {
		h.Skip(fmt.Sprintf("the manifest declares no %q role (a tool call after which the server ends its open subscriptions), "+
			"and on %s the harness cannot shut the server down to make it end one", endSubscriptionsRole, h.Target().Transport))
	}
	return endByShutdown(h, name)
}

// endByRole ends a subscription with the endSubscriptions role's call and
// gathers what the server sent for it until want is satisfied or the
// operation timeout passed since the call.
func endByRole(h *H, name string, want func(e *subscriptionEnd) bool) *subscriptionEnd {
	c := connectMsg(h)
	e := &subscriptionEnd{id: jsonrpc.StringID(unique(name)), declared: true}
	openListen(h, c, e.id, map[string]any{"toolsListChanged": true})
	from := c.length()
	role := h.Role(endSubscriptionsRole)
	m := c.await(c.startRole(endSubscriptionsRole, jsonrpc.StringID(unique("end-subscriptions")), nil), "the endSubscriptions role's call")
	if m.Env.Kind != jsonrpc.Response || toolError(m) {
		h.Errorf("the endSubscriptions role's call (tool %s) failed: %s", role.Tool, clip(m.Raw))
	}
	e.how = fmt.Sprintf("subscription %s acknowledged; the endSubscriptions role's call (tool %s) answered %s", e.id, role.Tool, clip(m.Raw))
	deadline := time.Now().Add(h.Cfg().OpTimeout)
	seen := from
	for {
		e.gather(c.since(from))
		if want(e) {
			break
		}
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		n := c.length()
		if n == seen {
			c.waitFirst(seen, left, func(clients.Message) bool { return true })
		}
		seen = n
	}
	return e
}

// endByShutdown ends a subscription by closing the stdio server's stdin
// (the server shuts down) and gathers what it wrote until its stdout ended.
func endByShutdown(h *H, name string) *subscriptionEnd {
	conn := h.Connect()
	c := stdioMsg{conn}
	e := &subscriptionEnd{id: jsonrpc.StringID(unique(name))}
	openListen(h, c, e.id, map[string]any{"toolsListChanged": true})
	from := c.length()
	if err := conn.Link.CloseInput(); err != nil {
		h.Errorf("close the server's stdin: %v", err)
	}
	e.how = fmt.Sprintf("subscription %s acknowledged; closed the server's stdin", e.id)
	t := time.NewTimer(stdioExitBound)
	defer t.Stop()
	select {
	case <-conn.W.Closed():
	case <-t.C:
		h.Notef("the server's stdout was still open %s after its stdin closed; judging what came until then", stdioExitBound)
	case <-h.Ctx().Done():
		h.Errorf("the run ended while reading the server's last messages: %v", h.Ctx().Err())
	}
	e.gather(c.since(from))
	return e
}

// gather records the first response to the listen request and the first
// notifications/cancelled referencing it among ms.
func (e *subscriptionEnd) gather(ms []clients.Message) {
	for _, m := range ms {
		switch {
		case (m.Env.Kind == jsonrpc.Response || m.Env.Kind == jsonrpc.ErrorReply) && m.Env.ID == e.id && e.answer == nil:
			e.answer = &m
		case cancelledFor(e.id)(m) && e.cancelled == nil:
			e.cancelled = &m
		}
	}
}

// cancelledFor reports whether m is notifications/cancelled whose
// requestId is id.
func cancelledFor(id jsonrpc.ID) func(clients.Message) bool {
	return func(m clients.Message) bool {
		if m.Env.Kind != jsonrpc.Notification || m.Env.Method != "notifications/cancelled" || m.Env.Params == nil {
			return false
		}
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		return json.Unmarshal(m.Env.Params, &p) == nil && jsonrpc.IDFrom(p.RequestID) == id
	}
}

// completionProblem says what keeps a response to subscriptions/listen
// from being the completion result of Graceful Closure (a success whose
// resultType is "complete"), or "" when it is one.
func completionProblem(m *clients.Message) string {
	if m.Env.Kind != jsonrpc.Response {
		return "an error, not a completion result"
	}
	var r struct {
		ResultType *string `json:"resultType"`
	}
	if json.Unmarshal(m.Env.Result, &r) != nil {
		return "a result that is not an object"
	}
	switch {
	case r.ResultType == nil:
		return `a result without resultType (the completion result has resultType "complete")`
	case *r.ResultType != "complete":
		return fmt.Sprintf(`a result whose resultType is %q, not "complete"`, *r.ResultType)
	}
	return ""
}

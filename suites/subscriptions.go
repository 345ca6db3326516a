package suites

import (
	"encoding/json"
	"fmt"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/protocol"
	"github.com/mcp-conform/mcp-conform/reports"
)

// SUBSCRIPTION: 2026-07-28 subscriptions/listen (basic/patterns/subscriptions.mdx).

// subscriptionsModern is the page of subscriptions/listen.
const subscriptionsModern = "specification/2026-07-28/basic/patterns/subscriptions.mdx"

var checkSubscriptionAckFirst = register(&Check{
	ID:    "SUBSCRIPTION-ACK-FIRST",
	Title: "the first message of a subscriptions/listen stream is notifications/subscriptions/acknowledged",
	How: "2026-07-28, stdio, Streamable HTTP and WebSocket. Sends subscriptions/listen (a string id, the filter " +
		"{toolsListChanged: true}) and reads what the server sends for it: the first message that carries the " +
		"subscription's id in _meta io.modelcontextprotocol/subscriptionId (or answers the request) must be " +
		"notifications/subscriptions/acknowledged. An error answer (the server does not serve subscriptions/listen) " +
		"is SKIP; nothing within the call timeout FAILs.",
	Rules: map[string]Rule{v20260728: {Level: reports.Must, Spec: subscriptionsModern,
		Clause: "The server MUST send notifications/subscriptions/acknowledged as the first message carrying the subscription's ID in _meta under io.modelcontextprotocol/subscriptionId, and MUST NOT send any notification on the subscription before it."}},
	Transports: []string{viaStdio, viaHTTP, viaWebSocket},
	Clauses:    []string{"sub#2"},
})

func registerSubscriptions() {
	ginkgo.Describe("SUBSCRIPTION streams (2026-07-28)", ginkgo.Label("area:subscription"), func() {
		define(checkSubscriptionAckFirst, subscriptionAckFirst)
	})
}

// subscriptionOf returns the subscription id a message's params._meta
// carries (the zero ID when none).
func subscriptionOf(m clients.Message) jsonrpc.ID {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if m.Env.Params == nil || json.Unmarshal(m.Env.Params, &p) != nil {
		return ""
	}
	return jsonrpc.IDFrom(p.Meta[protocol.MetaSubscriptionID])
}

// ofSubscription reports whether m belongs to the subscription opened by
// the listen request id: a message tagged with it, or the answer to it.
func ofSubscription(id jsonrpc.ID) func(clients.Message) bool {
	return func(m clients.Message) bool {
		if (m.Env.Kind == jsonrpc.Response || m.Env.Kind == jsonrpc.ErrorReply) && m.Env.ID == id {
			return true
		}
		return m.Env.Kind == jsonrpc.Notification && subscriptionOf(m) == id
	}
}

func subscriptionAckFirst(h *H) {
	c := connectMsg(h)
	id := jsonrpc.StringID("mcp-conform-listen-1")
	from := c.length()
	c.send(id, "subscriptions/listen", map[string]any{"notifications": map[string]any{"toolsListChanged": true}})
	first, ok := c.waitFirst(from, h.Cfg().CallTimeout, ofSubscription(id))
	switch {
	case !ok:
		h.Failf("subscriptions/listen %s: no message of the subscription (no acknowledgment, no answer) %s", id, c.silence(h.Cfg().CallTimeout))
	case first.Env.Kind == jsonrpc.ErrorReply:
		h.Skip(fmt.Sprintf("the server answered subscriptions/listen with an error (it does not serve subscriptions): %s", clip(first.Raw)))
	case first.Env.Kind == jsonrpc.Response:
		h.Failf("subscriptions/listen %s was answered before any acknowledgment: %s", id, clip(first.Raw))
	case first.Env.Method != "notifications/subscriptions/acknowledged":
		h.Failf("the first message of subscription %s is %s, not notifications/subscriptions/acknowledged: %s", id, first.Env.Method, clip(first.Raw))
	}
	h.Notef("acknowledged: %s", clip(first.Raw))
}

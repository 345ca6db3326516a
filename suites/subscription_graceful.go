package suites

import (
	"fmt"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/reports"
)

// SUBSCRIPTION-GRACEFUL-CLOSE: a server that ends a subscriptions/listen on
// its own initiative answers the listen request with the completion result
// (sub#3).

var checkSubscriptionGracefulClose = register(&Check{
	ID:    "SUBSCRIPTION-GRACEFUL-CLOSE",
	Title: "a server that ends a subscriptions/listen on its own initiative answers it with a completion result",
	How: fmt.Sprintf("2026-07-28. Opens subscriptions/listen with {toolsListChanged: true} and waits for its acknowledgment "+
		"(an error answer: SKIP), then makes the server end it, as SUBSCRIPTION-TEARDOWN-CANCELLED does. With the "+
		"endSubscriptions role (stdio, Streamable HTTP, WebSocket): calls it and waits up to the operation timeout for the "+
		"response to the listen request; none WARNs (the manifest declares the call ends every open subscription, so the "+
		"server ended it on its own initiative). Without the role, on stdio only: closes the server's stdin and reads until "+
		"its stdout ends (at most %s); a notifications/cancelled referencing the listen request is the server tearing the "+
		"subscription down, which then owes the response; neither: SKIP (a process exit alone is a transport close). The "+
		"response must be a success whose result has resultType \"complete\" (subscriptions.mdx's example; schema "+
		"SubscriptionsListenResult): an error, or another resultType, WARNs. Without the role over HTTP or WebSocket: SKIP.",
		stdioExitBound),
	Rules: map[string]Rule{v20260728: {Level: reports.Should, Spec: subscriptionsModern,
		Clause: "When the server ends a subscription on its own initiative (for example, during shutdown), it SHOULD respond to the original subscriptions/listen request with a completion result before closing the stream."}},
	Transports: []string{viaStdio, viaHTTP, viaWebSocket},
	Clauses:    []string{"sub#3"},
})

func subscriptionGracefulClose(h *H) {
	e := provokeSubscriptionEnd(h, "listen-graceful", func(e *subscriptionEnd) bool { return e.answer != nil })
	h.Notef("%s", e.how)
	switch {
	case e.answer != nil:
		if p := completionProblem(e.answer); p != "" {
			h.Failf("the server answered subscription %s as it ended it with %s: %s", e.id, p, clip(e.answer.Raw))
		}
		h.Notef("the server ended subscription %s with the completion result %s", e.id, clip(e.answer.Raw))
	case e.declared:
		h.Failf("after the endSubscriptions role's call (which the manifest declares ends every open subscription) no response to subscriptions/listen %s came within %s (notifications/cancelled: %s)",
			e.id, h.Cfg().OpTimeout, seenOrNot(e.cancelled))
	case e.cancelled != nil:
		h.Failf("the server tore subscription %s down at shutdown (notifications/cancelled %s) but closed its stdout without a response to the listen request",
			e.id, clip(e.cancelled.Raw))
	default:
		h.Skip(fmt.Sprintf("the server sent nothing for subscription %s after its stdin closed: it showed no end of its own (the transport closing ends a subscription without a response)", e.id))
	}
}

// seenOrNot clips a message, or says none came.
func seenOrNot(m *clients.Message) string {
	if m == nil {
		return "none"
	}
	return clip(m.Raw)
}

package suites

import (
	"fmt"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/reports"
)

// SUBSCRIPTION-TEARDOWN-CANCELLED: a server that tears a subscriptions/listen
// stream down sends notifications/cancelled for it (c26#1).

var checkSubscriptionTeardown = register(&Check{
	ID:    "SUBSCRIPTION-TEARDOWN-CANCELLED",
	Title: "a server that ends a subscriptions/listen on its own initiative sends notifications/cancelled referencing it",
	How: fmt.Sprintf("2026-07-28. Opens subscriptions/listen with {toolsListChanged: true} and waits for its acknowledgment "+
		"(an error answer: SKIP), then makes the server end it. With the endSubscriptions role (stdio, Streamable HTTP, "+
		"WebSocket): calls the role, which the manifest declares ends every open subscription, and waits up to the "+
		"operation timeout for a notifications/cancelled whose requestId is the listen request's id: none FAILs (the "+
		"level comes from the declared contract: the server tore the stream down). Without the role, on stdio only: "+
		"closes the server's stdin (the server shuts down) and reads everything it writes until its stdout ends (at most "+
		"%s); a response to the listen request is the server ending the subscription itself (subscriptions.mdx, Graceful "+
		"Closure), and a notifications/cancelled for it must then have come too, or the check FAILs; a server that exits "+
		"without a word about the subscription shows no teardown of its own (the transport closing ends a subscription "+
		"too): SKIP. Without the role over HTTP or WebSocket: SKIP.", stdioExitBound),
	Rules: map[string]Rule{v20260728: {Level: reports.Must, Spec: cancelModern, Also: []string{subscriptionsModern},
		Clause: "A server MUST send notifications/cancelled referencing a subscriptions/listen request ID when it tears down that subscription stream"}},
	Transports: []string{viaStdio, viaHTTP, viaWebSocket},
	Clauses:    []string{"c26#1"},
})

func registerSubscriptionTeardown() {
	ginkgo.Describe("SUBSCRIPTION teardown (2026-07-28)", ginkgo.Label("area:subscription"), func() {
		define(checkSubscriptionTeardown, subscriptionTeardown)
		define(checkSubscriptionGracefulClose, subscriptionGracefulClose) // subscription_graceful.go
	})
}

func subscriptionTeardown(h *H) {
	e := provokeSubscriptionEnd(h, "listen-teardown", func(e *subscriptionEnd) bool { return e.cancelled != nil })
	h.Notef("%s", e.how)
	switch {
	case e.cancelled != nil:
		h.Notef("the server sent notifications/cancelled for subscription %s: %s", e.id, clip(e.cancelled.Raw))
	case e.declared && e.answer != nil:
		h.Failf("after the endSubscriptions role's call the server ended subscription %s with a response (%s) but sent no notifications/cancelled referencing it within %s",
			e.id, clip(e.answer.Raw), h.Cfg().OpTimeout)
	case e.declared:
		h.Failf("after the endSubscriptions role's call (which the manifest declares ends every open subscription) the server sent no notifications/cancelled referencing subscription %s within %s",
			e.id, h.Cfg().OpTimeout)
	case e.answer == nil:
		h.Skip(fmt.Sprintf("the server sent nothing for subscription %s after its stdin closed: it showed no teardown of its own (the transport closing ends a subscription without one)", e.id))
	default:
		h.Failf("the server ended subscription %s with a response (%s) but sent no notifications/cancelled referencing it", e.id, clip(e.answer.Raw))
	}
}

package suites

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/protocol"
	"github.com/mcp-conform/mcp-conform/reports"
)

// SUBSCRIPTION-TEARDOWN-CANCELLED: a server that tears a subscriptions/listen
// stream down sends notifications/cancelled for it (c26#1).

var checkSubscriptionTeardown = register(&Check{
	ID:    "SUBSCRIPTION-TEARDOWN-CANCELLED",
	Title: "a server that ends a subscriptions/listen at shutdown sends notifications/cancelled referencing it",
	How: fmt.Sprintf("2026-07-28 over stdio. Opens subscriptions/listen with {toolsListChanged: true} and waits for its "+
		"acknowledgment (an error answer: SKIP), then closes the server's stdin (the client ending the connection: the "+
		"server shuts down) and reads everything the server writes until its stdout ends (at most %s). A response to the "+
		"listen request is the server ending the subscription on its own initiative (subscriptions.mdx, Graceful "+
		"Closure: \"When the server ends a subscription on its own initiative (for example, during shutdown), it SHOULD "+
		"respond to the original subscriptions/listen request\"): a notifications/cancelled whose requestId is the listen "+
		"request's id must then have come too, or the check FAILs. A server that exits without a word about the "+
		"subscription shows no teardown of its own (the transport closing ends a subscription too): SKIP.", stdioExitBound),
	Rules: map[string]Rule{v20260728: {Level: reports.Must, Spec: cancelModern, Also: []string{subscriptionsModern},
		Clause: "A server MUST send notifications/cancelled referencing a subscriptions/listen request ID when it tears down that subscription stream"}},
	Transports: []string{viaStdio},
	Clauses:    []string{"c26#1"},
	Limits: map[string]string{"c26#1": "the teardown at shutdown over stdio, by a server that answers the listen request " +
		"as it ends it; one that ends a subscription at another time, or silently, is not provoked or told apart from a transport close"},
})

func registerSubscriptionTeardown() {
	ginkgo.Describe("SUBSCRIPTION teardown (2026-07-28)", ginkgo.Label("area:subscription"), func() {
		define(checkSubscriptionTeardown, subscriptionTeardown)
	})
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

func subscriptionTeardown(h *H) {
	if h.Target().Via() != protocol.TransportStdio {
		h.Skip("the target is not a stdio process (" + h.Target().Transport + "): the check shuts the server down by closing its stdin")
	}
	conn := h.Connect()
	c := stdioMsg{conn}
	id := jsonrpc.StringID(unique("listen-teardown"))
	openListen(h, c, id, map[string]any{"toolsListChanged": true})
	from := c.length()
	if err := conn.Link.CloseInput(); err != nil {
		h.Errorf("close the server's stdin: %v", err)
	}
	h.Notef("subscription %s acknowledged; closed the server's stdin", id)
	t := time.NewTimer(stdioExitBound)
	defer t.Stop()
	select {
	case <-conn.W.Closed():
	case <-t.C:
		h.Notef("the server's stdout was still open %s after its stdin closed; judging what came until then", stdioExitBound)
	case <-h.Ctx().Done():
		h.Errorf("the run ended while reading the server's last messages: %v", h.Ctx().Err())
	}
	var answer, cancelled *clients.Message
	for _, m := range c.since(from) {
		switch {
		case (m.Env.Kind == jsonrpc.Response || m.Env.Kind == jsonrpc.ErrorReply) && m.Env.ID == id && answer == nil:
			answer = &m
		case cancelledFor(id)(m) && cancelled == nil:
			cancelled = &m
		}
	}
	switch {
	case cancelled != nil:
		h.Notef("the server sent notifications/cancelled for subscription %s: %s", id, clip(cancelled.Raw))
	case answer == nil:
		h.Skip(fmt.Sprintf("the server sent nothing for subscription %s after its stdin closed: it showed no teardown of its own (the transport closing ends a subscription without one)", id))
	default:
		h.Failf("the server ended subscription %s with a response (%s) but sent no notifications/cancelled referencing it", id, clip(answer.Raw))
	}
}

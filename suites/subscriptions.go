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

var checkSubscriptionIDTagged = register(&Check{
	ID:    "SUBSCRIPTION-ID-TAGGED",
	Title: "every notification on a subscriptions/listen stream carries the subscription's id in _meta",
	How: "2026-07-28, stdio, Streamable HTTP and WebSocket, with the listChanged role. Opens subscriptions/listen with " +
		"{toolsListChanged: true} (an error answer: SKIP), waits for its acknowledgment, calls the role, waits for " +
		"notifications/tools/list_changed, and calls the role again (to restore the list). Every notification of a " +
		"subscription type (tools, prompts or resources list_changed, resources/updated) the stream carried meanwhile " +
		"must hold _meta io.modelcontextprotocol/subscriptionId equal to the listen request's id; one without it, or with " +
		"another, FAILs. Over HTTP the stream is the listen request's SSE stream; on stdio and WebSocket, where every " +
		"message shares one channel, a notification of a subscription type while the one listen is open is the stream's " +
		"(2026-07-28 delivers them on listen streams only). No list_changed at all: SKIP (TOOLS-LIST-CHANGED judges that).",
	Rules: map[string]Rule{v20260728: {Level: reports.Must, Spec: basicModern, Also: []string{subscriptionsModern},
		Clause: "On notifications delivered via a subscriptions/listen stream, the server MUST include io.modelcontextprotocol/subscriptionId in _meta so the client can correlate the notification with the originating subscription request."}},
	Transports: []string{viaStdio, viaHTTP, viaWebSocket},
	Roles:      []string{"listChanged"},
	Clauses:    []string{"basic#22"},
	Limits:     map[string]string{"basic#22": "the tools list_changed notifications the listChanged role causes"},
})

var checkSubscriptionFilter = register(&Check{
	ID:    "SUBSCRIPTION-FILTER",
	Title: "a subscriptions/listen stream carries no notification type its filter did not ask for",
	How: "2026-07-28, stdio, Streamable HTTP and WebSocket, with the listChanged role. Opens two subscriptions/listen: " +
		"one whose filter asks for prompts list changes only ({promptsListChanged: true}), one for tools list changes " +
		"(the control); waits for both acknowledgments (an error answer: SKIP), calls the role twice (a change and its " +
		"restoration) and waits for the control's two notifications/tools/list_changed (none: SKIP, the server sent " +
		"nothing it could have filtered), then 500 ms more. A notifications/tools/list_changed of the first subscription " +
		"FAILs: over HTTP one on its SSE stream; on stdio and WebSocket one tagged with its id.",
	Rules: map[string]Rule{v20260728: {Level: reports.Must, Spec: subscriptionsModern,
		Clause: "The client sends a subscriptions/listen request with a notifications filter specifying which event types it wants to receive. The server MUST NOT send notification types the client has not explicitly requested."}},
	Transports: []string{viaStdio, viaHTTP, viaWebSocket},
	Roles:      []string{"listChanged"},
	Clauses:    []string{"sub#1"},
	Limits:     map[string]string{"sub#1": "tools list changes on a stream that asked for prompts list changes only"},
})

func registerSubscriptions() {
	ginkgo.Describe("SUBSCRIPTION streams (2026-07-28)", ginkgo.Label("area:subscription"), func() {
		define(checkSubscriptionAckFirst, subscriptionAckFirst)
		define(checkSubscriptionIDTagged, subscriptionIDTagged)
		define(checkSubscriptionFilter, subscriptionFilter)
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

// openListen sends subscriptions/listen with filter as its notifications
// and returns its acknowledgment. An error answer is SKIP (the server does
// not serve subscriptions); no acknowledgment within the call timeout, or
// an answer first, is SKIP too (SUBSCRIPTION-ACK-FIRST judges those).
func openListen(h *H, c msgConn, id jsonrpc.ID, filter map[string]any) clients.Message {
	from := c.length()
	c.send(id, "subscriptions/listen", map[string]any{"notifications": filter})
	m, ok := c.waitFirst(from, h.Cfg().CallTimeout, func(m clients.Message) bool {
		if (m.Env.Kind == jsonrpc.Response || m.Env.Kind == jsonrpc.ErrorReply) && m.Env.ID == id {
			return true
		}
		return m.Env.Method == "notifications/subscriptions/acknowledged" && subscriptionOf(m) == id
	})
	switch {
	case !ok:
		h.Skip(fmt.Sprintf("subscriptions/listen %s: no acknowledgment %s (SUBSCRIPTION-ACK-FIRST judges that)", id, c.silence(h.Cfg().CallTimeout)))
	case m.Env.Kind == jsonrpc.ErrorReply:
		h.Skip(fmt.Sprintf("the server answered subscriptions/listen with an error (it does not serve subscriptions): %s", clip(m.Raw)))
	case m.Env.Kind == jsonrpc.Response:
		h.Skip(fmt.Sprintf("subscriptions/listen %s was answered before any acknowledgment (SUBSCRIPTION-ACK-FIRST judges that): %s", id, clip(m.Raw)))
	}
	return m
}

// subscriptionMethods are the notifications a subscriptions/listen filter
// asks for (subscriptions.mdx, Notification Filter).
var subscriptionMethods = map[string]bool{
	methodToolsListChanged:                 true,
	"notifications/prompts/list_changed":   true,
	"notifications/resources/list_changed": true,
	"notifications/resources/updated":      true,
}

// onListenStream reports whether m, a notification of a subscription type,
// travelled on the stream of the listen acknowledged by ack: over HTTP its
// SSE stream; on stdio and WebSocket, whose one channel carries every
// subscription, any (tagged or not: 2026-07-28 delivers these types on
// listen streams only).
func onListenStream(c msgConn, ack clients.Message) func(clients.Message) bool {
	return func(m clients.Message) bool {
		return m.Env.Kind == jsonrpc.Notification && subscriptionMethods[m.Env.Method] && c.sameStream(ack, m)
	}
}

func subscriptionIDTagged(h *H) {
	c := connectMsg(h)
	id := jsonrpc.StringID(unique("listen-tagged"))
	ack := openListen(h, c, id, map[string]any{"toolsListChanged": true})
	from := c.length()
	onStream := func(m clients.Message) bool { return isToolsListChanged(m) && onListenStream(c, ack)(m) }
	callListChangedRole(h, c, "the listChanged role's call")
	first, ok := c.waitFirst(from, h.Cfg().OpTimeout, onStream)
	callListChangedRole(h, c, "the listChanged role's second call (to restore the list)")
	if !ok {
		h.Skip(fmt.Sprintf("no %s on the listen stream after the listChanged role's call (acknowledged %s): nothing to judge (TOOLS-LIST-CHANGED judges whether one is owed)", methodToolsListChanged, clip(ack.Raw)))
	}
	c.waitFirst(first.Seq+1, h.Cfg().OpTimeout, onStream) // the restoration's, when it comes
	n := 0
	for _, m := range c.since(from) {
		if !onListenStream(c, ack)(m) {
			continue
		}
		n++
		if got := subscriptionOf(m); got != id {
			if got == "" {
				h.Failf("%s on the stream of subscriptions/listen %s carries no _meta %s: %s", m.Env.Method, id, protocol.MetaSubscriptionID, clip(m.Raw))
			}
			h.Failf("%s on the stream of subscriptions/listen %s carries the subscription id %s: %s", m.Env.Method, id, got, clip(m.Raw))
		}
	}
	h.Notef("%d notifications on the stream of subscriptions/listen %s, each tagged with its id", n, id)
}

// filterGrace is how long SUBSCRIPTION-FILTER still watches the stream
// that asked for no tools changes after the control stream heard both.
const filterGrace = 500 * time.Millisecond

func subscriptionFilter(h *H) {
	c := connectMsg(h)
	other := jsonrpc.StringID(unique("listen-prompts"))
	otherAck := openListen(h, c, other, map[string]any{"promptsListChanged": true})
	control := jsonrpc.StringID(unique("listen-tools"))
	controlAck := openListen(h, c, control, map[string]any{"toolsListChanged": true})
	from := c.length()
	ofControl := func(m clients.Message) bool {
		if !isToolsListChanged(m) || !onListenStream(c, controlAck)(m) {
			return false
		}
		// One channel: any not tagged with the other subscription's id (an
		// untagged one is SUBSCRIPTION-ID-TAGGED's concern).
		return !c.sameStream(controlAck, otherAck) || subscriptionOf(m) != other
	}
	ofOther := func(m clients.Message) bool {
		if !isToolsListChanged(m) {
			return false
		}
		if c.sameStream(otherAck, controlAck) {
			return subscriptionOf(m) == other // one channel: by its tag
		}
		return c.sameStream(otherAck, m)
	}
	callListChangedRole(h, c, "the listChanged role's call")
	callListChangedRole(h, c, "the listChanged role's second call (to restore the list)")
	heard := 0
	at := from
	for heard < 2 {
		m, ok := c.waitFirst(at, h.Cfg().OpTimeout, ofControl)
		if !ok {
			break
		}
		heard++
		at = m.Seq + 1
	}
	if heard == 0 {
		h.Skip(fmt.Sprintf("the subscription that asked for tools list changes got no %s after the listChanged role's calls: the server sent nothing to filter", methodToolsListChanged))
	}
	if m, ok := c.waitFirst(from, filterGrace, ofOther); ok {
		h.Failf("subscriptions/listen %s asked for %s only, yet got %s: %s", other, "promptsListChanged", m.Env.Method, clip(m.Raw))
	}
	h.Notef("the tools subscription %s got %d %s, the prompts-only subscription %s none (acknowledged %s)", control, heard, methodToolsListChanged, other, clip(otherAck.Raw))
}

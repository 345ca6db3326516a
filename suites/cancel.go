package suites

import (
	"fmt"
	"strings"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/reports"
)

var (
	legacyVersions = []string{"2025-11-25", "2025-06-18"}
	allVersions    = []string{"2026-07-28", "2025-11-25", "2025-06-18"}
)

const (
	cancelLegacy = "specification/VERSION/basic/utilities/cancellation.mdx"
	cancelModern = "specification/2026-07-28/basic/patterns/cancellation.mdx"
	stdioModern  = "specification/2026-07-28/basic/transports/stdio.mdx"
	indexPage    = "specification/VERSION/basic/index.mdx"
)

var (
	checkCancelSuppress = register(&Check{
		ID:    "CANCEL-STDIO-SUPPRESS",
		Title: "no response for a request cancelled in flight",
		How: "Calls the slow role with a progress token, sends notifications/cancelled once the first " +
			"progress arrives, then runs an identical uncancelled control call to completion and a ping. " +
			"Any response for the cancelled id after the cancellation was sent fails the check.",
		Rules: merge(
			sameRule(Rule{Level: reports.Should, Spec: cancelLegacy,
				Clause: "Receivers of cancellation notifications SHOULD: Stop processing the cancelled request; Free associated resources; Not send a response for the cancelled request"},
				legacyVersions...),
			map[string]Rule{"2026-07-28": {Level: reports.Must, Spec: stdioModern,
				Clause: "To cancel an in-flight request, the client MUST send a notifications/cancelled notification referencing the request's ID. [...] Servers SHOULD stop work on a cancelled request as soon as practical and MUST NOT send any further messages for it."}},
		),
		Transports: []string{"stdio", "websocket"},
		Roles:      []string{"slow"},
	})
	checkCancelCompletionWins = register(&Check{
		ID:    "CANCEL-COMPLETION-WINS",
		Title: "a cancellation that arrives after completion is ignored without reply",
		How: "Sends notifications/cancelled right after the slow call, but the proxy holds it until the " +
			"response has passed (hold-until), so the server completes first and receives a late cancellation. " +
			"The response must arrive, the late cancellation must get no reply, and the server must answer ping.",
		Rules: merge(
			sameRule(Rule{Level: reports.Must, Spec: cancelLegacy,
				Clause: "The cancellation notification may arrive after the request has already completed [...] Both parties MUST handle these race conditions gracefully"},
				legacyVersions...),
			map[string]Rule{"2026-07-28": {Level: reports.Must, Spec: cancelModern,
				Clause: "The cancellation notification may arrive after the request has already completed [...] Both parties MUST handle these race conditions gracefully"}},
		),
		Transports: []string{"stdio", "websocket"},
		Roles:      []string{"slow"},
	})
	checkCancelMalformed = register(&Check{
		ID:    "CANCEL-MALFORMED-IGNORED",
		Title: "malformed cancellations are ignored: no reply, server alive, in-flight request unaffected",
		How: "While a slow call is in flight, sends notifications/cancelled without params, with empty params, " +
			"with an object requestId and with a boolean requestId. The server must not reply, must answer ping, " +
			"and must still complete the in-flight call.",
		Rules: sameRule(Rule{Level: reports.Must, Spec: indexPage,
			Clause: "Notifications are sent from the client to the server or vice versa, as a one-way message. The receiver MUST NOT send a response."},
			allVersions...),
		Transports: []string{"stdio", "websocket"},
		Roles:      []string{"slow"},
	})
	checkCancelUnknown = register(&Check{
		ID:    "CANCEL-UNKNOWN-IGNORED",
		Title: "cancellations of unknown and completed requests are ignored without reply",
		How: "While a slow call is in flight, cancels an id that was never issued (string and integer) and the id " +
			"of a ping that already completed. The server must not reply to any of them, must answer ping, and " +
			"must still complete the in-flight call.",
		Rules: merge(
			sameRule(Rule{Level: reports.Must, Spec: indexPage,
				Clause: "The receiver MUST NOT send a response [to a notification]. Receivers MAY ignore cancellation notifications if the referenced request is unknown or processing has already completed."},
				allVersions...),
		),
		Transports: []string{"stdio", "websocket"},
		Roles:      []string{"slow"},
	})
	checkNoServerCancel = register(&Check{
		ID:    "CANCEL-NO-SERVER-CANCEL",
		Title: "the server sends no notifications/cancelled for the client's requests",
		How: "Runs the slow call to completion and a ping, and fails on any notifications/cancelled from the server " +
			"(the client issued those requests; a server may only cancel requests it issued itself).",
		Rules: merge(
			sameRule(Rule{Level: reports.Must, Spec: cancelLegacy,
				Clause: "Cancellation notifications MUST only reference requests that: Were previously issued in the same direction; Are believed to still be in-progress"},
				legacyVersions...),
			map[string]Rule{"2026-07-28": {Level: reports.Must, Spec: cancelModern,
				Clause: "Servers MUST NOT send notifications/cancelled for any other purpose [than tearing down a subscriptions/listen stream]."}},
		),
		Transports: []string{"stdio", "websocket"},
		Roles:      []string{"slow"},
	})
)

// registerCancel declares the CANCEL specs.
func registerCancel() {
	ginkgo.Describe("CANCEL", ginkgo.Label("area:cancel"), func() {
		define(checkCancelSuppress, cancelSuppress)
		define(checkCancelCompletionWins, cancelCompletionWins)
		define(checkCancelMalformed, func(h *H) { cancelIgnored(h, malformedCancellations) })
		define(checkCancelUnknown, func(h *H) { cancelIgnored(h, nil) })
		define(checkNoServerCancel, noServerCancel)
	})
}

// cancelInFlight starts the slow role with a token and cancels it while it
// runs. The trigger is a message, not a clock: the first progress for the
// token. When the call completes without any such progress (a server that
// sends none, or sends it under another token), the scenario is run again
// with a new id and cancelled as soon as a ping sent after the request is
// answered, which proves the server has read the request. It returns the
// cancelled id, the inbound index just before the cancellation, and whether
// progress was seen.
func cancelInFlight(h *H, c *Conn, name string, token jsonrpc.ID) (jsonrpc.ID, int, bool) {
	id := jsonrpc.StringID(name + "-1")
	c.StartRole("slow", id, token)
	first, ok := c.WaitFirst(0, h.cfg.CallTimeout, func(m clients.Message) bool {
		return (m.Env.Method == "notifications/progress" && m.Env.ProgressToken == token) ||
			(m.Env.Kind.IsReply() && m.Env.ID == id)
	})
	if !ok {
		h.failServer("request %s got neither progress nor a response %s", id, c.Silence(h.cfg.CallTimeout))
	}
	if first.Env.Method == "notifications/progress" {
		mark := c.W.Len()
		c.Cancel(id, "mcp-conform: cancelled in flight")
		return id, mark, true
	}
	h.Notef("request %s completed with no progress for its token; cancelling a second call as soon as the server has read it", id)
	id = jsonrpc.StringID(name + "-2")
	c.StartRole("slow", id, token)
	c.Ping("after the request to cancel")
	mark := c.W.Len()
	if early := c.RepliesTo(0, id); len(early) > 0 {
		h.Errorf("the slow role completed before a ping round trip; give it more steps or a longer duration (response: %s)", early[0].Raw)
	}
	c.Cancel(id, "mcp-conform: cancelled in flight")
	return id, mark, false
}

func cancelSuppress(h *H) {
	c := h.Connect()
	id, mark, _ := cancelInFlight(h, c, "cancel-suppress", jsonrpc.StringID("cancel-suppress-token"))
	// A control call started after the cancellation ends after the
	// cancelled one would have: its response bounds the wait, no sleep.
	ctrl := c.StartRole("slow", jsonrpc.StringID("cancel-suppress-control"), nil)
	c.Await(ctrl, "uncancelled control call")
	c.Ping("after the control call")
	if late := c.RepliesTo(mark, id); len(late) > 0 {
		h.Failf("the server answered request %s after it was cancelled: %s", id, late[0].Raw)
	}
}

func cancelCompletionWins(h *H) {
	id := jsonrpc.StringID("completion-wins-1")
	c := h.Connect(faultproxy.Rule{
		Name:  "hold-cancel-until-response",
		Match: faultproxy.Match{Dir: faultproxy.ClientToServer, Method: "notifications/cancelled", CancelledID: id},
		Fault: faultproxy.HoldUntil{Until: faultproxy.Match{Dir: faultproxy.ServerToClient, ID: id}, Max: h.cfg.CallTimeout},
	})
	p := c.StartRole("slow", id, jsonrpc.StringID("completion-wins-token"))
	c.Cancel(id, "mcp-conform: late cancellation")
	resp := c.Await(p, "the call whose cancellation was held back")
	if !resp.Env.Kind.IsReply() {
		h.Errorf("unexpected reply %s", resp.Raw)
	}
	ctx, cancel := h.op()
	err := c.waitPassed(ctx, faultproxy.Match{Dir: faultproxy.ClientToServer, Method: "notifications/cancelled"})
	cancel()
	if err != nil {
		h.Errorf("the held cancellation was never released: %v", err)
	}
	mark := resp.Seq + 1
	ping := c.Ping("after the late cancellation")
	assertNoStrayReplies(h, c, mark, ping.Env.ID, "the late cancellation")
}

// malformedCancellations are cancellations no server may take for valid.
var malformedCancellations = []string{
	`{"jsonrpc":"2.0","method":"notifications/cancelled"}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"id":"cancel-ignored-1"}}}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":true,"reason":"boolean id"}}`,
}

// cancelIgnored sends odd cancellations during a slow call: malformed ones
// when given, else cancellations of unknown and completed requests.
func cancelIgnored(h *H, malformed []string) {
	c := h.Connect()
	id := jsonrpc.StringID("cancel-ignored-1")
	token := jsonrpc.StringID("cancel-ignored-token")
	p := c.StartRole("slow", id, token)
	c.Ping("after the in-flight request")
	mark := c.W.Len()
	lines := malformed
	if lines == nil {
		done := c.Ping("before cancelling it")
		lines = []string{
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"never-issued-42","reason":"unknown id"}}`,
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":987654321,"reason":"unknown id"}}`,
			fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%s,"reason":"already completed"}}`, done.Env.ID),
		}
		mark = c.W.Len()
	}
	for _, l := range lines {
		c.SendRaw(l)
	}
	ping := c.Ping("after the cancellations")
	resp := c.Await(p, "the in-flight call")
	if resp.Env.Kind != jsonrpc.Response {
		h.Failf("the in-flight call was disturbed: it ended with %s", resp.Raw)
	}
	assertNoStrayReplies(h, c, mark, ping.Env.ID, "the cancellations", id)
}

// assertNoStrayReplies fails when, from index from on, the server sent a
// reply other than to the given ids: a reply to a notification.
func assertNoStrayReplies(h *H, c *Conn, from int, ping jsonrpc.ID, what string, allowed ...jsonrpc.ID) {
	for _, m := range c.W.Since(from) {
		if !m.Env.Kind.IsReply() || m.Env.ID == ping {
			continue
		}
		ok := false
		for _, a := range allowed {
			ok = ok || m.Env.ID == a
		}
		if !ok {
			h.Failf("the server replied to %s (notifications get no response): %s", what, m.Raw)
		}
	}
}

func noServerCancel(h *H) {
	c := h.Connect()
	id := jsonrpc.StringID("no-server-cancel-1")
	p := c.StartRole("slow", id, jsonrpc.StringID("no-server-cancel-token"))
	c.Await(p, "the slow call")
	c.Ping("after the slow call")
	var sent []string
	for _, m := range c.W.Messages() {
		if m.Env.Method == "notifications/cancelled" {
			sent = append(sent, string(m.Raw))
		}
	}
	if len(sent) > 0 {
		h.Failf("the server sent notifications/cancelled for a client request: %s", strings.Join(sent, "; "))
	}
}

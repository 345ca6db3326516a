package suites

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/reports"
)

var checkCancelSuppress = register(&Check{
	ID:    "CANCEL-STDIO-SUPPRESS",
	Title: "no response for a request cancelled in flight",
	How: "Calls the slow role with a progress token, sends notifications/cancelled once the first " +
		"progress arrives, then runs an identical uncancelled control call to completion and a ping. " +
		"Any response for the cancelled id after the cancellation was sent fails the check. On WebSocket (a " +
		"custom transport, which the stdio page does not bind) the cancellation pattern's SHOULD applies in every version.",
	Rules: merge(
		sameRule(Rule{Level: reports.Should, Spec: cancelLegacy,
			Clause: "Receivers of cancellation notifications SHOULD: Stop processing the cancelled request; Free associated resources; Not send a response for the cancelled request"},
			legacyVersions...),
		map[string]Rule{v20260728: {Level: reports.Must, Spec: stdioModern,
			Clause: "To cancel an in-flight request, the client MUST send a notifications/cancelled notification referencing the request's ID. [...] Servers SHOULD stop work on a cancelled request as soon as practical and MUST NOT send any further messages for it."}},
	),
	On:         map[string]map[string]Rule{viaWebSocket: {v20260728: cancelPatternShould}},
	Transports: []string{viaStdio, viaWebSocket},
	Roles:      []string{"slow"},
})

var checkCancelCompletionWins = register(&Check{
	ID:    "CANCEL-COMPLETION-WINS",
	Title: "a cancellation that arrives after completion is ignored without reply",
	How: "Sends notifications/cancelled right after the slow call, but the proxy holds it until the " +
		"response has passed (hold-until), so the server completes first and receives a late cancellation. " +
		"The response must arrive, the late cancellation must get no reply, and the server must answer the barrier request. " +
		"Over Streamable HTTP in the 2025 versions (where notifications/cancelled is the cancellation) the held " +
		"notification is a POST: it must get 202 and no body, and no stream may carry a reply; in 2026-07-28 HTTP a client " +
		"cancels by closing the stream, and a completed request has no stream left to close, so the race does not arise there.",
	Rules: merge(
		sameRule(Rule{Level: reports.Must, Spec: cancelLegacy, Also: []string{indexPage},
			Clause: "Due to network latency, cancellation notifications may arrive after request processing has completed, and potentially after a response has already been sent. Both parties MUST handle these race conditions gracefully [...] The receiver [of a notification] MUST NOT send a response."},
			legacyVersions...),
		map[string]Rule{v20260728: {Level: reports.Must, Spec: cancelModern, Also: []string{"specification/2026-07-28/basic/index.mdx"},
			Clause: "Due to network latency, cancellation notifications may arrive after request processing has completed, and potentially after a response has already been sent. Both parties MUST handle these race conditions gracefully [...] The receiver [of a notification] MUST NOT send a response."}},
	),
	Only:       map[string][]string{viaHTTP: legacyVersions},
	Transports: []string{viaStdio, viaHTTP, viaWebSocket},
	Roles:      []string{"slow"},
})

var checkCancelMalformed = register(&Check{
	ID:    "CANCEL-MALFORMED-IGNORED",
	Title: "malformed cancellations are ignored: no reply, server alive, in-flight request unaffected",
	How: "While a slow call is in flight, sends notifications/cancelled without params, with empty params, " +
		"with an object requestId and with a boolean requestId. A reply to any of them FAILs (a notification gets no " +
		"response); the server must answer the barrier request; an in-flight call that the malformed cancellations " +
		"disturbed (it ends in an error) WARNs (they SHOULD be ignored). Over Streamable HTTP each is a POST: 202 with no " +
		"body, or an error status, and no JSON-RPC reply on any stream (2025: the standalone GET stream is held open and read too).",
	Rules: merge(
		sameRule(Rule{Level: reports.Must, Spec: indexPage, Also: []string{cancelLegacy},
			Clause: "Notifications are sent from the client to the server or vice versa, as a one-way message. The receiver MUST NOT send a response. [cancellation.mdx] Invalid cancellation notifications SHOULD be ignored: [...] Malformed notifications"},
			legacyVersions...),
		map[string]Rule{v20260728: {Level: reports.Must, Spec: "specification/2026-07-28/basic/index.mdx", Also: []string{cancelModern},
			Clause: "Notifications are sent from the client to the server or vice versa, as a one-way message. The receiver MUST NOT send a response. [cancellation.mdx] Invalid cancellation notifications SHOULD be ignored: [...] Malformed notifications"}},
	),
	Transports: []string{viaStdio, viaHTTP, viaWebSocket},
	Roles:      []string{"slow"},
})

var checkCancelUnknown = register(&Check{
	ID:    "CANCEL-UNKNOWN-IGNORED",
	Title: "cancellations of unknown and completed requests are ignored without reply",
	How: "While a slow call is in flight, cancels an id that was never issued (string and integer) and the id " +
		"of a barrier request that already completed. A reply to any of them FAILs (a notification gets no response); the " +
		"server must answer the barrier request; an in-flight call they disturbed WARNs (they SHOULD be ignored). Over " +
		"Streamable HTTP as CANCEL-MALFORMED-IGNORED.",
	Rules: merge(
		sameRule(Rule{Level: reports.Must, Spec: cancelLegacy, Also: []string{indexPage},
			Clause: "Receivers MAY ignore cancellation notifications if: The referenced request is unknown; Processing has already completed [...] Invalid cancellation notifications SHOULD be ignored: Unknown request IDs; Already completed requests [basic/index.mdx] The receiver MUST NOT send a response."},
			legacyVersions...),
		map[string]Rule{v20260728: {Level: reports.Must, Spec: cancelModern, Also: []string{"specification/2026-07-28/basic/index.mdx"},
			Clause: "Servers MAY ignore cancellation notifications if: The referenced request is unknown; Processing has already completed [...] Invalid cancellation notifications SHOULD be ignored: Unknown request IDs; Already completed requests [basic/index.mdx] The receiver MUST NOT send a response."}},
	),
	Transports: []string{viaStdio, viaHTTP, viaWebSocket},
	Roles:      []string{"slow"},
})

var checkNoServerCancel = register(&Check{
	ID:    "CANCEL-NO-SERVER-CANCEL",
	Title: "the server sends no notifications/cancelled for the client's requests",
	How: "Runs the slow call to completion and a barrier request, and fails on any notifications/cancelled from the server " +
		"(the client issued those requests; a server may only cancel requests it issued itself). Over Streamable HTTP every " +
		"stream is read (2025: the standalone GET stream is held open during the check).",
	Rules: merge(
		sameRule(Rule{Level: reports.Must, Spec: cancelLegacy,
			Clause: "Cancellation notifications MUST only reference requests that: Were previously issued in the same direction; Are believed to still be in-progress"},
			legacyVersions...),
		map[string]Rule{v20260728: {Level: reports.Must, Spec: cancelModern,
			Clause: "A server MUST send notifications/cancelled referencing a subscriptions/listen request ID when it tears down that subscription stream [...] Servers MUST NOT send notifications/cancelled for any other purpose."}},
	),
	Transports: []string{viaStdio, viaHTTP, viaWebSocket},
	Roles:      []string{"slow"},
})

var checkHTTPClose = register(&Check{
	ID:    "CANCEL-HTTP-CLOSE",
	Title: "closing the response stream cancels the request: nothing more is sent for it, and the work stops",
	How: "Calls the slow role (tagged) over Streamable HTTP, closes the response stream after the first progress, " +
		"runs an identical control call to completion, and asks the target's probe how much of the cancelled work ran. " +
		"A subscriptions/listen stream is held open across the close when the server serves one (the only other stream a " +
		"2026-07-28 server could send on). One status for two sentences: a message for the cancelled request after the close " +
		"(on any stream the harness still reads: the listen stream, the control call's) FAILs (MUST NOT); " +
		"otherwise work that went on after the close (finished, or still running once the control call was served: a probe two observed steps later finds a new step) WARNs (SHOULD stop as soon as practical).",
	Rules: map[string]Rule{v20260728: {Level: reports.Must, Spec: httpModern,
		Clause: "Closing the SSE response stream MUST be treated by the server as cancellation of that request. [...] The server SHOULD stop work on the cancelled request as soon as practical and MUST NOT send any further messages for it."}},
	Transports: []string{viaHTTP},
	Roles:      []string{"slow"},
})

var checkHTTPNotification = register(&Check{
	ID:    "CANCEL-HTTP-NOTIFICATION",
	Title: "notifications/cancelled over HTTP: no response, and the response stream ends promptly",
	How: "In a 2025 session, calls the slow role, POSTs notifications/cancelled after the first progress, and expects " +
		"the request's event stream to end within the exchange timeout without a response (with no response to send, the " +
		"stream has nothing left to carry: transports.mdx asks the server to terminate it after the response).",
	Rules: merge(
		sameRule(Rule{Level: reports.Should, Spec: cancelLegacy, Also: []string{httpLegacy},
			Clause: "Receivers of cancellation notifications SHOULD: Stop processing the cancelled request; Free associated resources; Not send a response for the cancelled request [transports.mdx] After the JSON-RPC response has been sent, the server SHOULD terminate the SSE stream."},
			v20251125),
		sameRule(Rule{Level: reports.Should, Spec: cancelLegacy, Also: []string{httpLegacy},
			Clause: "Receivers of cancellation notifications SHOULD: Stop processing the cancelled request; Free associated resources; Not send a response for the cancelled request [transports.mdx] After the JSON-RPC response has been sent, the server SHOULD close the SSE stream."},
			v20250618),
	),
	Transports: []string{viaHTTP},
	Roles:      []string{"slow"},
})

var checkHTTPDisconnect = register(&Check{
	ID:    "CANCEL-HTTP-DISCONNECT",
	Title: "in a 2025 session a disconnect is not a cancellation: the work goes on",
	How: "Calls the slow role (tagged), closes the response stream after the first progress without sending a " +
		"cancellation, and runs an identical control call to completion. With the role's probe, the disconnected work " +
		"must have finished. Without one, when the server's events carry ids, the harness resumes the disconnected stream " +
		"(GET + Last-Event-ID) and compares its outcome with the control call's: the control succeeded and the resumed " +
		"call ended in an error means the disconnect was taken for a cancellation. Neither a probe nor resumption: SKIP.",
	Rules: sameRule(Rule{Level: reports.Should, Spec: httpLegacy,
		Clause: "Disconnection SHOULD NOT be interpreted as the client cancelling its request. To cancel, the client SHOULD explicitly send an MCP CancelledNotification."},
		legacyVersions...),
	Transports: []string{viaHTTP},
	Roles:      []string{"slow"},
})

// cancelPatternShould is the 2026-07-28 cancellation pattern's rule for a
// server that received notifications/cancelled, on a transport the stdio
// page does not bind (a custom transport such as WebSocket): SHOULD.
var cancelPatternShould = Rule{Level: reports.Should, Spec: cancelModern, Also: []string{customTransports},
	Clause: "Servers receiving cancellation notifications SHOULD: Stop processing the cancelled request; Free associated resources; Not send a response for the cancelled request [transports/index.mdx: a custom transport MUST preserve the JSON-RPC message format, the message patterns, and the per-request metadata model; the stdio page's MUST NOT binds stdio only]"}

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

func registerHTTPCancel() {
	ginkgo.Describe("CANCEL over HTTP", ginkgo.Label("area:cancel"), func() {
		define(checkHTTPClose, httpCloseCancels)
		define(checkHTTPNotification, httpNotificationCancels)
		define(checkHTTPDisconnect, httpDisconnectIsNotCancel)
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
func cancelInFlight(h *H, c msgConn, name string, token jsonrpc.ID) (jsonrpc.ID, int, bool) {
	id := jsonrpc.StringID(name + "-1")
	c.startRole("slow", id, token)
	first, ok := c.waitFirst(0, h.Cfg().CallTimeout, func(m clients.Message) bool {
		return (m.Env.Method == "notifications/progress" && m.Env.ProgressToken == token) ||
			(m.Env.Kind.IsReply() && m.Env.ID == id)
	})
	if !ok {
		h.FailServer("request %s got neither progress nor a response %s", id, c.silence(h.Cfg().CallTimeout))
	}
	if first.Env.Method == "notifications/progress" {
		mark := c.length()
		c.notify(cancelNotification(id, "mcp-conform: cancelled in flight"))
		return id, mark, true
	}
	h.Notef("request %s completed with no progress for its token; cancelling a second call as soon as the server has read it", id)
	id = jsonrpc.StringID(name + "-2")
	c.startRole("slow", id, token)
	c.ping("after the request to cancel")
	mark := c.length()
	if early := repliesSince(c, 0, id); len(early) > 0 {
		h.Errorf("the slow role completed before a ping round trip; give it more steps or a longer duration (response: %s)", early[0].Raw)
	}
	c.notify(cancelNotification(id, "mcp-conform: cancelled in flight"))
	return id, mark, false
}

func cancelSuppress(h *H) {
	c := connectMsg(h)
	id, mark, _ := cancelInFlight(h, c, "cancel-suppress", jsonrpc.StringID("cancel-suppress-token"))
	// A control call started after the cancellation ends after the
	// cancelled one would have: its response bounds the wait, no sleep.
	ctrl := c.startRole("slow", jsonrpc.StringID("cancel-suppress-control"), nil)
	c.await(ctrl, "uncancelled control call")
	c.ping("after the control call")
	if late := repliesSince(c, mark, id); len(late) > 0 {
		h.Failf("the server answered request %s after it was cancelled: %s", id, late[0].Raw)
	}
}

func cancelCompletionWins(h *H) {
	id := jsonrpc.StringID("completion-wins-1")
	c := connectMsg(h, faultproxy.Rule{
		Name:  "hold-cancel-until-response",
		Match: faultproxy.Match{Dir: faultproxy.ClientToServer, Method: "notifications/cancelled", CancelledID: id},
		Fault: faultproxy.HoldUntil{Until: faultproxy.Match{Dir: faultproxy.ServerToClient, ID: id}, Max: h.Cfg().CallTimeout},
	})
	p := c.startRole("slow", id, jsonrpc.StringID("completion-wins-token"))
	// Over HTTP the held notification's POST returns only when the hold
	// ends: it is sent on its own goroutine.
	sent := c.notifyAsync(cancelNotification(id, "mcp-conform: late cancellation"))
	resp := c.await(p, "the call whose cancellation was held back")
	if !resp.Env.Kind.IsReply() {
		h.Errorf("unexpected reply %s", resp.Raw)
	}
	ctx, cancel := h.Op()
	err := c.waitPassed(ctx, faultproxy.Match{Dir: faultproxy.ClientToServer, Method: "notifications/cancelled"})
	cancel()
	if err != nil {
		h.Errorf("the held cancellation was never released: %v", err)
	}
	if why := <-sent; why != "" {
		h.FailServer("the late cancellation: %s", why)
	}
	mark := resp.Seq + 1
	ping := c.ping("after the late cancellation")
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
// when given, else cancellations of unknown and completed requests. A reply
// to one of them breaks the MUST NOT (FAIL); an in-flight call they
// disturbed breaks only the SHOULD (WARN).
func cancelIgnored(h *H, malformed []string) {
	c := connectMsg(h)
	id := jsonrpc.StringID("cancel-ignored-1")
	token := jsonrpc.StringID("cancel-ignored-token")
	p := c.startRole("slow", id, token)
	c.ping("after the in-flight request")
	mark := c.length()
	lines := malformed
	if lines == nil {
		done := c.ping("before cancelling it")
		lines = []string{
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"never-issued-42","reason":"unknown id"}}`,
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":987654321,"reason":"unknown id"}}`,
			fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%s,"reason":"already completed"}}`, done.Env.ID),
		}
		mark = c.length()
	}
	for _, l := range lines {
		c.notify(l)
	}
	ping := c.ping("after the cancellations")
	resp := c.await(p, "the in-flight call")
	assertNoStrayReplies(h, c, mark, ping.Env.ID, "the cancellations", id)
	if resp.Env.Kind != jsonrpc.Response {
		h.Warnf("the in-flight call was disturbed by cancellations that should have been ignored: it ended with %s", resp.Raw)
	}
}

// assertNoStrayReplies fails when, from index from on, the server sent a
// reply other than to the given ids: a reply to a notification.
func assertNoStrayReplies(h *H, c msgConn, from int, ping jsonrpc.ID, what string, allowed ...jsonrpc.ID) {
	for _, m := range c.since(from) {
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
	c := connectMsg(h)
	id := jsonrpc.StringID("no-server-cancel-1")
	p := c.startRole("slow", id, jsonrpc.StringID("no-server-cancel-token"))
	c.await(p, "the slow call")
	c.ping("after the slow call")
	var sent []string
	for _, m := range c.since(0) {
		if m.Env.Method == "notifications/cancelled" {
			sent = append(sent, string(m.Raw))
		}
	}
	if len(sent) > 0 {
		h.Failf("the server sent notifications/cancelled for a client request: %s", strings.Join(sent, "; "))
	}
}

func httpCloseCancels(h *H) {
	tool, tagArg := h.ProbeRole()
	c := h.ConnectHTTP()
	tag := unique("close")
	id, token := jsonrpc.StringID("http-close-1"), jsonrpc.StringID("http-close-token")
	// Another stream the server could send the request's messages on
	// (cancel_listen.go), open across the close.
	listen, noListen := openCloseListen(h, c)
	if listen != nil {
		defer listen.Close()
	}
	started := time.Now()
	call := c.StartRole("slow", id, token, map[string]any{tagArg: tag})
	c.FirstProgress(call, token)
	mark := c.W.Len()
	ctx, cancel := h.Op()
	how, err := c.W.Cancel(ctx, call, "mcp-conform: close the stream")
	cancel()
	if err != nil || how != "stream-close" {
		h.Errorf("cancel by closing the stream: %s %v", how, err)
	}
	before := c.Probe(tool, tagArg, tag)
	ran := time.Since(started)
	ctrl := c.StartRole("slow", jsonrpc.StringID("http-close-control"), nil, nil)
	c.Await(ctrl, "uncancelled control call")
	after := c.Probe(tool, tagArg, tag)
	// A closed stream orders nothing (the server learns of the close when
	// its HTTP stack does): once the control call was served the work must
	// stand still, as TIMEOUT-CANCEL-STOPS judges it (stillGap).
	gap := stillGap(ran, before.StepsRun)
	h.Sleep(gap)
	later := c.Probe(tool, tagArg, tag)
	h.Notef("probe after close: %+v; after the control call: %+v; %s later: %+v", before, after, gap.Round(time.Millisecond), later)
	if listen != nil {
		h.Notef("a subscriptions/listen stream (%s) was open across the close", listen.Stream())
	} else {
		h.Notef("%s", noListen)
	}
	// A message after the close breaks the MUST NOT: FAIL, whatever the
	// work did. Work that went on breaks only the SHOULD: WARN.
	for _, m := range c.W.Since(mark) {
		if m.Env.ID == id || m.Env.ProgressToken == token {
			h.Failf("a message for the cancelled request appeared after the close (on stream %s): %s", m.Stream, m.Raw)
		}
	}
	if later.Finished {
		h.Warnf("the server kept working after the response stream closed and completed the request (probe: %+v)", later)
	}
	if later.StepsRun > after.StepsRun {
		h.Warnf("the work went on after the response stream closed: %d steps at the close, %d after the control call, %d %s later", before.StepsRun, after.StepsRun, later.StepsRun, gap.Round(time.Millisecond))
	}
}

func httpNotificationCancels(h *H) {
	c := h.ConnectHTTP()
	id, token := jsonrpc.StringID("http-notify-1"), jsonrpc.StringID("http-notify-token")
	call := c.StartRole("slow", id, token, nil)
	c.FirstProgress(call, token)
	ctx, cancel := h.Op()
	how, err := c.W.Cancel(ctx, call, "mcp-conform: cancel by notification")
	cancel()
	if err != nil || how != "notification" {
		h.Failf("cancellation notification not accepted: %s %v", how, err)
	}
	if !waitEnded(h.Ctx(), call, h.Cfg().OpTimeout) {
		h.Failf("the request's event stream stayed open %s after notifications/cancelled", h.Cfg().OpTimeout)
	}
	if m, ok := call.Response(); ok {
		h.Failf("the server answered the cancelled request: %s", m.Raw)
	}
	c.Ping("after the cancellation")
}

func httpDisconnectIsNotCancel(h *H) {
	p := h.Role("slow").Probe
	tool, _ := p["tool"].(string)
	tagArg, _ := p["tag"].(string)
	c := h.ConnectHTTP()
	tag := unique("disconnect")
	var extra map[string]any
	if tool != "" && tagArg != "" {
		extra = map[string]any{tagArg: tag}
	}
	id, token := jsonrpc.StringID("http-disconnect-1"), jsonrpc.StringID("http-disconnect-token")
	call := c.StartRole("slow", id, token, extra)
	c.FirstProgress(call, token)
	last := call.LastEventID()
	call.Close()
	ctrl := c.StartRole("slow", jsonrpc.StringID("http-disconnect-control"), nil, nil)
	control := c.Await(ctrl, "control call")
	if extra != nil {
		// The disconnected call started first and should end first; on a
		// loaded machine its last step may trail the control's by a few
		// milliseconds: wait (bounded) until the probe says it ended.
		after := c.Probe(tool, tagArg, tag)
		for deadline := time.Now().Add(h.Cfg().OpTimeout); !after.Finished && !after.Cancelled && time.Now().Before(deadline); {
			h.Sleep(20 * time.Millisecond)
			after = c.Probe(tool, tagArg, tag)
		}
		if !after.Finished {
			h.Failf("the work stopped when the client disconnected, as if cancelled (probe: %+v)", after)
		}
		h.Notef("probe after the control call: %+v", after)
		return
	}
	// Without a probe, the outcome of the disconnected call is seen by
	// resuming its stream, and judged against the control call.
	if last == "" || c.W.SessionID() == "" {
		h.Skip("the slow role declares no probe (probe: {tool, tag}) and the server's events carry no ids to resume the disconnected stream: whether the work went on is not observable")
	}
	ctx, cancel := context.WithTimeout(h.Ctx(), h.Cfg().CallTimeout)
	defer cancel()
	g, err := c.W.OpenGET(ctx, last)
	if err != nil {
		h.Skip(fmt.Sprintf("no probe, and resuming the disconnected stream failed (%v): whether the work went on is not observable", err))
	}
	defer g.Close()
	if g.Status() != http.StatusOK || !g.IsSSE() {
		h.Skip(fmt.Sprintf("no probe, and the server answered the resumption with HTTP %d: whether the work went on is not observable", g.Status()))
	}
	e, ok := c.WaitEvent(g, h.Cfg().OpTimeout, isReplyTo(id))
	if !ok {
		h.Skip(fmt.Sprintf("no probe, and the resumed stream carried no response for the disconnected call within %s: whether the work went on is not observable", h.Cfg().OpTimeout))
	}
	if callSucceeded(control.Raw) && !callSucceeded([]byte(e.Data)) {
		h.Failf("the work stopped when the client disconnected, as if cancelled: the resumed call ended in an error (%s) while the identical uninterrupted control call succeeded (%s)", clip([]byte(e.Data)), clip(control.Raw))
	}
	h.Notef("without a probe: the resumed call's outcome %s matches the control call's", clip([]byte(e.Data)))
}

package suites

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/reports"
)

const (
	httpLegacy = "specification/VERSION/basic/transports.mdx"
	httpModern = "specification/2026-07-28/basic/transports/streamable-http.mdx"
)

var (
	checkHTTPClose = register(&Check{
		ID:    "CANCEL-HTTP-CLOSE",
		Title: "closing the response stream cancels the request: nothing more is sent for it, and the work stops",
		How: "Calls the slow role (tagged) over Streamable HTTP, closes the response stream after the first progress, " +
			"runs an identical control call to completion, and asks the target's probe how much of the cancelled work ran. " +
			"One status for two sentences: a message for the cancelled request after the close (on any stream) FAILs (MUST NOT); " +
			"otherwise work that went on after the close (finished, or more than one step later) WARNs (SHOULD stop as soon as practical).",
		Rules: map[string]Rule{"2026-07-28": {Level: reports.Must, Spec: httpModern,
			Clause: "Closing the SSE response stream MUST be treated by the server as cancellation of that request. [...] The server SHOULD stop work on the cancelled request as soon as practical and MUST NOT send any further messages for it."}},
		Transports: []string{"http"},
		Roles:      []string{"slow"},
	})
	checkHTTPNotification = register(&Check{
		ID:    "CANCEL-HTTP-NOTIFICATION",
		Title: "notifications/cancelled over HTTP: no response, and the response stream ends promptly",
		How: "In a 2025 session, calls the slow role, POSTs notifications/cancelled after the first progress, and expects " +
			"the request's event stream to end within the exchange timeout without a response (with no response to send, the " +
			"stream has nothing left to carry: transports.mdx asks the server to terminate it after the response).",
		Rules: merge(
			sameRule(Rule{Level: reports.Should, Spec: cancelLegacy, Also: []string{httpLegacy},
				Clause: "Receivers of cancellation notifications SHOULD: Stop processing the cancelled request; Free associated resources; Not send a response for the cancelled request [transports.mdx] After the JSON-RPC response has been sent, the server SHOULD terminate the SSE stream."},
				"2025-11-25"),
			sameRule(Rule{Level: reports.Should, Spec: cancelLegacy, Also: []string{httpLegacy},
				Clause: "Receivers of cancellation notifications SHOULD: Stop processing the cancelled request; Free associated resources; Not send a response for the cancelled request [transports.mdx] After the JSON-RPC response has been sent, the server SHOULD close the SSE stream."},
				"2025-06-18"),
		),
		Transports: []string{"http"},
		Roles:      []string{"slow"},
	})
	checkHTTPDisconnect = register(&Check{
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
		Transports: []string{"http"},
		Roles:      []string{"slow"},
	})
)

func registerHTTPCancel() {
	ginkgo.Describe("CANCEL over HTTP", ginkgo.Label("area:cancel"), func() {
		define(checkHTTPClose, httpCloseCancels)
		define(checkHTTPNotification, httpNotificationCancels)
		define(checkHTTPDisconnect, httpDisconnectIsNotCancel)
	})
}

func httpCloseCancels(h *H) {
	tool, tagArg := h.probeRole()
	c := h.ConnectHTTP()
	tag := unique("close")
	id, token := jsonrpc.StringID("http-close-1"), jsonrpc.StringID("http-close-token")
	call := c.StartRole("slow", id, token, map[string]any{tagArg: tag})
	c.firstProgress(call, token)
	mark := c.W.Len()
	ctx, cancel := h.op()
	how, err := c.W.Cancel(ctx, call, "mcp-conform: close the stream")
	cancel()
	if err != nil || how != "stream-close" {
		h.Errorf("cancel by closing the stream: %s %v", how, err)
	}
	before := c.Probe(tool, tag)
	ctrl := c.StartRole("slow", jsonrpc.StringID("http-close-control"), nil, nil)
	c.Await(ctrl, "uncancelled control call")
	after := c.Probe(tool, tag)
	h.Notef("probe after close: %+v; after the control call: %+v", before, after)
	// A message after the close breaks the MUST NOT: FAIL, whatever the
	// work did. Work that went on breaks only the SHOULD: WARN.
	for _, m := range c.W.Since(mark) {
		if m.Env.ID == id || m.Env.ProgressToken == token {
			h.Failf("a message for the cancelled request appeared after the close (on stream %s): %s", m.Stream, m.Raw)
		}
	}
	if after.Finished {
		h.Warnf("the server kept working after the response stream closed and completed the request (probe: %+v)", after)
	}
	if after.StepsRun > before.StepsRun+1 {
		h.Warnf("the work went on after the response stream closed: %d steps at the close, %d later", before.StepsRun, after.StepsRun)
	}
}

func httpNotificationCancels(h *H) {
	c := h.ConnectHTTP()
	id, token := jsonrpc.StringID("http-notify-1"), jsonrpc.StringID("http-notify-token")
	call := c.StartRole("slow", id, token, nil)
	c.firstProgress(call, token)
	ctx, cancel := h.op()
	how, err := c.W.Cancel(ctx, call, "mcp-conform: cancel by notification")
	cancel()
	if err != nil || how != "notification" {
		h.Failf("cancellation notification not accepted: %s %v", how, err)
	}
	if !waitEnded(h.ctx, call, h.cfg.OpTimeout) {
		h.Failf("the request's event stream stayed open %s after notifications/cancelled", h.cfg.OpTimeout)
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
	c.firstProgress(call, token)
	last := call.LastEventID()
	call.Close()
	ctrl := c.StartRole("slow", jsonrpc.StringID("http-disconnect-control"), nil, nil)
	control := c.Await(ctrl, "control call")
	if extra != nil {
		// The disconnected call started first and should end first; on a
		// loaded machine its last step may trail the control's by a few
		// milliseconds: wait (bounded) until the probe says it ended.
		after := c.Probe(tool, tag)
		for deadline := time.Now().Add(h.cfg.OpTimeout); !after.Finished && !after.Cancelled && time.Now().Before(deadline); {
			h.sleep(20 * time.Millisecond)
			after = c.Probe(tool, tag)
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
	ctx, cancel := context.WithTimeout(h.ctx, h.cfg.CallTimeout)
	defer cancel()
	g, err := c.W.OpenGET(ctx, last)
	if err != nil {
		h.Skip(fmt.Sprintf("no probe, and resuming the disconnected stream failed (%v): whether the work went on is not observable", err))
	}
	defer g.Close()
	if g.Status() != http.StatusOK || !g.IsSSE() {
		h.Skip(fmt.Sprintf("no probe, and the server answered the resumption with HTTP %d: whether the work went on is not observable", g.Status()))
	}
	e, ok := c.WaitEvent(g, h.cfg.OpTimeout, isReplyTo(id))
	if !ok {
		h.Skip(fmt.Sprintf("no probe, and the resumed stream carried no response for the disconnected call within %s: whether the work went on is not observable", h.cfg.OpTimeout))
	}
	if callSucceeded(control.Raw) && !callSucceeded([]byte(e.Data)) {
		h.Failf("the work stopped when the client disconnected, as if cancelled: the resumed call ended in an error (%s) while the identical uninterrupted control call succeeded (%s)", clip([]byte(e.Data)), clip(control.Raw))
	}
	h.Notef("without a probe: the resumed call's outcome %s matches the control call's", clip([]byte(e.Data)))
}

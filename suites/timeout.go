package suites

import (
	"bytes"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/clients/reliable"
	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/protocol"
	"github.com/mcp-conform/mcp-conform/reports"
	"github.com/mcp-conform/mcp-conform/sse"
)

// timeoutIdle is the reliable client's idle timeout in the TIMEOUT checks:
// short against the slow role (the reference's runs 480 ms) so that the
// server is still working when the cancellation reaches it.
const timeoutIdle = 150 * time.Millisecond

var checkTimeoutCancelStops = register(&Check{
	ID:    "TIMEOUT-CANCEL-STOPS",
	Title: "after the client's timeout cancellation the server stops: no response, no further progress",
	How: "The reliable client calls the slow role with a progress token and an idle timeout of 150 ms; the proxy delays " +
		"every progress notification of the call past the deadline, so the idle clock expires and the client sends the " +
		"transport's cancellation (stdio: notifications/cancelled; HTTP 2025: notifications/cancelled; HTTP 2026-07-28: it closes " +
		"the response stream) and ignores whatever comes later. Judged on what the server wrote, as the proxy read it: no response " +
		"for the request after the cancellation, no progress after a barrier request answered after it, and (HTTP, with the role's " +
		"probe) no further work (after a stream close, which orders nothing, the work must stand still once the control call was served: " +
		"a probe two observed steps later finds no new step). One status for two sentences: a message after the cancellation FAILs where the version says MUST NOT " +
		"(2026-07-28) and WARNs where it says SHOULD (2025); work that went on WARNs (SHOULD stop as soon as practical).",
	Rules: merge(
		sameRule(Rule{Level: reports.Should, Spec: lifecycleLegacy, Also: []string{cancelLegacy},
			Clause: "When the request has not received a success or error response within the timeout period, the sender SHOULD issue a cancellation notification for that request and stop waiting for a response. [cancellation.mdx] Receivers of cancellation notifications SHOULD: Stop processing the cancelled request; Free associated resources; Not send a response for the cancelled request"},
			legacyVersions...),
		map[string]Rule{v20260728: {Level: reports.Must, Spec: stdioModern, Also: []string{cancelModern},
			Clause: "When the request has not received a success or error response within the timeout period, the sender SHOULD cancel the request and stop waiting for a response [...] stdio: sending a notifications/cancelled notification referencing the request ID. [stdio.mdx] Servers SHOULD stop work on a cancelled request as soon as practical and MUST NOT send any further messages for it."}},
	),
	On: map[string]map[string]Rule{viaHTTP: {v20260728: {Level: reports.Must, Spec: httpModern, Also: []string{cancelModern},
		Clause: "When the request has not received a success or error response within the timeout period, the sender SHOULD cancel the request and stop waiting for a response [...] Streamable HTTP: closing the response stream for the request, which constitutes cancellation. [streamable-http.mdx] Closing the SSE response stream MUST be treated by the server as cancellation of that request. [...] The server SHOULD stop work on the cancelled request as soon as practical and MUST NOT send any further messages for it."}}},
	Transports: []string{viaStdio, viaHTTP},
	Roles:      []string{"slow"},
})

func registerTimeout() {
	ginkgo.Describe("TIMEOUT", ginkgo.Label("area:timeout"), func() {
		define(checkTimeoutCancelStops, timeoutCancelStops)
	})
}

// timeoutToken is the progress token of the reliable client's first call
// (Options.ID "timeout"): the proxy rule names it before the call exists.
var timeoutToken = jsonrpc.StringID("timeout-1")

// delayProgress delays the call's progress past the end of the check: to
// the client, the server is silent.
func delayProgress(d time.Duration) faultproxy.Rule {
	return faultproxy.Rule{
		Name:  "delay-progress-past-idle-deadline",
		Match: faultproxy.Match{Dir: faultproxy.ServerToClient, Method: "notifications/progress", ProgressToken: timeoutToken},
		Fault: faultproxy.Delay{For: d},
	}
}

func timeoutCancelStops(h *H) {
	if h.Target().Via() == protocol.TransportHTTP {
		timeoutCancelStopsHTTP(h)
		return
	}
	c := h.Connect(delayProgress(2 * h.Cfg().CallTimeout))
	rc := reliable.New(reliable.Stdio{W: c.W}, reliable.Options{ID: "timeout", Idle: timeoutIdle, Max: h.Cfg().CallTimeout, Reason: "mcp-conform: idle timeout"})
	defer rc.Close()
	out := rc.Call(h.Ctx(), "tools/call", roleParams(h.Role("slow"), nil))
	expectTimedOut(h, out, reliable.SignalNotification, c.ExitHint)
	barrier := c.Ping("after the timeout's cancellation")
	// A control call started now ends after the cancelled one would have.
	ctrl := c.StartRole("slow", jsonrpc.StringID("timeout-control"), nil)
	c.Await(ctrl, "uncancelled control call")
	c.Ping("after the control call")
	judgeAfterCancel(h, c.Link.Transcript().Entries(), out, barrier.Env.ID, true)
}

// expectTimedOut ends the check unless the call timed out and the client
// sent the expected signal; exitHint says how the server ended, if it did.
func expectTimedOut(h *H, out reliable.Outcome, want reliable.Signal, exitHint func() string) {
	switch {
	case out.State == reliable.Completed:
		h.Errorf("the slow role completed (%s) within the %s idle deadline though its progress was held back: give it more steps or a longer duration", out.Response.Raw, timeoutIdle)
	case out.State == reliable.Failed:
		h.FailServer("no response for id %s before its timeout: %v%s", out.ID, out.Err, exitHint())
	case !out.State.TimedOut():
		h.Errorf("the call ended %s, not in a timeout", out.State)
	case out.SignalErr != nil:
		h.Errorf("sending the timeout's cancellation (%s): %v", out.Signal, out.SignalErr)
	case out.Signal != want:
		h.Errorf("the reliable client cancelled with %q, want %q", out.Signal, want)
	}
	h.Notef("the call %s timed out (%s after %s) and the client cancelled it with %s", out.ID, out.State, out.Elapsed.Round(time.Millisecond), out.Signal)
}

// roleParams builds tools/call params for a role, extra arguments merged.
func roleParams(r Role, extra map[string]any) map[string]any {
	args := map[string]any{}
	for k, v := range r.Arguments {
		args[k] = v
	}
	for k, v := range extra {
		args[k] = v
	}
	return map[string]any{"name": r.Tool, "arguments": args}
}

// entryEnvelope parses the JSON-RPC message of a transcript entry (the data
// of an SSE event on HTTP); ok is false for anything else.
func entryEnvelope(e faultproxy.Entry) (jsonrpc.Envelope, []byte, bool) {
	if e.Kind != faultproxy.EntryMessage || len(e.Raw) == 0 {
		return jsonrpc.Envelope{}, nil, false
	}
	raw := e.Raw
	if e.Stream != "" && !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
		ev, err := sse.NewReader(bytes.NewReader(raw), sse.Options{Lenient: true}).Next()
		if err != nil || !ev.HasData || ev.Data == "" {
			return jsonrpc.Envelope{}, nil, false
		}
		raw = []byte(ev.Data)
	}
	env := jsonrpc.Parse(raw)
	return env, raw, env.Kind != jsonrpc.Invalid
}

// judgeAfterCancel reads the proxy's transcript (what the server wrote, in
// the order the proxy read it, whatever the proxy then delayed): a
// response for the cancelled request after the cancellation went by, or
// progress for it after the barrier's answer (the server had read the
// cancellation before it read the barrier), fails the check.
func judgeAfterCancel(h *H, entries []faultproxy.Entry, out reliable.Outcome, barrier jsonrpc.ID, progress bool) {
	cancelAt, barrierAt := -1, -1
	var late []string
	for i, e := range entries {
		env, raw, ok := entryEnvelope(e)
		if !ok {
			continue
		}
		switch {
		case e.Dir == faultproxy.ClientToServer && env.Method == "notifications/cancelled" && env.CancelledID == out.ID && cancelAt < 0:
			cancelAt = i
		case e.Dir != faultproxy.ServerToClient || cancelAt < 0:
		case env.Kind.IsReply() && env.ID == barrier && barrierAt < 0:
			barrierAt = i
		case env.Kind.IsReply() && env.ID == out.ID:
			h.Failf("the server answered request %s after the client's timeout cancellation: %s", out.ID, raw)
		case progress && barrierAt >= 0 && env.Method == "notifications/progress" && env.ProgressToken == out.Token:
			late = append(late, string(raw))
		}
	}
	if cancelAt < 0 {
		h.Errorf("the timeout's notifications/cancelled for %s never reached the proxy", out.ID)
	}
	if len(late) > 0 {
		h.Failf("%d progress notification(s) for request %s after the server had read the timeout's cancellation: %s", len(late), out.ID, strings.Join(late, "; "))
	}
}

func timeoutCancelStopsHTTP(h *H) {
	p := h.Role("slow").Probe
	tool, _ := p["tool"].(string)
	tagArg, _ := p["tag"].(string)
	c := h.ConnectHTTP(delayProgress(2 * h.Cfg().CallTimeout))
	want := reliable.SignalNotification
	if c.W.Session().Era == clients.EraModern {
		want = reliable.SignalStreamClose
	}
	var extra map[string]any
	tag := unique("timeout")
	if tool != "" && tagArg != "" {
		extra = map[string]any{tagArg: tag}
	}
	rc := reliable.New(reliable.HTTP{W: c.W}, reliable.Options{ID: "timeout", Idle: timeoutIdle, Max: h.Cfg().CallTimeout, Reason: "mcp-conform: idle timeout"})
	defer rc.Close()
	started := time.Now()
	out := rc.Call(h.Ctx(), "tools/call", roleParams(h.Role("slow"), extra))
	expectTimedOut(h, out, want, c.ExitHint)
	var before probeState
	var ran time.Duration
	if extra != nil {
		before = c.Probe(tool, tagArg, tag)
		ran = time.Since(started)
	}
	barrier := c.Ping("after the timeout's cancellation")
	ctrl := c.StartRole("slow", jsonrpc.StringID("timeout-control"), nil, nil)
	c.Await(ctrl, "uncancelled control call")
	entries := c.Proxy.Transcript().Entries()
	if want == reliable.SignalNotification {
		// Responses only: an HTTP stream may still carry progress the
		// server queued before it read the cancellation.
		judgeAfterCancel(h, entries, out, barrier.Env.ID, false)
	}
	if extra == nil {
		if want == reliable.SignalStreamClose {
			h.Skip("the slow role declares no probe (probe: {tool, tag}): after the stream close nothing can reach the client, so whether the work stopped is not observable")
		}
		h.Notef("the slow role declares no probe: whether the work stopped is not observable; no response came after the cancellation")
		return
	}
	after := c.Probe(tool, tagArg, tag)
	if after.Finished {
		h.Notef("probe at the cancellation: %+v; after the control call: %+v", before, after)
		h.Warnf("the server kept working after the client's timeout cancellation (%s) and completed the request (probe: %+v)", out.Signal, after)
	}
	if want == reliable.SignalNotification {
		// The barrier orders the cancellation before the control call:
		// the work has had its step in flight and no more.
		h.Notef("probe at the cancellation: %+v; after the control call: %+v", before, after)
		if after.StepsRun > before.StepsRun+1 {
			h.Warnf("the work went on after the client's timeout cancellation (%s): %d steps at the cancellation, %d later", out.Signal, before.StepsRun, after.StepsRun)
		}
		return
	}
	// A closed stream orders nothing: the server learns of the close when
	// its HTTP stack does, so steps may still run while it notices. Once
	// the whole control call has been served, the work must stand still:
	// a later probe, two of its observed steps on, finds no further step.
	gap := stillGap(ran, before.StepsRun)
	h.Sleep(gap)
	later := c.Probe(tool, tagArg, tag)
	h.Notef("probe at the cancellation: %+v; after the control call: %+v; %s later: %+v", before, after, gap.Round(time.Millisecond), later)
	if later.Finished && !after.Finished {
		h.Warnf("the server kept working after the client's timeout cancellation (%s) and completed the request (probe: %+v)", out.Signal, later)
	}
	if later.StepsRun > after.StepsRun {
		h.Warnf("the work went on after the client's timeout cancellation (%s): %d steps at the cancellation, %d after the control call, %d %s later", out.Signal, before.StepsRun, after.StepsRun, later.StepsRun, gap.Round(time.Millisecond))
	}
}

// stillGap is how long to wait between two probes that show a task
// standing still: two of the steps the call was seen to run (ran over
// steps), within [50 ms, 2 s].
func stillGap(ran time.Duration, steps int) time.Duration {
	return min(max(2*ran/time.Duration(max(steps, 1)), 50*time.Millisecond), 2*time.Second)
}

package clientsuite

import (
	"fmt"
	"time"
)

// ---- timeouts and cancellation ----

var checkTimeoutCancel = &Check{
	ID:    "CLIENT-TIMEOUT-CANCEL",
	Title: "on its own timeout the client cancels the request with the era's signal",
	How: "timeout-cancel: the client calls slow, which answers only after 20 s, with a request timeout of 300 ms. Judged on the wire: " +
		"a notifications/cancelled naming the request (stdio, and Streamable HTTP in 2025, where a disconnect is not a cancellation), " +
		"or the close of the request's response stream (Streamable HTTP in 2026-07-28), within 1 s of the timeout — and on 2026 HTTP " +
		"not merely when the client process exits (the driver lingers 1 s after the call ends).",
	Rules: merge(
		sameRule(spec("SHOULD", "When the request has not received a success or error response within the timeout period, the sender SHOULD issue a cancellation notification for that request and stop waiting for a response. [transports.mdx] To cancel, the client SHOULD explicitly send an MCP CancelledNotification.", pageLifecycle, "cl-lc#6", "cl-tr#7"), legacyVersions...),
		map[string]Rule{V20260728: spec("SHOULD", "When the request has not received a success or error response within the timeout period, the sender SHOULD cancel the request and stop waiting for a response: Streamable HTTP: closing the response stream for the request, which constitutes cancellation; stdio: [the client MUST send] a notifications/cancelled notification referencing the request ID.", pageCancel26, "cl-c26#3", "cl-c26#1")},
	),
	Transports: allTransports,
	Scenario:   "timeout-cancel",
	judge: func(r *Run) (Finding, string) {
		c, why := firstCall(r)
		if c == nil {
			return Unjudgeable, why
		}
		p := r.Params
		at, _, how, ok := cancellation(r, c)
		if !ok {
			if !r.modernHTTP() && c.Stream != "" {
				if n, closed := r.View().ClientClosed(c.Stream); closed {
					when := fmt.Sprintf("closed its response stream %s after sending it", msOf(n.At-c.At))
					if len(r.Clients) > 0 && r.Clients[0].ExitAt > 0 && n.At >= r.Clients[0].ExitAt-r.slack(exitSlack) {
						when = fmt.Sprintf("let its response stream close only as the process ended, %s after sending it", msOf(n.At-c.At))
					}
					return Broken, fmt.Sprintf("request %s (timeout %s): the client sent no notifications/cancelled and %s: in %s a disconnect is not a cancellation",
						idText(c.Env.ID), msOf(p.Timeout()), when, r.Version)
				}
			}
			if r.modernHTTP() && len(r.View().CancelsOf(c.Env.ID)) > 0 {
				return Broken, fmt.Sprintf("request %s: the client POSTed notifications/cancelled but left the response stream open: in 2026-07-28 closing the stream is the cancellation", idText(c.Env.ID))
			}
			return Broken, fmt.Sprintf("request %s was never cancelled: no %s within the run (its timeout was %s)", idText(c.Env.ID), wantSignal(r), msOf(p.Timeout()))
		}
		after := at - c.At
		if r.modernHTTP() && len(r.Clients) > 0 && r.Clients[0].ExitAt > 0 && at >= r.Clients[0].ExitAt-r.slack(exitSlack) {
			return Broken, fmt.Sprintf("request %s: its response stream closed only as the client process ended (%s after the request, %s before the exit): no cancellation at the timeout of %s",
				idText(c.Env.ID), msOf(after), msOf(r.Clients[0].ExitAt-at), msOf(p.Timeout()))
		}
		if after > p.Timeout()+r.slack(lateSlack) {
			return Broken, fmt.Sprintf("request %s was cancelled %s after it was sent, by %s: %s after its timeout of %s", idText(c.Env.ID), msOf(after), how, msOf(after-p.Timeout()), msOf(p.Timeout()))
		}
		return Held, fmt.Sprintf("request %s cancelled by %s %s after it was sent (timeout %s)", idText(c.Env.ID), how, msOf(after), msOf(p.Timeout()))
	},
}

func wantSignal(r *Run) string {
	if r.modernHTTP() {
		return "close of its response stream"
	}
	return "notifications/cancelled naming it"
}

var checkHTTPNoCancelNotification = &Check{
	ID:    "CLIENT-HTTP-NO-CANCEL-NOTIFICATION",
	Title: "on 2026-07-28 Streamable HTTP the client cancels by closing the stream, never by POSTing notifications/cancelled",
	How: "timeout-cancel on Streamable HTTP in 2026-07-28: the client's timeout fires; no notifications/cancelled may be POSTed " +
		"(the seeds' failure table: \"HTTP client POSTs cancellation notification\" — server and client then disagree about the request's lifetime).",
	Rules:      map[string]Rule{V20260728: seed("MUST NOT", "Streamable HTTP: the client cancels by closing the response stream of that request. Do not POST notifications/cancelled for an ordinary HTTP request. [2026-07-28 cancellation.mdx: \"No notifications/cancelled message is required or expected.\"]")},
	Transports: []string{HTTP},
	Scenario:   "timeout-cancel",
	judge: func(r *Run) (Finding, string) {
		if c, why := firstCall(r); c == nil {
			return Unjudgeable, why
		}
		if cs := r.View().Cancels(); len(cs) > 0 {
			return Broken, fmt.Sprintf("the client POSTed notifications/cancelled (for request %s, %s): in 2026-07-28 closing the response stream is the cancellation", idText(cs[0].Env.CancelledID), cs[0].Stream)
		}
		return Held, "no notifications/cancelled was POSTed"
	},
}

var checkLateResponse = &Check{
	ID:    "CLIENT-LATE-RESPONSE-IGNORED",
	Title: "a response that arrives after the client cancelled is ignored",
	How: "timeout-cancel: the server answers the request even after its cancellation (a late response, -32800); the driver's " +
		"outcome line for the call must still be timeout (or cancelled), not the late answer. SKIP where no late answer can reach the " +
		"client (2026 HTTP: the closed stream carries none) or the driver prints no outcome.",
	Rules: merge(
		sameRule(spec("SHOULD", "The sender of the cancellation notification SHOULD ignore any response to the request that arrives afterward", pageCancel25, "cl-can#4"), legacyVersions...),
		map[string]Rule{V20260728: withTransports(spec("SHOULD", "The client SHOULD ignore any response to the cancelled request that arrives afterward", pageCancel26, "cl-c26#4"), Stdio)},
	),
	Transports: allTransports,
	Scenario:   "timeout-cancel",
	judge: func(r *Run) (Finding, string) {
		c, why := firstCall(r)
		if c == nil {
			return Unjudgeable, why
		}
		at, idx, _, ok := cancellation(r, c)
		if !ok {
			return NotApplicable, "the client never cancelled the request (CLIENT-TIMEOUT-CANCEL): no late response to judge"
		}
		late, ok := r.View().Reply(c.Env.ID, idx)
		if !ok {
			return NotApplicable, "no response to request " + idText(c.Env.ID) + " reached the client after its cancellation"
		}
		o, ok := outcomeOf(r, r.Params.Tool)
		if !ok {
			return NotApplicable, "the driver printed no outcome line for the call (docs/CLIENT-DRIVERS.md, Outcomes)"
		}
		switch o.Outcome {
		case "result", "error":
			return Broken, fmt.Sprintf("after cancelling request %s the client took the late %s that arrived %s later as the call's outcome (%q)",
				idText(c.Env.ID), late.Env.Kind, msOf(late.At-at), o.Outcome)
		}
		return Held, fmt.Sprintf("the late %s to request %s was ignored: the call's outcome is %q", late.Env.Kind, idText(c.Env.ID), o.Outcome)
	},
}

var checkProgressResetsIdle = &Check{
	ID:    "CLIENT-PROGRESS-RESETS-IDLE",
	Title: "progress notifications reset the client's idle clock",
	How: "progress-max-timeout: slow reports progress every 100 ms; the client's request timeout is 800 ms, reset on progress, with a " +
		"maximum of 2000 ms. A cancellation before the maximum while progress was still arriving (the last one less than the idle timeout before it) " +
		"means progress did not reset the idle clock; so does, when the client cancelled nothing, its outcome line timeout (HTTP: the grader's " +
		"time of reading it) 1 s or more before the maximum — the line alone only bounds the clock loosely, since the client's clocks start " +
		"before its request reaches the proxy (a node client's first fetch: hundreds of ms).",
	Rules:      sameRule(seed("SHOULD", "Idle timeout: how long the request may go without useful activity; progress may reset the idle clock (the request coordinator's two clocks). [MCP: \"Implementations MAY choose to reset the timeout clock when receiving a progress notification\"]"), Versions...),
	Transports: allTransports,
	Scenario:   "progress-max-timeout",
	judge: func(r *Run) (Finding, string) {
		c, why := firstCall(r)
		if c == nil {
			return Unjudgeable, why
		}
		if c.Env.ProgressToken.IsZero() {
			return NotApplicable, "the call carried no progress token: no progress could reset its idle clock"
		}
		prog := progressOf(r, c)
		if len(prog) == 0 {
			return NotApplicable, "no progress notification reached the client"
		}
		p := r.Params
		at, how, ok := clockFired(r, c)
		// A cancellation is timed on the wire; an outcome line is read
		// after the clock fired, by a client whose clocks started before
		// its request reached the proxy: a maximum that fired on the
		// client's clock can read well before the maximum on the proxy's.
		margin := earlyTolerance
		if how != "cancelled" {
			margin = r.slack(lateSlack)
		}
		if !ok || at-c.At >= p.MaxTotal()-margin {
			return Held, fmt.Sprintf("%d progress notifications; the idle clock (%s) did not fire before the maximum (%s)", len(prog), msOf(p.Timeout()), msOf(p.MaxTotal()))
		}
		var last *Msg
		for _, m := range prog {
			if m.At <= at {
				last = m
			}
		}
		if last == nil || at-last.At >= p.Timeout()-earlyTolerance {
			return NotApplicable, "progress paused for longer than the idle timeout before the cancellation: the idle clock could fire"
		}
		verb := "cancelled"
		if how != "cancelled" {
			verb = "timed out on (its outcome line; no cancellation before it)"
		}
		return Broken, fmt.Sprintf("the client %s request %s %s after sending it, only %s after the last of %d progress notifications: its idle clock (%s) was not reset by progress (maximum %s)",
			verb, idText(c.Env.ID), msOf(at-c.At), msOf(at-last.At), countBefore(prog, at), msOf(p.Timeout()), msOf(p.MaxTotal()))
	},
}

func countBefore(ms []*Msg, at time.Duration) int {
	n := 0
	for _, m := range ms {
		if m.At <= at {
			n++
		}
	}
	return n
}

var checkMaxTimeout = &Check{
	ID:    "CLIENT-MAX-TIMEOUT",
	Title: "a maximum timeout fires whatever the progress",
	How: "progress-max-timeout: slow reports progress every 100 ms for 30 s; the client's maximum total timeout is 2000 ms. " +
		"The request must be cancelled (by either signal) within 1 s after the maximum; a response stream that closed only as the client " +
		"process ended (within 300 ms of its exit; the driver lingers 1 s after the call) is the shutdown's, not a cancellation, on HTTP as on stdio.",
	Rules: merge(
		sameRule(spec("SHOULD", "implementations SHOULD always enforce a maximum timeout, regardless of progress notifications", pageLifecycle, "cl-lc#7"), legacyVersions...),
		map[string]Rule{V20260728: spec("SHOULD", "implementations SHOULD always enforce a maximum timeout, regardless of progress notifications, to limit the impact of a misbehaving client or server.", pageCancel26, "cl-c26#5")},
	),
	Transports: allTransports,
	Scenario:   "progress-max-timeout",
	judge: func(r *Run) (Finding, string) {
		c, why := firstCall(r)
		if c == nil {
			return Unjudgeable, why
		}
		p := r.Params
		prog := progressOf(r, c)
		at, ok := clockSignal(r, c)
		if !ok {
			why := fmt.Sprintf("%d progress notifications kept arriving", len(prog))
			if o, ok := outcomeOf(r, r.Params.Tool); ok && o.Outcome == "timeout" {
				why = fmt.Sprintf("the driver reported the call's outcome %q, so the maximum fired in the client only: the server was never told, and %d progress notifications kept arriving", o.Outcome, len(prog))
			}
			if n, closed := exitClose(r, c); closed {
				why += fmt.Sprintf("; the response stream closed only as the client process ended (%s after the request)", msOf(n.At-c.At))
			}
			return Broken, fmt.Sprintf("request %s was never cancelled although its maximum timeout was %s (%s)", idText(c.Env.ID), msOf(p.MaxTotal()), why)
		}
		if at-c.At > p.MaxTotal()+r.slack(lateSlack) {
			return Broken, fmt.Sprintf("request %s was cancelled only %s after it was sent: its maximum timeout was %s (%d progress notifications before)", idText(c.Env.ID), msOf(at-c.At), msOf(p.MaxTotal()), countBefore(prog, at))
		}
		return Held, fmt.Sprintf("request %s cancelled %s after it was sent (maximum %s), after %d progress notifications", idText(c.Env.ID), msOf(at-c.At), msOf(p.MaxTotal()), countBefore(prog, at))
	},
}

var checkHeartbeat = &Check{
	ID:    "CLIENT-HEARTBEAT-NO-RESET",
	Title: "an SSE comment (a transport heartbeat) does not reset the client's idle clock",
	How: "heartbeat-idle: slow is silent for 20 s while its stream carries an SSE comment every 100 ms; the client's request timeout " +
		"is 800 ms, reset on progress. Its idle clock must fire within 1 s after the idle timeout, despite the comments: its cancellation " +
		"(not a stream closed as the process ended), or the driver's outcome line timeout, whichever comes first.",
	Rules:      sameRule(seed("MUST NOT", "Do not reset an operation's semantic timeout just because a transport comment arrived (SSE keep-alive comments keep intermediaries from closing an idle connection)."), Versions...),
	Transports: []string{HTTP},
	Scenario:   "heartbeat-idle",
	judge: func(r *Run) (Finding, string) {
		c, why := firstCall(r)
		if c == nil {
			return Unjudgeable, why
		}
		p := r.Params
		var comments int
		for _, m := range r.View().Msgs {
			if m.Comment && m.Stream == c.Stream && m.At <= c.At+p.Timeout() {
				comments++
			}
		}
		if comments < 2 {
			return NotApplicable, fmt.Sprintf("%d SSE comments reached the client within its idle timeout: nothing could have reset it", comments)
		}
		at, how, ok := clockFired(r, c)
		if !ok {
			if o, ok := outcomeOf(r, r.Params.Tool); ok && o.Outcome == "timeout" {
				return NotApplicable, fmt.Sprintf("the driver reported a timeout but the client sent no cancellation and its outcome line has no time: when its idle clock fired is not known (CLIENT-TIMEOUT-CANCEL judges the missing cancellation)")
			}
			return Broken, fmt.Sprintf("request %s was never cancelled: its idle timeout of %s did not fire while SSE comments arrived every ~100 ms", idText(c.Env.ID), msOf(p.Timeout()))
		}
		if at-c.At > p.Timeout()+r.slack(lateSlack) {
			return Broken, fmt.Sprintf("request %s %s %s after it was sent, not at its idle timeout of %s: the SSE comments on its stream reset the idle clock", idText(c.Env.ID), how, msOf(at-c.At), msOf(p.Timeout()))
		}
		return Held, fmt.Sprintf("request %s %s %s after it was sent (idle timeout %s) despite %d SSE comments", idText(c.Env.ID), how, msOf(at-c.At), msOf(p.Timeout()), comments)
	},
}

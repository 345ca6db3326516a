package clientsuite

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// Spec pages.
const (
	pageLifecycle  = "specification/VERSION/basic/lifecycle.mdx"
	pageTransports = "specification/VERSION/basic/transports.mdx"
	pageCancel25   = "specification/VERSION/basic/utilities/cancellation.mdx"
	pageCancel26   = "specification/2026-07-28/basic/patterns/cancellation.mdx"
	pageBasic      = "specification/VERSION/basic/index.mdx"
	pageProgress25 = "specification/VERSION/basic/utilities/progress.mdx"
	pageProgress26 = "specification/2026-07-28/basic/patterns/progress.mdx"
	pagePing       = "specification/VERSION/basic/utilities/ping.mdx"
	pageStdio26    = "specification/2026-07-28/basic/transports/stdio.mdx"
	pageHTTP26     = "specification/2026-07-28/basic/transports/streamable-http.mdx"
	pageChangelog  = "specification/2026-07-28/changelog.mdx"
	// seedLesson is the French lesson: the request coordinator, the retry
	// matrix, the failure-mode table.
	seedLesson = "seeds/000_a0534be125a2219a.txt"
)

// withTransports narrows a rule to transports.
func withTransports(r Rule, trs ...string) Rule {
	r.Transports = trs
	return r
}

func spec(word, clause, page string, ids ...string) Rule {
	return Rule{Level: levelOf(word), Word: word, Clause: clause, Spec: page, Source: SourceSpec, Clauses: ids}
}

func seed(word, clause string) Rule {
	return Rule{Level: levelOf(word), Word: word, Clause: clause + " (the seeds' reading: the specification is silent)", Spec: seedLesson, Source: SourceSeed}
}

// Notes the stdio server (mcp-conform serve-scenario) and the grader write
// into a stdio run's transcript.
const (
	NoteServerStart = "mcp-conform serve-scenario: server process"
	NoteStdinClosed = "mcp-conform serve-scenario: the client closed the server's stdin"
	NoteSignal      = "mcp-conform serve-scenario: signal"
	NoteEnd         = "mcp-conform serve-scenario: ending"
	NoteKilled      = "mcp-conform serve-scenario: the server process ended without a word"
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

// ---- retries ----

var checkRetrySameKey = &Check{
	ID:    "CLIENT-RETRY-SAME-KEY",
	Title: "after a lost response, a keyed mutation is retried with the same key and arguments and a new id",
	How: "retry-keyed: the client calls create_support_ticket (keyed by operation_key); the proxy loses every answer to the first call. " +
		"Every later call of the tool must carry byte-for-byte the same arguments (the key included) under an id not used before. " +
		"SKIP when the client does not retry.",
	Rules:      sameRule(seed("MUST", "Conditional (a mutation with a durable idempotency key): retry with the same key and identical arguments; a new JSON-RPC id is not idempotency."), Versions...),
	Transports: allTransports,
	Scenario:   "retry-keyed",
	judge: func(r *Run) (Finding, string) {
		calls := r.View().ToolCalls(r.Params.Tool)
		if len(calls) == 0 {
			return Unjudgeable, "the client never called " + r.Params.Tool + clientExit(r)
		}
		if !lostAnswer(r, calls[0]) {
			return Unjudgeable, "the proxy did not lose the first call's answer (it never came?)"
		}
		if len(calls) == 1 {
			o, _ := outcomeOf(r, r.Params.Tool)
			return NotApplicable, fmt.Sprintf("the client did not retry after losing the answer (one attempt; outcome %q)", o.Outcome)
		}
		key := r.Params.Retry.Key
		first := arguments(calls[0])
		seen := map[jsonrpc.ID]bool{}
		for _, m := range r.View().ClientRequests() {
			if m.Index < calls[1].Index {
				seen[m.Env.ID] = true
			}
		}
		for i, c := range calls[1:] {
			if got := arguments(c); got != first {
				return Broken, fmt.Sprintf("retry %d (id %s) changed the arguments: %s %s → %s (a new key makes the retry a new operation)",
					i+1, idText(c.Env.ID), key, argField(calls[0], key), argField(c, key))
			}
			if seen[c.Env.ID] {
				return Broken, fmt.Sprintf("retry %d reused the id %s of an earlier request", i+1, idText(c.Env.ID))
			}
			for _, m := range r.View().ClientRequests() {
				if m.Index < c.Index {
					seen[m.Env.ID] = true
				}
			}
		}
		return Held, fmt.Sprintf("%d retr%s with the same arguments (%s %s) under new ids", len(calls)-1, plural(len(calls)-1, "y", "ies"), key, argField(calls[0], key))
	},
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func argField(m *Msg, key string) string {
	var args map[string]json.RawMessage
	_ = json.Unmarshal(params(m)["arguments"], &args)
	if v, ok := args[key]; ok {
		return string(v)
	}
	return "(absent)"
}

var checkNoBlindRetry = &Check{
	ID:    "CLIENT-NO-BLIND-RETRY",
	Title: "an unsafe mutation (no key, not read-only) is not retried blindly after its response was lost",
	How: "retry-unsafe: the client calls append_note (not read-only, not idempotent, no key); the proxy loses the answer. " +
		"The client must not send the same call again (it may reconcile, or report the outcome as unknown). Not run on 2026-07-28 HTTP, " +
		"where the specification makes a client re-issue a request whose stream broke.",
	Rules: merge(
		sameRule(seed("MUST NOT", "Unsafe (a mutation without business deduplication): do not retry automatically; reconcile first. Do not replay an unsafe mutation just because its response was lost."), legacyVersions...),
		map[string]Rule{V20260728: withTransports(seed("MUST NOT", "Unsafe (a mutation without business deduplication): do not retry automatically; reconcile first. [2026-07-28 Streamable HTTP is left out: its changelog makes a client re-issue a request whose stream broke]"), Stdio)},
	),
	Transports: allTransports,
	Scenario:   "retry-unsafe",
	judge: func(r *Run) (Finding, string) {
		calls := r.View().ToolCalls(r.Params.Tool)
		if len(calls) == 0 {
			return Unjudgeable, "the client never called " + r.Params.Tool + clientExit(r)
		}
		if !lostAnswer(r, calls[0]) {
			return Unjudgeable, "the proxy did not lose the first call's answer (it never came?)"
		}
		for _, c := range calls[1:] {
			if arguments(c) == arguments(calls[0]) {
				return Broken, fmt.Sprintf("after losing the answer to %s (id %s) the client sent it again (id %s, %s later): an unsafe mutation retried blindly",
					r.Params.Tool, idText(calls[0].Env.ID), idText(c.Env.ID), msOf(c.At-calls[0].At))
			}
		}
		o, _ := outcomeOf(r, r.Params.Tool)
		return Held, fmt.Sprintf("one attempt of %s; the client reported %q", r.Params.Tool, orDash(o.Outcome))
	},
}

func orDash(s string) string {
	if s == "" {
		return "no outcome"
	}
	return s
}

// ---- reconnection ----

var checkResume = &Check{
	ID:    "CLIENT-RESUME-LAST-EVENT-ID",
	Title: "after a cut SSE stream with event ids the client resumes with GET and Last-Event-ID (2025)",
	How: "sse-resume: slow's response stream has event ids; the proxy cuts it after the second progress. The client's next request " +
		"must be a GET carrying Last-Event-ID = the id of the last event it received, not a new POST of the call.",
	Rules:      sameRule(spec("SHOULD", "If the client wishes to resume after a disconnection (618: after a broken connection), it SHOULD issue an HTTP GET to the MCP endpoint, and include the Last-Event-ID header", pageTransports, "cl-tr#9", "cl-tr#8"), legacyVersions...),
	Transports: []string{HTTP},
	Scenario:   "sse-resume",
	judge: func(r *Run) (Finding, string) {
		c, cut, lastID, f, why := afterCut(r)
		if f != Held {
			return f, why
		}
		if lastID == "" {
			return NotApplicable, "no event id reached the client before the cut: nothing to resume from"
		}
		next := firstReconnect(r, c, cut.Index)
		switch {
		case next == nil:
			return Broken, fmt.Sprintf("the client did not resume the stream cut after event %q (no GET with Last-Event-ID, no new request)", lastID)
		case next.HTTPMethod != "GET":
			return Broken, fmt.Sprintf("the client re-sent the call (id %s, %s after the cut) instead of resuming the stream with GET and Last-Event-ID %q", idText(next.Env.ID), msOf(next.At-cut.At), lastID)
		}
		got := next.Header.Get("Last-Event-ID")
		switch {
		case got == "":
			return Broken, "the client reopened a GET stream without Last-Event-ID after the cut (the events after " + fmt.Sprintf("%q", lastID) + " are not asked for)"
		case got != lastID:
			return Broken, fmt.Sprintf("the client resumed with Last-Event-ID %q, but the last event it received was %q", got, lastID)
		}
		return Held, fmt.Sprintf("resumed with GET, Last-Event-ID %q, %s after the cut", got, msOf(next.At-cut.At))
	},
}

// afterCut finds the scenario call, the proxy's cut of its stream and the
// last event id delivered before it.
func afterCut(r *Run) (*Msg, faultproxy.Entry, string, Finding, string) {
	c, why := firstCall(r)
	if c == nil {
		return nil, faultproxy.Entry{}, "", Unjudgeable, why
	}
	cut, ok := cutOf(r, c.Stream)
	if !ok {
		return nil, faultproxy.Entry{}, "", Unjudgeable, "the proxy never cut the call's stream (fewer than two progress notifications: did the call carry a progress token?)"
	}
	last := ""
	for _, m := range r.View().Msgs {
		if m.Stream == c.Stream && m.Dir == faultproxy.ServerToClient && m.HasEventID && m.Index < cut.Index {
			if _, ok := m.Delivered(); ok {
				last = m.EventID
			}
		}
	}
	return c, cut, last, Held, ""
}

// firstReconnect is the client's first GET, or tools/call of the tool,
// after entry index from.
func firstReconnect(r *Run, c *Msg, from int) *Msg {
	for _, m := range r.View().Msgs {
		if m.Index <= from || m.Dir != faultproxy.ClientToServer || m.Synthetic {
			continue
		}
		if m.HTTPMethod == "GET" || (m.Env.Method == "tools/call" && toolName(m) == toolName(c)) {
			return m
		}
	}
	return nil
}

var checkResumeRetryWait = &Check{
	ID:    "CLIENT-RESUME-RETRY-WAIT",
	Title: "the client waits the stream's retry field before reconnecting (2025-11-25)",
	How: "sse-resume in 2025-11-25: the stream's priming event carries retry: 500; the proxy cuts the stream after the second progress. " +
		"The client's first reconnection (a GET, or a new POST of the call) must come at least 500 ms (less 50 ms of scheduling noise) after the cut.",
	Rules:      map[string]Rule{V20251125: spec("MUST", "The client MUST respect the retry field, waiting the given number of milliseconds before attempting to reconnect.", strings.ReplaceAll(pageTransports, "VERSION", V20251125), "cl-tr#6")},
	Transports: []string{HTTP},
	Scenario:   "sse-resume",
	judge: func(r *Run) (Finding, string) {
		c, cut, _, f, why := afterCut(r)
		if f != Held {
			return f, why
		}
		retry := -1
		for _, m := range r.View().Msgs {
			if m.Stream == c.Stream && m.HasRetry && m.Index < cut.Index {
				retry = m.Retry
			}
		}
		if retry < 0 {
			return NotApplicable, "the stream carried no retry field"
		}
		next := firstReconnect(r, c, cut.Index)
		if next == nil {
			return NotApplicable, "the client did not reconnect after the cut"
		}
		want := time.Duration(retry) * time.Millisecond
		if d := next.At - cut.At; d < want-earlyTolerance {
			return Broken, fmt.Sprintf("the client reconnected (%s %s) %s after the cut; the stream's retry field asked for %d ms", next.HTTPMethod, next.Stream, msOf(d), retry)
		}
		return Held, fmt.Sprintf("reconnected %s after the cut (retry %d ms)", msOf(next.At-cut.At), retry)
	},
}

var checkReissue = &Check{
	ID:    "CLIENT-REISSUE-NEW-ID",
	Title: "after a broken response stream the client re-issues the request with a new id (2026-07-28)",
	How: "reissue: the proxy cuts slow's response stream after the second progress. The client must send the call again (same tool and " +
		"arguments) under an id other than the lost request's.",
	Rules:      map[string]Rule{V20260728: spec("MUST", "A broken response stream loses the in-flight request; clients MUST re-issue it as a new request with a new request ID.", pageChangelog, "cl-h#11")},
	Transports: []string{HTTP},
	Scenario:   "reissue",
	judge: func(r *Run) (Finding, string) {
		c, cut, _, f, why := afterCut(r)
		if f != Held {
			return f, why
		}
		for _, m := range r.View().ToolCalls(r.Params.Tool) {
			if m.Index <= cut.Index || arguments(m) != arguments(c) {
				continue
			}
			if m.Env.ID == c.Env.ID {
				return Broken, fmt.Sprintf("the client re-issued the call under the lost request's id %s (%s after the cut)", idText(m.Env.ID), msOf(m.At-cut.At))
			}
			return Held, fmt.Sprintf("re-issued as request %s (the lost one was %s), %s after the cut", idText(m.Env.ID), idText(c.Env.ID), msOf(m.At-cut.At))
		}
		return Broken, fmt.Sprintf("the client did not re-issue request %s after its response stream broke", idText(c.Env.ID))
	},
}

var checkReinit404 = &Check{
	ID:    "CLIENT-REINIT-ON-404",
	Title: "an HTTP 404 to a request with a session id makes the client start a new session (2025)",
	How: "session-404: the proxy answers the client's tools/call with HTTP 404, as for a session the server no longer knows. The client " +
		"must then send a new initialize without an Mcp-Session-Id header.",
	Rules:      sameRule(spec("MUST", "When a client receives HTTP 404 in response to a request containing an MCP-Session-Id, it MUST start a new session by sending a new InitializeRequest without a session ID attached.", pageTransports, "cl-tr#11"), legacyVersions...),
	Transports: []string{HTTP},
	Scenario:   "session-404",
	judge: func(r *Run) (Finding, string) {
		var gone *Msg
		for _, m := range r.View().ToolCalls(r.Params.Tool) {
			if m.Stopped {
				gone = m
				break
			}
		}
		if gone == nil {
			return Unjudgeable, "the proxy did not answer a call with 404 (the client never called " + r.Params.Tool + "?)" + clientExit(r)
		}
		old := gone.Header.Get("Mcp-Session-Id")
		if old == "" {
			return NotApplicable, "the request answered 404 carried no Mcp-Session-Id"
		}
		for _, m := range r.View().ClientRequests() {
			if m.Index <= gone.Index || m.Env.Method != "initialize" {
				continue
			}
			if sid := m.Header.Get("Mcp-Session-Id"); sid != "" {
				return Broken, fmt.Sprintf("the new initialize (%s) carried Mcp-Session-Id %q: a new session is started without one", m.Stream, sid)
			}
			return Held, fmt.Sprintf("new initialize without a session id %s after the 404", msOf(m.At-gone.At))
		}
		return Broken, fmt.Sprintf("no new initialize after the HTTP 404 to %s (session %q)", gone.Stream, old)
	},
}

var checkHerd = &Check{
	ID:    "CLIENT-HERD-JITTER",
	Title: "clients that lose their streams reconnect after delays of their own, by jittered capped backoff",
	How: "herd: eight client processes each call slow. The proxy holds the calls at a gate until all eight are there (at most 10 s after " +
		"the first, however long each client took to start), lets them in one at a time in the order they came, cuts each call's stream " +
		"right after its first progress, and lets the next call in once that client reconnected (a GET of its session, or its call sent " +
		"again; else 2.5 s later): each client's first reconnection (a GET in 2025, the re-issued call in 2026) is timed from its own " +
		"cut, alone, while the other clients wait idle at the gate. Clients without jitter all wait the same delay " +
		"(a few ms of noise apart); with jitter the delays must spread over at least 100 ms (the latest one is left out of the spread, as a " +
		"straggler of the scheduler), and none may wait more than 10 s (the cap, 8 s, and margin). The reason gives p50 and p99, as the herd command does.",
	Rules:      sameRule(seed("SHOULD", "If 10,000 clients reconnect within the same second, the recovering server fails again: use exponential backoff with jitter and a cap (attempt 0: up to 250 ms, doubling, cap 8000 ms). Every client reconnecting immediately makes recovery another outage."), Versions...),
	Transports: []string{HTTP},
	Scenario:   "herd",
	judge: func(r *Run) (Finding, string) {
		ds, n, why := herdDelays(r)
		if why != "" {
			return Unjudgeable, why + clientExit(r)
		}
		if len(ds) < 2 {
			return NotApplicable, fmt.Sprintf("%d of %d clients reconnected after their streams were cut: no spread to measure", len(ds), n)
		}
		sortDurations(ds)
		// The spread leaves the latest one out when there are five or
		// more: a straggler of the scheduler, not jitter.
		top := ds[len(ds)-1]
		if len(ds) >= 5 {
			top = ds[len(ds)-2]
		}
		spread := top - ds[0]
		var parts []string
		for _, d := range ds {
			parts = append(parts, fmt.Sprint(d.Milliseconds()))
		}
		stats := fmt.Sprintf("%d of %d clients reconnected; each %s ms after its own stream was cut (p50 %s, p99 %s, spread %s)",
			len(ds), n, strings.Join(parts, ", "), msOf(percentile(ds, 0.5)), msOf(percentile(ds, 0.99)), msOf(spread))
		if ds[len(ds)-1] > herdCap {
			return Broken, stats + ": a first reconnection waited longer than the 8 s cap"
		}
		if spread < herdMinSpread {
			return Broken, stats + ": the clients wait the same delay (no jitter): cut at once, they would come back together"
		}
		return Held, stats
	},
}

// herdDelays are the herd's reconnection delays: for each stream the herd
// conductor cut, the time from the cut to that client's first request
// after it (a GET of its session, or a call carrying its tag). cut is how
// many streams were cut; why says why nothing could be measured.
func herdDelays(r *Run) (ds []time.Duration, cut int, why string) {
	v := r.View()
	callOn := map[string]*Msg{}
	calls := 0
	for _, m := range v.ToolCalls(r.Params.Tool) {
		calls++
		if _, ok := callOn[m.Stream]; !ok {
			callOn[m.Stream] = m
		}
	}
	for _, f := range v.Faults {
		if f.Rule != ruleHerdCut || f.Fault != "cut" {
			continue
		}
		call := callOn[f.Stream]
		if call == nil {
			continue
		}
		cut++
		tag := callTag(call.Env)
		sid := ""
		if call.Header != nil {
			sid = call.Header.Get("Mcp-Session-Id")
		}
		for _, m := range v.Msgs {
			if m.Index <= f.Index || m.Dir != faultproxy.ClientToServer || m.Synthetic {
				continue
			}
			again := m.Env.Method == "tools/call" && callTag(m.Env) == tag
			resume := m.HTTPMethod == "GET" && sid != "" && m.Header.Get("Mcp-Session-Id") == sid
			if again || resume {
				ds = append(ds, m.At-f.At)
				break
			}
		}
	}
	if cut == 0 {
		if calls == 0 {
			return nil, 0, "no client called " + r.Params.Tool
		}
		return nil, 0, fmt.Sprintf("the proxy cut no stream (%d calls of %s, none reported progress?)", calls, r.Params.Tool)
	}
	return ds, r.Scenario.NumClients(), ""
}

// ---- session hygiene (judged on the runs of every scenario) ----

var checkIDUnique = &Check{
	ID:    "CLIENT-ID-UNIQUE",
	Title: "request ids are never null and never reused (within a session; 2026: while a request with it awaits its response)",
	How:   "Every run: each request the client sends has an id that is not null and (2025) not used before in the session (the server process on stdio, the Mcp-Session-Id on HTTP), or (2026-07-28) not that of an earlier request still without a response.",
	Rules: merge(
		sameRule(spec("MUST NOT", "Unlike base JSON-RPC, the ID MUST NOT be null. The request ID MUST NOT have been previously used by the requestor within the same session.", pageBasic, "cl-basic#1", "cl-basic#2"), legacyVersions...),
		map[string]Rule{V20260728: spec("MUST NOT", "Unlike base JSON-RPC, the ID MUST NOT be null. The request ID MUST NOT match the ID of any other request the sender has issued and not yet received a response for.", strings.ReplaceAll(pageBasic, "VERSION", V20260728), "cl-basic#1", "cl-basic#3")},
	),
	Transports: allTransports,
	judge: func(r *Run) (Finding, string) {
		v := r.View()
		reqs := v.ClientRequests()
		used := map[string]map[jsonrpc.ID]*Msg{}
		for _, m := range reqs {
			if m.Env.ID == "null" {
				return Broken, fmt.Sprintf("request %s (%s) has the id null", m.Env.Method, where(m))
			}
			key := sessionKey(r, m)
			if used[key] == nil {
				used[key] = map[jsonrpc.ID]*Msg{}
			}
			if prev, ok := used[key][m.Env.ID]; ok {
				if isLegacy(r.Version) {
					return Broken, fmt.Sprintf("request %s (%s) reuses the id %s of %s (%s) in the same session", m.Env.Method, where(m), idText(m.Env.ID), prev.Env.Method, where(prev))
				}
				if _, answered := v.Reply(prev.Env.ID, prev.Index); !answered || replyIndex(v, prev) > m.Index {
					return Broken, fmt.Sprintf("request %s (%s) reuses the id %s of %s (%s), which had no response yet", m.Env.Method, where(m), idText(m.Env.ID), prev.Env.Method, where(prev))
				}
			}
			used[key][m.Env.ID] = m
		}
		return Held, fmt.Sprintf("%d requests, every id distinct and not null", len(reqs))
	},
}

func replyIndex(v *View, req *Msg) int {
	if m, ok := v.Reply(req.Env.ID, req.Index); ok {
		i, _ := m.Delivered()
		return i
	}
	return 1 << 30
}

func where(m *Msg) string {
	if m.Stream != "" {
		return m.Stream
	}
	return fmt.Sprintf("message %d", m.Seq)
}

var checkTokenUnique = &Check{
	ID:    "CLIENT-PROGRESS-TOKEN-UNIQUE",
	Title: "progress tokens are unique among the client's active requests",
	How: "Every run (tools-call makes two calls at once): a request may not carry the progress token of another request still active " +
		"(no response delivered, not cancelled, its 2026 stream not closed).",
	Rules: merge(
		sameRule(spec("MUST", "Progress tokens can be chosen by the sender using any means, but MUST be unique across all active requests.", pageProgress25, "cl-prg#1"), legacyVersions...),
		map[string]Rule{V20260728: spec("MUST", "Progress tokens can be chosen by the client using any means, but MUST be unique across all active requests.", pageProgress26, "cl-prg#1")},
	),
	Transports: allTransports,
	judge: func(r *Run) (Finding, string) {
		v := r.View()
		var withToken []*Msg
		for _, m := range v.ClientRequests() {
			if !m.Env.ProgressToken.IsZero() {
				withToken = append(withToken, m)
			}
		}
		for i, m := range withToken {
			for _, prev := range withToken[:i] {
				if prev.Env.ProgressToken == m.Env.ProgressToken && activeAt(r, prev, m.Index) {
					return Broken, fmt.Sprintf("request %s (%s, id %s) carries progress token %s, which request %s (id %s) still active uses",
						m.Env.Method, where(m), idText(m.Env.ID), m.Env.ProgressToken, prev.Env.Method, idText(prev.Env.ID))
				}
			}
		}
		if len(withToken) == 0 {
			return NotApplicable, "no request carried a progress token"
		}
		return Held, fmt.Sprintf("%d requests with progress tokens, none shared while active", len(withToken))
	},
}

// activeAt reports whether req was still active at entry index i: no
// reply delivered, no cancellation, its 2026 stream neither closed nor cut.
func activeAt(r *Run, req *Msg, i int) bool {
	v := r.View()
	if replyIndex(v, req) < i {
		return false
	}
	for _, c := range v.CancelsOf(req.Env.ID) {
		if c.Index < i {
			return false
		}
	}
	if r.Transport == HTTP && req.Stream != "" {
		// A request the proxy answered itself (404), or whose exchange got
		// an error status, ended there: it has no stream to come back on.
		if req.Stopped {
			return false
		}
		if h := v.RespHead[req.Stream]; h != nil && (h.Status < 200 || h.Status > 299) {
			return false
		}
	}
	if r.modernHTTP() && req.Stream != "" {
		if n, ok := v.ClientClosed(req.Stream); ok && n.Index < i {
			return false
		}
		if f, ok := cutOf(r, req.Stream); ok && f.Index < i {
			return false
		}
	}
	return true
}

var checkCancelValid = &Check{
	ID:    "CLIENT-CANCEL-VALID",
	Title: "cancellations name only requests the client sent and believes in progress",
	How:   "Every run: each notifications/cancelled names the id of an earlier request of the client, not one answered more than 1 s before.",
	Rules: merge(
		sameRule(spec("MUST", "Cancellation notifications MUST only reference requests that: Were previously issued in the same direction; Are believed to still be in-progress", pageCancel25, "cl-can#1"), legacyVersions...),
		map[string]Rule{V20260728: withTransports(spec("MUST", "Cancellation notifications MUST only reference requests that: Were previously issued by the client; Are believed to still be in-progress", pageCancel26, "cl-c26#2"), Stdio)},
	),
	Transports: allTransports,
	judge: func(r *Run) (Finding, string) {
		v := r.View()
		cs := v.Cancels()
		if len(cs) == 0 {
			return NotApplicable, "the client sent no notifications/cancelled"
		}
		for _, c := range cs {
			var req *Msg
			for _, m := range v.ClientRequests() {
				if m.Index < c.Index && m.Env.ID == c.Env.CancelledID {
					req = m
				}
			}
			if req == nil {
				return Broken, fmt.Sprintf("notifications/cancelled (%s) names request %s, which the client never sent", where(c), idText(c.Env.CancelledID))
			}
			if rep, ok := v.Reply(req.Env.ID, req.Index); ok {
				if i, _ := rep.Delivered(); i < c.Index && c.At-rep.At > r.slack(cancelGrace) {
					return Broken, fmt.Sprintf("notifications/cancelled for request %s came %s after its response had reached the client", idText(req.Env.ID), msOf(c.At-rep.At))
				}
			}
		}
		return Held, fmt.Sprintf("%d cancellation(s), each naming a request in flight", len(cs))
	},
}

var checkNoCancelInit = &Check{
	ID:    "CLIENT-NO-CANCEL-INITIALIZE",
	Title: "the client never cancels initialize",
	How: "initialize-timeout: the proxy holds the initialize response until the client cancels (or the run ends) against an initialize " +
		"timeout of 1 s: no notifications/cancelled may name an initialize request.",
	Rules:      sameRule(spec("MUST NOT", "The initialize request MUST NOT be cancelled by clients", pageCancel25, "cl-can#2"), legacyVersions...),
	Transports: allTransports,
	Scenario:   "initialize-timeout",
	judge: func(r *Run) (Finding, string) {
		v := r.View()
		inits := 0
		for _, m := range v.ClientRequests() {
			if m.Env.Method != "initialize" {
				continue
			}
			inits++
			if cs := v.CancelsOf(m.Env.ID); len(cs) > 0 {
				return Broken, fmt.Sprintf("the client cancelled initialize (id %s) %s after sending it", idText(m.Env.ID), msOf(cs[0].At-m.At))
			}
		}
		if inits == 0 {
			return Unjudgeable, "the client sent no initialize" + clientExit(r)
		}
		return Held, "initialize was not cancelled"
	},
}

var checkNoRequestBeforeInit = &Check{
	ID:    "CLIENT-NO-REQUEST-BEFORE-INIT",
	Title: "no request but ping before the initialize result (2025)",
	How: "Every run in 2025: between the start and the moment the initialize response reached the client, it sends no request other " +
		"than initialize and ping (a server/discover version probe before initialize is allowed: 2026-07-28 asks dual-era clients for it).",
	Rules:      sameRule(spec("SHOULD NOT", "The client SHOULD NOT send requests other than pings before the server has responded to the initialize request.", pageLifecycle, "cl-lc#3"), legacyVersions...),
	Transports: allTransports,
	judge: func(r *Run) (Finding, string) {
		v := r.View()
		reqs := v.ClientRequests()
		var init *Msg
		for _, m := range reqs {
			if m.Env.Method == "initialize" {
				init = m
				break
			}
		}
		if init == nil {
			return NotApplicable, "the client sent no initialize"
		}
		until := replyIndex(v, init)
		for _, m := range reqs {
			if m.Index >= until {
				break
			}
			switch {
			case m.Env.Method == "initialize", m.Env.Method == "ping":
			case m.Env.Method == "server/discover" && m.Index < init.Index:
			default:
				return Broken, fmt.Sprintf("the client sent %s (id %s) before the initialize result had reached it", m.Env.Method, idText(m.Env.ID))
			}
		}
		return Held, "nothing but initialize before its result"
	},
}

var checkVersionHeader = &Check{
	ID:    "CLIENT-PROTOCOL-VERSION-HEADER",
	Title: "every HTTP request after initialization carries MCP-Protocol-Version (2026: matching _meta)",
	How: "Every HTTP run: in 2025 each request after the initialize result reached the client (POST, GET, DELETE) carries " +
		"MCP-Protocol-Version with the negotiated version; in 2026-07-28 every POST carries it, equal to the body's " +
		"_meta io.modelcontextprotocol/protocolVersion.",
	Rules: merge(
		sameRule(spec("MUST", "If using HTTP, the client MUST include the MCP-Protocol-Version: <protocol-version> HTTP header on all subsequent requests to the MCP server", pageTransports, "cl-tr#12"), legacyVersions...),
		map[string]Rule{V20260728: spec("MUST", "Every POST request to the MCP endpoint MUST include an MCP-Protocol-Version header. The header value MUST match the io.modelcontextprotocol/protocolVersion field carried in the request body's _meta.", pageHTTP26, "cl-h#3", "cl-h#4")},
	),
	Transports: []string{HTTP},
	judge: func(r *Run) (Finding, string) {
		v := r.View()
		checked := 0
		if isLegacy(r.Version) {
			version, pending := "", -1
			for _, m := range v.Msgs {
				if m.Dir != faultproxy.ClientToServer || m.Synthetic {
					continue
				}
				if m.Env.Method == "initialize" {
					pending = replyIndex(v, m)
					if rep, ok := v.Reply(m.Env.ID, m.Index); ok {
						var ver string
						_ = json.Unmarshal(resultField(rep, "protocolVersion"), &ver)
						version = ver
					}
					continue
				}
				if version == "" || m.Index < pending {
					continue
				}
				checked++
				if got := m.Header.Get("MCP-Protocol-Version"); got != version {
					return Broken, fmt.Sprintf("%s %s (%s) carried MCP-Protocol-Version %q; the negotiated version is %s", m.HTTPMethod, m.Stream, describe(m), got, version)
				}
			}
		} else {
			for _, m := range v.Msgs {
				if m.Dir != faultproxy.ClientToServer || m.Synthetic || m.HTTPMethod != "POST" {
					continue
				}
				checked++
				got := m.Header.Get("MCP-Protocol-Version")
				if got == "" {
					return Broken, fmt.Sprintf("POST %s (%s) carried no MCP-Protocol-Version header", m.Stream, describe(m))
				}
				if mv := metaVersion(m); mv != "" && mv != got {
					return Broken, fmt.Sprintf("POST %s (%s): MCP-Protocol-Version %q, but _meta says %q", m.Stream, describe(m), got, mv)
				}
			}
		}
		if checked == 0 {
			return NotApplicable, "no HTTP request after initialization"
		}
		return Held, fmt.Sprintf("%d HTTP requests, each with the right MCP-Protocol-Version", checked)
	},
}

func describe(m *Msg) string {
	switch {
	case m.Env.Method != "":
		return m.Env.Method
	case m.Env.Kind.IsReply():
		return "a response"
	case m.HTTPMethod == "GET":
		return "GET stream"
	}
	return string(m.Env.Kind)
}

// mcpNameParam is the params member Mcp-Name mirrors.
var mcpNameParam = map[string]string{"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}

var checkMethodHeaders = &Check{
	ID:    "CLIENT-METHOD-HEADERS",
	Title: "2026-07-28 POSTs carry Mcp-Method (and Mcp-Name) matching the body",
	How: "Every HTTP run in 2026-07-28: each POSTed request or notification carries Mcp-Method equal to its method and, for tools/call, " +
		"prompts/get and resources/read, Mcp-Name equal to params.name (params.uri), Base64-sentinel decoded.",
	Rules:      map[string]Rule{V20260728: spec("MUST", "The client MUST include the request metadata headers on each POST request. [Mcp-Method on all requests; Mcp-Name on tools/call, resources/read, prompts/get] These headers are REQUIRED for compliance.", pageHTTP26, "cl-h#1", "cl-h#5")},
	Transports: []string{HTTP},
	judge: func(r *Run) (Finding, string) {
		checked := 0
		for _, m := range r.View().Msgs {
			if m.Dir != faultproxy.ClientToServer || m.Synthetic || m.HTTPMethod != "POST" {
				continue
			}
			if m.Env.Kind != jsonrpc.Request && m.Env.Kind != jsonrpc.Notification {
				continue
			}
			checked++
			if got := m.Header.Get("Mcp-Method"); got != m.Env.Method {
				return Broken, fmt.Sprintf("POST %s (%s) carried Mcp-Method %q", m.Stream, m.Env.Method, got)
			}
			if key, ok := mcpNameParam[m.Env.Method]; ok {
				var want string
				_ = json.Unmarshal(params(m)[key], &want)
				if got := decodeHeaderValue(m.Header.Get("Mcp-Name")); got != want {
					return Broken, fmt.Sprintf("POST %s (%s %q) carried Mcp-Name %q", m.Stream, m.Env.Method, want, m.Header.Get("Mcp-Name"))
				}
			}
		}
		if checked == 0 {
			return NotApplicable, "no POSTed request"
		}
		return Held, fmt.Sprintf("%d POSTs, each with matching Mcp-Method (and Mcp-Name)", checked)
	},
}

var checkPing = &Check{
	ID:    "CLIENT-PING-ANSWERED",
	Title: "a ping from the server is answered promptly with an empty result (2025)",
	How: "tools-call in 2025: the proxy sends the client a ping request (stdio: after notifications/initialized; HTTP: on the slow call's " +
		"response stream, before its first progress) and holds the results of the client's calls until the client answered it (5 s at most), " +
		"so that a client that shuts down as soon as its calls end has had the whole time to answer. The client must answer it with result {} within 5 s.",
	Rules:      sameRule(spec("MUST", "The receiver MUST respond promptly with an empty response", pagePing, "cl-ping#1"), legacyVersions...),
	Transports: allTransports,
	Scenario:   "tools-call",
	judge: func(r *Run) (Finding, string) {
		v := r.View()
		var ping *Msg
		for _, m := range v.Msgs {
			if m.Synthetic && m.Dir == faultproxy.ServerToClient && m.Env.Method == "ping" {
				ping = m
				break
			}
		}
		if ping == nil {
			return Unjudgeable, "the proxy never sent its ping (the client did not get as far as notifications/initialized, or a call's progress or answer)" + clientExit(r)
		}
		for _, m := range v.Msgs {
			if m.Dir != faultproxy.ClientToServer || !m.Env.Kind.IsReply() || m.Env.ID != ping.Env.ID {
				continue
			}
			if m.Env.Kind == jsonrpc.ErrorReply {
				return Broken, fmt.Sprintf("the client answered the ping with an error: %s", m.Body)
			}
			if canonical(m.Env.Result) != "{}" {
				return Broken, fmt.Sprintf("the client answered the ping with result %s, want {}", m.Env.Result)
			}
			if d := m.At - ping.At; d > pingPrompt {
				return Broken, fmt.Sprintf("the client answered the ping only %s later", msOf(d))
			}
			return Held, fmt.Sprintf("ping answered with {} after %s", msOf(m.At-ping.At))
		}
		return Broken, fmt.Sprintf("the client never answered the server's ping (id %s)", idText(ping.Env.ID))
	},
}

var checkStdioShutdown = &Check{
	ID:    "CLIENT-STDIO-SHUTDOWN",
	Title: "the client shuts a stdio server down by closing its stdin first",
	How: "Every stdio run: the server process (mcp-conform serve-scenario) records when its stdin closes and any signal it gets. " +
		"A signal (SIGTERM) before stdin closed, or a SIGKILL with stdin open, breaks the order. Runs the grader had to kill are not judged.",
	Rules: merge(
		sameRule(spec("SHOULD", "For the stdio transport, the client SHOULD initiate shutdown by: First, closing the input stream to the child process (the server); Waiting for the server to exit, or sending SIGTERM if the server does not exit within a reasonable time; Sending SIGKILL if the server does not exit within a reasonable time after SIGTERM", pageLifecycle, "cl-lc#8"), legacyVersions...),
		map[string]Rule{V20260728: spec("SHOULD", "The client SHOULD initiate shutdown by: Closing the input stream to the child process (the server). Waiting for the server to exit. If the server does not exit within a reasonable time, forcibly terminating the process", pageStdio26, "cl-st#6")},
	),
	Transports: []string{Stdio},
	judge: func(r *Run) (Finding, string) {
		if len(r.Clients) > 0 && r.Clients[0].Killed {
			return NotApplicable, "the grader ended the client at its deadline"
		}
		if r.Servers == 0 {
			return NotApplicable, "the client started no server"
		}
		closed := false
		for _, n := range r.View().Notes {
			switch {
			case strings.HasPrefix(n.Text, NoteServerStart):
				closed = false
			case strings.HasPrefix(n.Text, NoteStdinClosed):
				closed = true
			case strings.HasPrefix(n.Text, NoteSignal) && !closed:
				return Broken, strings.TrimPrefix(n.Text, "mcp-conform serve-scenario: ") + ": the client signalled the server before closing its stdin"
			case strings.HasPrefix(n.Text, NoteKilled) && !closed:
				return Broken, "the server process was killed (SIGKILL) with its stdin still open"
			}
		}
		return Held, fmt.Sprintf("stdin closed first (%d server process%s)", r.Servers, plural(r.Servers, "", "es"))
	},
}

// The catalog, in the order of list and reports: the scenario checks by
// scenario, then the hygiene checks.
func init() {
	for _, c := range []*Check{checkPing, checkNoCancelInit, checkTimeoutCancel, checkHTTPNoCancelNotification, checkLateResponse, checkProgressResetsIdle, checkMaxTimeout,
		checkHeartbeat, checkRetrySameKey, checkNoBlindRetry, checkResume, checkResumeRetryWait, checkReissue, checkReinit404, checkHerd,
		checkIDUnique, checkTokenUnique, checkCancelValid, checkNoRequestBeforeInit, checkVersionHeader,
		checkMethodHeaders, checkStdioShutdown} {
		register(c)
	}
}

// HygieneChecks are the checks judged on every run.
func HygieneChecks() []*Check {
	var out []*Check
	for _, c := range catalog {
		if c.Hygiene() {
			out = append(out, c)
		}
	}
	return out
}

// ScenarioChecks are the checks judged on runs of scenario name.
func ScenarioChecks(name string) []*Check {
	var out []*Check
	for _, c := range catalog {
		if c.Scenario == name {
			out = append(out, c)
		}
	}
	return out
}

package clientsuite

import (
	"fmt"
	"strings"
	"time"

	"github.com/mcp-conform/mcp-conform/faultproxy"
)

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

package suites

import (
	"fmt"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/reports"
)

var checkSSEHeaders = register(&Check{
	ID:    "SSE-HEADERS",
	Title: "event streams carry X-Accel-Buffering: no (and Content-Type text/event-stream)",
	How: "Calls the slow role and reads the response head of its event stream. A buffering reverse proxy holds a " +
		"stream without X-Accel-Buffering: no, and the client sees nothing until the end. Cache-Control: no-cache is " +
		"reported when missing, never graded: no version asks for it. 2026-07-28 asks for X-Accel-Buffering (SHOULD); the " +
		"2025 versions name no header, so there the same header is mcp-conform's reading of good practice (SHOULD at most).",
	Rules: merge(
		sameRule(Rule{Level: reports.Should, Spec: httpLegacy, Source: reports.SourceReading, Also: []string{httpModern},
			Clause: "mcp-conform's reading for the 2025 versions, which name no header: a server that initiates an SSE stream sends X-Accel-Buffering: no so that intermediaries do not buffer it, as 2026-07-28 asks (\"When initiating an SSE stream, servers SHOULD include the X-Accel-Buffering: no header in the HTTP response.\")."},
			legacyVersions...),
		map[string]Rule{v20260728: {Level: reports.Should, Spec: httpModern,
			Clause: "When initiating an SSE stream, servers SHOULD include the X-Accel-Buffering: no header in the HTTP response."}},
	),
	Transports: []string{viaHTTP},
	Roles:      []string{"slow"},
})

var checkSSEHeartbeat = register(&Check{
	ID:    "SSE-HEARTBEAT",
	Title: "a silent event stream carries comment keep-alives",
	How: "Calls the silent role (a call that sends nothing for longer than the server's keep-alive interval) and " +
		"counts SSE comment blocks on its stream before the response (the first comment decides: the check ends there). The silence is measured on the open stream: the longest " +
		"span in which nothing arrived, from the response headers or the last event or comment to the next. A stream never silent " +
		"for half the call (a server that sends its headers with its first event) has no silence to keep alive: SKIP. No version has a SHOULD for it: 2026-07-28 says servers " +
		"\"are encouraged\" to send keep-alives on long-lived streams, so the check is mcp-conform's reading of good practice and WARNs at most.",
	Rules: merge(
		sameRule(Rule{Level: reports.Should, Spec: httpLegacy, Source: reports.SourceReading,
			Clause: "mcp-conform's reading (2025, which says nothing of keep-alives): long silent streams carry SSE comments so intermediaries and idle timeouts do not close them."},
			legacyVersions...),
		map[string]Rule{v20260728: {Level: reports.Should, Spec: httpModern, Source: reports.SourceReading,
			Clause: "For long-lived streams [...] servers are encouraged to periodically emit an SSE comment line (a line beginning with a colon, e.g. :\\r\\n) as a keep-alive. (\"Encouraged\" is no RFC 2119 keyword: mcp-conform's reading grades it as a SHOULD at most.)"}},
	),
	Transports: []string{viaHTTP},
	Roles:      []string{"silent"},
})

func registerSSE() {
	ginkgo.Describe("SSE", ginkgo.Label("area:sse"), func() {
		define(checkSSEHeaders, sseHeaders)
		define(checkSSEHeartbeat, sseHeartbeat)
	})
}

func sseHeaders(h *H) {
	c := h.ConnectHTTP()
	call := c.StartRole("slow", jsonrpc.StringID("sse-headers-1"), jsonrpc.StringID("sse-headers-token"), nil)
	c.Await(call, "the slow call")
	if !call.IsSSE() {
		h.Skip("the server answered tools/call with " + call.Header().Get("Content-Type") + ", not an event stream")
	}
	hd := call.Header()
	if !strings.Contains(strings.ToLower(strings.Join(hd.Values("Cache-Control"), ",")), "no-cache") {
		// No version asks for it: reported, not graded.
		h.Notef("no Cache-Control: no-cache on the event stream (got %s; no version of the specification asks for it)", q(hd.Values("Cache-Control")))
	}
	if !strings.EqualFold(strings.TrimSpace(hd.Get("X-Accel-Buffering")), "no") {
		h.Failf("the event stream lacks X-Accel-Buffering: no (got %s)", q(hd.Values("X-Accel-Buffering")))
	}
}

func q(v []string) string {
	if len(v) == 0 {
		return "none"
	}
	return "\"" + strings.Join(v, ", ") + "\""
}

func sseHeartbeat(h *H) {
	c := h.ConnectHTTP()
	sent := time.Now()
	call := c.StartRole("silent", jsonrpc.StringID("sse-heartbeat-1"), nil, nil)
	// A keep-alive comment decides the check (any comment on the stream
	// is heartbeatSeen): once one has come, the rest of the silent call is
	// not waited for.
	if e, ok := c.WaitEvent(call, h.Cfg().CallTimeout, func(e clients.StreamEvent) bool { return e.IsComment }); ok {
		h.Notef("a keep-alive comment %s after the request, %s after the response headers, while the silent call was still running",
			e.At.Sub(sent).Round(time.Millisecond), e.At.Sub(call.HeaderAt()).Round(time.Millisecond))
		return
	}
	select {
	case <-call.Ended():
	default:
		// No comment and no end within the call's bound: the call never
		// answered (as Await would report it, without a second wait).
		h.Failf("the silent call: no response for id %s within %s%s", call.ID(), h.Cfg().CallTimeout, c.ExitHint())
	}
	c.Await(call, "the silent call")
	if !call.IsSSE() {
		h.Skip("the server answered the silent call with " + call.Header().Get("Content-Type") + ", not an event stream")
	}
	s := measureSilence(sent, call.HeaderAt(), call.StreamEvents())
	switch s.judge() {
	case heartbeatSeen:
		h.Notef("%d keep-alive comment(s) on the %s the stream was open (longest silence %s)", s.comments, s.open.Round(time.Millisecond), s.longest.Round(time.Millisecond))
	case heartbeatNotSilent:
		h.Skip(fmt.Sprintf("the stream was never silent long enough to expect a keep-alive: the silent call took %s, the server sent its response headers %s after the request%s, "+
			"and the open stream's longest silence was %s (less than half the call): a stream that opens when there is something to send has no silence to keep alive",
			s.call.Round(time.Millisecond), s.headers.Round(time.Millisecond), s.firstWhat(), s.longest.Round(time.Millisecond)))
	default:
		h.Failf("no SSE comment keep-alive during the %s the open stream stayed silent (%s to %s after the request; the call took %s; %d events, first %q)",
			s.longest.Round(time.Millisecond), s.from.Round(time.Millisecond), s.to.Round(time.Millisecond), s.call.Round(time.Millisecond), s.events, s.first)
	}
}

// silence is what a silent call's event stream carried, in time: offsets
// are from the request.
type silence struct {
	// call is the request to the last event (the response); headers the
	// request to the response headers; open the headers to the last event.
	call, headers, open time.Duration
	// longest is the longest span on the open stream in which nothing
	// (no event, no comment) arrived, from..to after the request.
	longest, from, to time.Duration
	comments, events  int
	// first is the first event as it was on the wire; firstAt its offset.
	first   string
	firstAt time.Duration
}

type heartbeatVerdict int

const (
	heartbeatMissing   heartbeatVerdict = iota // silent long enough, no comment
	heartbeatSeen                              // at least one comment
	heartbeatNotSilent                         // never silent long enough to judge
)

// measureSilence measures the stream of a call sent at sent whose headers
// arrived at opened: the silence that counts is on the open stream, from
// the headers or the last thing received to the next thing received (the
// last event is the response, which ends the watch).
func measureSilence(sent, opened time.Time, evs []clients.StreamEvent) silence {
	s := silence{headers: opened.Sub(sent), events: len(evs)}
	prev := opened
	for i, e := range evs {
		if i == 0 {
			s.first = strings.TrimSpace(string(e.Raw))
			s.firstAt = e.At.Sub(sent)
		}
		if e.IsComment {
			s.comments++
		}
		if gap := e.At.Sub(prev); gap > s.longest {
			s.longest, s.from, s.to = gap, prev.Sub(sent), e.At.Sub(sent)
		}
		prev = e.At
	}
	s.call, s.open = prev.Sub(sent), prev.Sub(opened)
	return s
}

// judge says whether the stream kept itself alive. A keep-alive is
// expected only where the open stream itself stayed silent for at least
// half the silent call (the manifest's silent role is declared silent for
// longer than the server's keep-alive interval, but a server that sends
// its headers with its first event never had a silent stream to keep
// alive): shorter, nothing is said of the keep-alive.
func (s silence) judge() heartbeatVerdict {
	switch {
	case s.comments > 0:
		return heartbeatSeen
	case s.longest*2 < s.call:
		return heartbeatNotSilent
	default:
		return heartbeatMissing
	}
}

// firstWhat names what came with the headers, for the SKIP reason.
func (s silence) firstWhat() string {
	if s.events == 0 {
		return ""
	}
	return fmt.Sprintf(" and its first event %s after the request (%s)", s.firstAt.Round(time.Millisecond), clip([]byte(s.first)))
}

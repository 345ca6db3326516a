package suites

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/reports"
)

var checkReissue = register(&Check{
	ID:    "RECONNECT-REISSUE",
	Title: "after a cut stream, a re-issued request with a new id succeeds and the tool list is unchanged",
	How: "Calls the slow role with the proxy set to cut its response stream right after the first progress, then re-issues " +
		"the call with a new id and token (as a client must) and expects a result; tools/list before and after must name " +
		"the same tools. No sentence binds the server here: the check is mcp-conform's reading (WARN at most).",
	Rules: merge(
		sameRule(Rule{Level: reports.Should, Spec: httpLegacy, Source: reports.SourceReading,
			Clause: "mcp-conform's reading: a client that lost its stream reconnects and re-issues; the server serves the re-issued request (the cut one is not a lock on the tool) and lists the same tools."},
			legacyVersions...),
		map[string]Rule{v20260728: {Level: reports.Should, Spec: "specification/2026-07-28/changelog.mdx", Source: reports.SourceReading,
			Clause: "\"A broken response stream loses the in-flight request; clients MUST re-issue it as a new request with a new request ID\" — so, in mcp-conform's reading, the server serves the re-issued request and lists the same tools."}},
	),
	Transports: []string{viaHTTP},
	Roles:      []string{"slow"},
})

var checkResume = register(&Check{
	ID:    "RECONNECT-RESUME",
	Title: "a Last-Event-ID resume replays only the disconnected stream, without duplicates",
	How: "In a 2025 session, runs two slow calls at once, disconnects the first after its first progress, and resumes it " +
		"with GET + Last-Event-ID after the retry interval the stream gave (else 200 ms; a 409 is retried). Every replayed message must belong to the first call, none may repeat an event " +
		"already received (FAIL). The second call is the uninterrupted control of the same role: when it succeeded and the " +
		"resumed call ended in an error, the disconnect was taken for a cancellation (SHOULD NOT: WARN), whatever a probe " +
		"says. A server that sends no event ids does not support resumption: SKIP.",
	Rules: sameRule(Rule{Level: reports.Must, Spec: httpLegacy,
		Clause: "The server MAY use this header to replay messages that would have been sent after the last event ID, on the stream that was disconnected, and to resume the stream from that point. The server MUST NOT replay messages that would have been delivered on a different stream. [...] Disconnection SHOULD NOT be interpreted as the client cancelling its request."},
		legacyVersions...),
	Transports: []string{viaHTTP},
	Roles:      []string{"slow"},
})

var checkResumeLive = register(&Check{
	ID:    "RECONNECT-RESUME-LIVE",
	Title: "a resumed stream goes on with live events and ends after the final response",
	How: "As RECONNECT-RESUME (resuming as a client does: after the stream's retry interval or a 200 ms backoff, again on HTTP 409); the resumed stream must then carry the first call's later progress and its response, and end. " +
		"A resumed call that ended in an error while the uninterrupted control call of the same role succeeded means the " +
		"disconnect was taken for a cancellation (SHOULD NOT): WARN.",
	Rules: merge(
		sameRule(Rule{Level: reports.Should, Spec: httpLegacy,
			Clause: "The SSE stream SHOULD eventually include a JSON-RPC response for the JSON-RPC request sent in the POST body. [...] After the JSON-RPC response has been sent, the server SHOULD terminate the SSE stream. [...] Disconnection SHOULD NOT be interpreted as the client cancelling its request."},
			v20251125),
		sameRule(Rule{Level: reports.Should, Spec: httpLegacy,
			Clause: "The SSE stream SHOULD eventually include JSON-RPC response for the JSON-RPC request sent in the POST body. [...] After the JSON-RPC response has been sent, the server SHOULD close the SSE stream. [...] Disconnection SHOULD NOT be interpreted as the client cancelling its request."},
			v20250618),
	),
	Transports: []string{viaHTTP},
	Roles:      []string{"slow"},
})

func registerHTTPReconnect() {
	ginkgo.Describe("RECONNECT", ginkgo.Label("area:reconnect"), func() {
		define(checkReissue, reissue)
		define(checkResume, func(h *H) { resume(h, false) })
		define(checkResumeLive, func(h *H) { resume(h, true) })
	})
}

func resume(h *H, live bool) {
	c := h.ConnectHTTP()
	if c.W.SessionID() == "" {
		h.Skip("the server uses no session: Last-Event-ID resumption is scoped to a session")
	}
	idA, tokA := jsonrpc.StringID("resume-a"), jsonrpc.StringID("resume-a-token")
	idB, tokB := jsonrpc.StringID("resume-b"), jsonrpc.StringID("resume-b-token")
	a := c.StartRole("slow", idA, tokA, nil)
	b := c.StartRole("slow", idB, tokB, nil)
	c.FirstProgress(a, tokA)
	// Both streams have events before the disconnect, so a server that
	// replays across streams has something to replay.
	c.FirstProgress(b, tokB)
	seen := map[string]bool{}
	last := ""
	wait := reissueBackoff
	for _, e := range a.StreamEvents() {
		if e.HasID {
			seen[e.ID] = true
			last = e.ID
		}
		if e.HasRetry {
			wait = time.Duration(e.Retry) * time.Millisecond
		}
	}
	if last == "" {
		h.Skip("the server sent no SSE event ids: it does not support resumption (allowed)")
	}
	a.Close()
	ctx, cancel := context.WithTimeout(h.Ctx(), h.Cfg().CallTimeout)
	defer cancel()
	g := resumeGET(ctx, h, c, last, wait)
	if g.Status() == http.StatusMethodNotAllowed || g.Status() == http.StatusNotFound {
		h.Skip(fmt.Sprintf("the server answered the resumption with HTTP %d: it does not replay (allowed)", g.Status()))
	}
	// The second call started after the first: once it has completed, the
	// first has too, and a live resumed stream has carried its response.
	// It is also the uninterrupted control call of the same role.
	control := c.Await(b, "the second call")
	_, respOnGET := c.WaitEvent(g, h.Cfg().OpTimeout, isReplyTo(idA))
	ended := waitEnded(ctx, g, h.Cfg().OpTimeout)
	g.Close()
	if live && respOnGET && !ended {
		h.Failf("the resumed stream carried the response but did not end within %s", h.Cfg().OpTimeout)
	}
	var gotResponse bool
	var resumed []byte
	for _, e := range g.StreamEvents() {
		if e.HasID && seen[e.ID] && !live {
			h.Failf("the resumed stream repeated event %q, already received before the disconnect", e.ID)
		}
		if !e.HasData || e.Data == "" {
			continue
		}
		env := jsonrpc.Parse([]byte(e.Data))
		switch {
		case env.Kind.IsReply() && env.ID == idA:
			gotResponse = true
			resumed = []byte(e.Data)
		case env.ID == idA || env.ProgressToken == tokA:
		case live:
			// RECONNECT-RESUME judges what else the stream carries.
		case env.ID == idB || env.ProgressToken == tokB:
			h.Failf("the resumed stream replayed a message of another stream: %s", e.Data)
		default:
			if env.Kind != jsonrpc.Notification {
				h.Failf("the resumed stream carried a message unrelated to the resumed request: %s", e.Data)
			}
		}
	}
	// Judged against the control: a resumed call that ended in an error
	// while the identical uninterrupted call succeeded was cancelled by
	// the disconnect (SHOULD NOT), whatever a probe would say.
	if gotResponse && callSucceeded(control.Raw) && !callSucceeded(resumed) {
		h.Warnf("the disconnect was treated as a cancellation: the resumed call ended in an error (%s) while the identical uninterrupted control call succeeded (%s)", clip(resumed), clip(control.Raw))
	}
	if live && !gotResponse {
		h.Failf("the resumed stream ended without the first call's response (%d events: %s)", len(g.StreamEvents()), describeEvents(g.StreamEvents()))
	}
}

// resumeGET reconnects as a client does after its stream was cut: it
// waits the retry interval the server gave on the stream ("The client MUST
// respect the retry field", 2025-11-25) or, without one, the first step of
// a client's backoff, then sends GET + Last-Event-ID. A 409 Conflict (the
// server has not yet seen the old stream close: go-sdk's "stream ID
// conflicts with ongoing stream") is retried with doubled waits, three
// times at most: resuming within a millisecond of the close judged how fast
// a server notices a dead connection, which no sentence binds.
func resumeGET(ctx context.Context, h *H, c *HConn, last string, wait time.Duration) *clients.HTTPCall {
	if wait > maxResumeWait {
		wait = maxResumeWait
	}
	for attempt := 0; ; attempt++ {
		h.Sleep(wait)
		g, err := c.W.OpenGET(ctx, last)
		if err != nil {
			h.Failf("GET with Last-Event-ID %q failed: %v", last, err)
		}
		if g.Status() != http.StatusConflict || attempt == 2 {
			return g
		}
		c.Proxy.Transcript().Note("GET with Last-Event-ID %q: HTTP 409 (the server has not yet seen the old stream close); again in %s", last, 2*wait)
		g.Close()
		wait *= 2
	}
}

// maxResumeWait caps the wait before a resumption, whatever retry field
// the server sent, so that a run stays short.
const maxResumeWait = 2 * time.Second

// callSucceeded reports whether raw is a tools/call result that is not a
// tool error (isError).
func callSucceeded(raw []byte) bool {
	env := jsonrpc.Parse(raw)
	if env.Kind != jsonrpc.Response {
		return false
	}
	var res struct {
		Result struct {
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	return json.Unmarshal(raw, &res) == nil && !res.Result.IsError
}

func describeEvents(evs []clients.StreamEvent) string {
	s := ""
	for i, e := range evs {
		if i > 0 {
			s += "; "
		}
		if i == 8 {
			return s + "…"
		}
		// The event is named, not quoted clipped: the transcript holds
		// the whole message.
		what := "no data"
		if e.HasData && e.Data != "" {
			env := jsonrpc.Parse([]byte(e.Data))
			switch {
			case env.Method != "":
				what = env.Method
			case env.Kind.IsReply():
				what = "the answer to " + env.ID.String()
			default:
				what = "not JSON-RPC"
			}
		}
		s += fmt.Sprintf("id=%q %s", e.ID, what)
	}
	return s
}

// reissueBackoff is the pause before re-issuing a request whose stream was
// cut: the first step of a client's reconnect backoff.
const reissueBackoff = 200 * time.Millisecond

// listedToolNames lists the names tools/list returns, sorted.
func listedToolNames(h *H, c *HConn) []string {
	ctx, cancel := h.Op()
	defer cancel()
	m, err := c.W.Call(ctx, "tools/list", nil)
	if err != nil || m.Env.Kind != jsonrpc.Response {
		h.FailServer("tools/list failed: %v %s%s", err, m.Raw, c.ExitHint())
	}
	var res struct {
		Result struct {
			Tools []struct{ Name string } `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(m.Raw, &res); err != nil {
		h.Failf("tools/list answered %s", m.Raw)
	}
	var names []string
	for _, t := range res.Result.Tools {
		names = append(names, t.Name)
	}
	slices.Sort(names)
	return names
}

func reissue(h *H) {
	token := jsonrpc.StringID("reissue-token-1")
	c := h.ConnectHTTP(faultproxy.Rule{
		Name:  "cut-after-first-progress",
		Match: faultproxy.Match{Dir: faultproxy.ServerToClient, Method: "notifications/progress", ProgressToken: token},
		Times: 1,
		Fault: faultproxy.Cut{Deliver: true},
	})
	before := listedToolNames(h, c)
	call := c.StartRole("slow", jsonrpc.StringID("reissue-1"), token, nil)
	c.FirstProgress(call, token)
	ctx, cancel := h.Op()
	defer cancel()
	if !waitEnded(ctx, call, h.Cfg().OpTimeout) {
		h.Errorf("the proxy's cut did not end the stream within %s", h.Cfg().OpTimeout)
	}
	if m, ok := call.Response(); ok {
		h.Errorf("the cut stream still carried the response %s: the cut came too late", m.Raw)
	}
	// A client reconnects after a backoff (the reliable client's first step
	// is up to 250 ms); the server has by then seen the disconnect.
	t := time.NewTimer(reissueBackoff)
	select {
	case <-t.C:
	case <-h.Ctx().Done():
		t.Stop()
		h.Errorf("interrupted")
	}
	again := c.StartRole("slow", jsonrpc.StringID("reissue-2"), jsonrpc.StringID("reissue-token-2"), nil)
	m := c.Await(again, "the re-issued call")
	var res struct {
		Result struct {
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	_ = json.Unmarshal(m.Raw, &res)
	if m.Env.Kind != jsonrpc.Response || res.Result.IsError {
		h.Failf("the re-issued request failed: %s", m.Raw)
	}
	after := listedToolNames(h, c)
	if !slices.Equal(before, after) {
		h.Failf("tools/list changed across the reconnect: %v, then %v", before, after)
	}
}

package suites

import (
	"context"
	"fmt"
	"net/http"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/reports"
)

var (
	checkResume = register(&Check{
		ID:    "RECONNECT-RESUME",
		Title: "a Last-Event-ID resume replays only the disconnected stream, without duplicates",
		How: "In a 2025 session, runs two slow calls at once, disconnects the first after its first progress, and resumes it " +
			"with GET + Last-Event-ID. Every replayed message must belong to the first call, none may repeat an event " +
			"already received. A server that sends no event ids does not support resumption: SKIP.",
		Rules: sameRule(Rule{Level: reports.Must, Spec: httpLegacy,
			Clause: "The server MAY use this header to replay messages that would have been sent after the last event ID, on the stream that was disconnected [...] The server MUST NOT replay messages that would have been delivered on a different stream."},
			legacyVersions...),
		Transports: []string{"http"},
		Roles:      []string{"slow"},
	})
	checkResumeLive = register(&Check{
		ID:    "RECONNECT-RESUME-LIVE",
		Title: "a resumed stream goes on with live events and ends after the final response",
		How:   "As RECONNECT-RESUME; the resumed stream must then carry the first call's later progress and its response, and end.",
		Rules: sameRule(Rule{Level: reports.Should, Spec: httpLegacy,
			Clause: "[The server may] resume the stream from that point. The SSE stream SHOULD eventually include a JSON-RPC response for the JSON-RPC request sent in the POST body. After the JSON-RPC response has been sent, the server SHOULD terminate the SSE stream."},
			legacyVersions...),
		Transports: []string{"http"},
		Roles:      []string{"slow"},
	})
)

func registerHTTPReconnect() {
	ginkgo.Describe("RECONNECT", ginkgo.Label("area:reconnect"), func() {
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
	c.firstProgress(a, tokA)
	// Both streams have events before the disconnect, so a server that
	// replays across streams has something to replay.
	c.firstProgress(b, tokB)
	seen := map[string]bool{}
	last := ""
	for _, e := range a.StreamEvents() {
		if e.HasID {
			seen[e.ID] = true
			last = e.ID
		}
	}
	if last == "" {
		h.Skip("the server sent no SSE event ids: it does not support resumption (allowed)")
	}
	a.Close()
	ctx, cancel := context.WithTimeout(h.ctx, h.cfg.CallTimeout)
	defer cancel()
	g, err := c.W.OpenGET(ctx, last)
	if err != nil {
		h.Failf("GET with Last-Event-ID %q failed: %v", last, err)
	}
	if g.Status() == http.StatusMethodNotAllowed || g.Status() == http.StatusNotFound {
		h.Skip(fmt.Sprintf("the server answered the resumption with HTTP %d: it does not replay (allowed)", g.Status()))
	}
	// The second call started after the first: once it has completed, the
	// first has too, and a live resumed stream has carried its response.
	c.Await(b, "the second call")
	_, respOnGET := c.WaitEvent(g, h.cfg.OpTimeout, isReplyTo(idA))
	ended := waitEnded(ctx, g, h.cfg.OpTimeout)
	g.Close()
	if live && respOnGET && !ended {
		h.Failf("the resumed stream carried the response but did not end within %s", h.cfg.OpTimeout)
	}
	var gotResponse bool
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
	if live && !gotResponse {
		h.Failf("the resumed stream ended without the first call's response (%d events: %s)", len(g.StreamEvents()), describeEvents(g.StreamEvents()))
	}
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
		s += fmt.Sprintf("id=%q data=%.80s", e.ID, e.Data)
	}
	return s
}

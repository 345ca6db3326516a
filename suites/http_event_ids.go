package suites

// HTTP-EVENT-IDS-UNIQUE's scenario (registered in http_modern.go): every
// kind of stream one 2025 session has, each event id judged against all
// the others.
//
//	harness ──GET (standalone)──────────────▶ server   stream G
//	harness ──POST tools/call slow (a)──────▶ server   stream A
//	harness ──POST tools/call slow (b)──────▶ server   stream B
//	harness ──POST tools/list───────────────▶ server   stream L
//	        ◀── A: first progress ── harness closes A
//	harness ──GET + Last-Event-ID (A's last)─▶ server  stream R (A resumed)
//
// An id must name one event in the session: the only repeat allowed is an
// event R delivers again with the same id and the same data (the client
// may have received it on A just before it closed A). That is one event,
// not an id naming two; whether R may replay it at all (an event of
// another stream, say) is RECONNECT-RESUME's judgement.

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

func eventIDsUnique(h *H) {
	m := connectMsg(h).(*httpMsg)
	c := m.HConn
	idA, tokA := jsonrpc.StringID(unique("ids-a")), jsonrpc.StringID(unique("ids-tok-a"))
	a := c.StartRole("slow", idA, tokA, nil)
	b := c.StartRole("slow", jsonrpc.StringID(unique("ids-b")), jsonrpc.StringID(unique("ids-tok-b")), nil)
	ctx, cancel := context.WithTimeout(h.Ctx(), h.Cfg().CallTimeout)
	defer cancel()
	list, err := c.W.Start(ctx, jsonrpc.StringID(unique("ids-list")), "tools/list", nil)
	if err != nil {
		h.FailServer("tools/list: %v%s", err, c.ExitHint())
	}
	streams := []*clients.HTTPCall{a, b, list}
	if m.get != nil {
		streams = append(streams, m.get)
	}
	resumed, closed := resumeForIDs(ctx, h, c, a, idA, tokA)
	c.Await(b, "the second slow call")
	c.Await(list, "tools/list")
	switch {
	case !closed:
		c.Await(a, "the first slow call")
	case resumed != nil:
		// The resumed stream goes on with the call's later events when the
		// server resumes live (RECONNECT-RESUME-LIVE judges whether it does).
		c.WaitEvent(resumed, h.Cfg().OpTimeout, isReplyTo(idA))
		resumed.Close()
		streams = append(streams, resumed)
	}
	type first struct{ stream, data string }
	seen := map[string]first{}
	var dup []string
	n, replays := 0, 0
	for _, st := range streams {
		for _, e := range st.Events() {
			if !e.HasID || e.ID == "" {
				continue
			}
			n++
			f, ok := seen[e.ID]
			if !ok {
				seen[e.ID] = first{st.Stream(), e.Data}
				continue
			}
			if st == resumed && f.data == e.Data {
				replays++
				continue
			}
			dup = append(dup, fmt.Sprintf("%q on %s and %s", e.ID, f.stream, st.Stream()))
		}
	}
	if n == 0 {
		h.Skip("the server sent no SSE event ids on these streams: there are none to be unique")
	}
	if len(dup) > 0 {
		if len(dup) > 5 {
			dup = append(dup[:5], fmt.Sprintf("and %d more", len(dup)-5))
		}
		h.Failf("%d event id(s) repeated across the session's streams: %s", len(dup), strings.Join(dup, "; "))
	}
	h.Notef("%d event ids on %d streams, all distinct (%d events delivered again by the resumed stream, with their own id and data)", n, len(streams), replays)
}

// resumeForIDs closes the slow call a after its first progress and resumes
// its stream with GET + Last-Event-ID, as a client does (resumeGET). It
// returns the resumed stream, or nil when there is none to judge: no
// session, no event stream, no id on it, or a server that declines to
// resume (any status but 200 with an event stream; resuming is a MAY);
// closed reports whether a was closed.
func resumeForIDs(ctx context.Context, h *H, c *HConn, a *clients.HTTPCall, id, token jsonrpc.ID) (resumed *clients.HTTPCall, closed bool) {
	tr := c.Proxy.Transcript()
	if c.W.SessionID() == "" || !a.IsSSE() {
		tr.Note("no resumed stream: the session has no id or the call was not answered with an event stream")
		return nil, false
	}
	e, ok := c.WaitEvent(a, h.Cfg().CallTimeout, func(e clients.StreamEvent) bool {
		return isProgressFor(token)(e) || isReplyTo(id)(e)
	})
	if !ok || isReplyTo(id)(e) {
		tr.Note("no resumed stream: the first slow call sent no progress before its response")
		return nil, false
	}
	last, wait := "", reissueBackoff
	for _, e := range a.StreamEvents() {
		if e.HasID && e.ID != "" {
			last = e.ID
		}
		if e.HasRetry {
			wait = time.Duration(e.Retry) * time.Millisecond
		}
	}
	if last == "" {
		tr.Note("no resumed stream: the first slow call's stream carries no event id")
		return nil, false
	}
	a.Close()
	g := resumeGET(ctx, h, c, last, wait)
	if g.Status() != http.StatusOK || !g.IsSSE() {
		tr.Note("no resumed stream: GET with Last-Event-ID %q got HTTP %d (the server does not resume)", last, g.Status())
		g.Close()
		return nil, true
	}
	return g, true
}

package harness

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/sse"
)

// A check's time goes to two places: the target working (a request sent,
// its answer not yet back) and the harness's own waits (a window in which
// nothing may come, a backoff, a timer). Against a real server the slow
// role's duration dominates, and a user asks which of the two a slow run
// spent its time on; targetWait answers from the transcripts:
//
//	conn 1:  ──[req 1 ······ resp 1]────────[req 3 ·· resp 3]──
//	conn 2:  ───────[req 2 ······················· (no answer) · last entry]
//	waited:  ──[████████████████████████████████████████████]─── the union
//
// A request never answered counts until its connection's last recorded
// message. A bounded transcript (a flood's) that let its oldest entries go
// counts only what it kept.

// waitSpan is one request's time on the target.
type waitSpan struct{ from, to time.Time }

// targetWait is how long, within the check, at least one request of its
// clients was waiting on the target: from the request crossing the proxy
// to its response crossing back, on any of the check's connections.
func (h *H) targetWait() time.Duration {
	var spans []waitSpan
	for _, c := range h.conns {
		spans = append(spans, requestSpans(c.Transcript())...)
	}
	for _, c := range h.hconns {
		spans = append(spans, requestSpans(c.Proxy.Transcript())...)
	}
	return spanUnion(spans)
}

// requestSpans are the spans of the requests of one transcript.
func requestSpans(tr *faultproxy.Transcript) []waitSpan {
	start := tr.Start()
	open := map[jsonrpc.ID]time.Time{}
	var (
		out  []waitSpan
		last time.Duration
	)
	for _, e := range tr.Entries() {
		if e.Kind != faultproxy.EntryMessage {
			continue
		}
		last = e.At
		env := jsonrpc.Parse(messageBytes(e))
		switch {
		case env.ID.IsZero():
		case e.Dir == faultproxy.ClientToServer && env.Kind == jsonrpc.Request:
			if _, ok := open[env.ID]; !ok {
				open[env.ID] = start.Add(e.At)
			}
		case e.Dir == faultproxy.ServerToClient && env.Kind.IsReply():
			if from, ok := open[env.ID]; ok {
				out = append(out, waitSpan{from, start.Add(e.At)})
				delete(open, env.ID)
			}
		}
	}
	for _, from := range open {
		if to := start.Add(last); to.After(from) {
			out = append(out, waitSpan{from, to})
		}
	}
	return out
}

// messageBytes is the JSON-RPC message an entry carries: its bytes, or the
// data of the SSE event it is (Streamable HTTP); nil for an SSE event that
// carries none (a comment, the priming event's empty data). SCHEMA-VALID's
// walk and targetWait read messages through it.
func messageBytes(e faultproxy.Entry) []byte {
	if json.Valid(e.Raw) || e.Stream == "" || strings.HasPrefix(e.Stream, "WS#") {
		return e.Raw
	}
	ev, err := sse.NewReader(bytes.NewReader(e.Raw), sse.Options{Lenient: true}).Next()
	if err != nil || ev.IsComment || !ev.HasData || strings.TrimSpace(ev.Data) == "" {
		return nil
	}
	return []byte(ev.Data)
}

// spanUnion is the total length of the union of spans.
func spanUnion(spans []waitSpan) time.Duration {
	slices.SortFunc(spans, func(a, b waitSpan) int { return a.from.Compare(b.from) })
	var (
		total time.Duration
		cur   waitSpan
		have  bool
	)
	for _, s := range spans {
		switch {
		case !have:
			cur, have = s, true
		case !s.from.After(cur.to):
			if s.to.After(cur.to) {
				cur.to = s.to
			}
		default:
			total += cur.to.Sub(cur.from)
			cur = s
		}
	}
	if have {
		total += cur.to.Sub(cur.from)
	}
	return total
}

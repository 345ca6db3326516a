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
// spent its time on; H.transcript answers from the transcripts:
//
//	conn 1:  ──[req 1 ······ resp 1]────────[req 3 ·· resp 3]──
//	conn 2:  ───────[req 2 ······················· (no answer) · last entry]
//	waited:  ──[████████████████████████████████████████████]─── the union
//
// A request never answered counts until its connection's last recorded
// message. H.transcript computes it in its pass over the entries. A bounded transcript (a flood's) that let its oldest entries go
// counts only what it kept.

// waitSpan is one request's time on the target.
type waitSpan struct{ from, to time.Time }

// spanWalk collects the request spans of one transcript, an entry at a
// time, in the transcript pass that also feeds SCHEMA-VALID (H.transcript),
// so that each message is parsed once for both.
type spanWalk struct {
	start time.Time
	open  map[jsonrpc.ID]time.Time
	out   []waitSpan
	last  time.Duration
}

func newSpanWalk(tr *faultproxy.Transcript) *spanWalk {
	return &spanWalk{start: tr.Start(), open: map[jsonrpc.ID]time.Time{}}
}

// see takes one message entry and its parsed message (the zero Envelope
// for an entry that carries none: an SSE comment).
func (w *spanWalk) see(e faultproxy.Entry, env jsonrpc.Envelope) {
	w.last = e.At
	switch {
	case env.ID.IsZero():
	case e.Dir == faultproxy.ClientToServer && env.Kind == jsonrpc.Request:
		if _, ok := w.open[env.ID]; !ok {
			w.open[env.ID] = w.start.Add(e.At)
		}
	case e.Dir == faultproxy.ServerToClient && env.Kind.IsReply():
		if from, ok := w.open[env.ID]; ok {
			w.out = append(w.out, waitSpan{from, w.start.Add(e.At)})
			delete(w.open, env.ID)
		}
	}
}

// spans are the spans seen, a request still unanswered counting until the
// last message.
func (w *spanWalk) spans() []waitSpan {
	out := w.out
	for _, from := range w.open {
		if to := w.start.Add(w.last); to.After(from) {
			out = append(out, waitSpan{from, to})
		}
	}
	return out
}

// requestSpans are the spans of the requests of one transcript.
func requestSpans(tr *faultproxy.Transcript) []waitSpan {
	w := newSpanWalk(tr)
	for _, e := range tr.Entries() {
		if e.Kind == faultproxy.EntryMessage {
			w.see(e, parseMessage(messageBytes(e)))
		}
	}
	return w.spans()
}

// parseMessage parses an entry's message (messageBytes); nil, none, is
// the zero Envelope.
func parseMessage(raw []byte) jsonrpc.Envelope {
	if raw == nil {
		return jsonrpc.Envelope{}
	}
	return jsonrpc.Parse(raw)
}

// messageBytes is the JSON-RPC message an entry carries: its bytes, or the
// data of the SSE event it is (Streamable HTTP); nil for an SSE event that
// carries none (a comment, the priming event's empty data). SCHEMA-VALID's
// walk and the time-on-target walk read messages through it.
func messageBytes(e faultproxy.Entry) []byte {
	if e.Stream == "" || strings.HasPrefix(e.Stream, "WS#") || json.Valid(e.Raw) {
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

package clients

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

func TestMsgLogEviction(t *testing.T) {
	for _, tc := range []struct {
		max, add                int
		wantHeld, wantEvicted   int
		wantFirstSeq, wantCount int
	}{
		{max: 8, add: 5, wantHeld: 5, wantEvicted: 0, wantFirstSeq: 0, wantCount: 5},
		{max: 8, add: 8, wantHeld: 8, wantEvicted: 0, wantFirstSeq: 0, wantCount: 8},
		{max: 8, add: 9, wantHeld: 7, wantEvicted: 2, wantFirstSeq: 2, wantCount: 9},
		{max: 8, add: 100, wantHeld: 8, wantEvicted: 92, wantFirstSeq: 92, wantCount: 100},
		{max: 1, add: 3, wantHeld: 1, wantEvicted: 2, wantFirstSeq: 2, wantCount: 3},
		{max: 0, add: 50, wantHeld: 50, wantEvicted: 0, wantFirstSeq: 0, wantCount: 50}, // 0: unbounded
	} {
		t.Run(fmt.Sprintf("max%d-add%d", tc.max, tc.add), func(t *testing.T) {
			l := newMsgLog(tc.max)
			var views [][]Message
			for i := range tc.add {
				m := l.add(Message{Raw: []byte(fmt.Sprint(i))})
				if m.Seq != i {
					t.Fatalf("message %d got Seq %d", i, m.Seq)
				}
				v, _ := l.view(0)
				views = append(views, v)
			}
			held := l.since(0)
			if len(held) != tc.wantHeld || l.evicted != tc.wantEvicted || l.count() != tc.wantCount {
				t.Fatalf("held %d, evicted %d, count %d; want %d, %d, %d", len(held), l.evicted, l.count(), tc.wantHeld, tc.wantEvicted, tc.wantCount)
			}
			for i, m := range held {
				if m.Seq != tc.wantFirstSeq+i || string(m.Raw) != fmt.Sprint(m.Seq) {
					t.Fatalf("held[%d] = Seq %d %q", i, m.Seq, m.Raw)
				}
			}
			// A wait from an evicted Seq resumes at the oldest held one.
			if v, start := l.view(0); start != tc.wantFirstSeq || (len(v) > 0 && v[0].Seq != start) {
				t.Errorf("view(0) starts at %d, want %d", start, tc.wantFirstSeq)
			}
			if v, start := l.view(tc.add); v != nil || start != tc.add {
				t.Errorf("view(count) = %d messages from %d", len(v), start)
			}
			// Earlier views are unchanged by later appends and evictions.
			for i, v := range views {
				for _, m := range v {
					if string(m.Raw) != fmt.Sprint(m.Seq) {
						t.Fatalf("view %d changed: Seq %d now %q", i, m.Seq, m.Raw)
					}
				}
			}
		})
	}
}

const floodN = 10000

// TestWireFlood: a server that floods the client with notifications keeps
// the log within MaxMessages, while Seq, Len, WaitFor and awaiting a
// response by id keep working.
func TestWireFlood(t *testing.T) {
	w, p := newPair(t, WireOptions{MaxMessages: 100})
	ctx := testCtx(t)
	wait := p.run(func(p *peer) error {
		r, err := p.expect("tools/call")
		if err != nil {
			return err
		}
		for i := range floodN {
			if err := p.send(`{"jsonrpc":"2.0","method":"notifications/message","params":{"n":%d}}`, i); err != nil {
				return err
			}
		}
		return p.reply(r, `{"content":[]}`)
	})
	pending, err := w.Start(ctx, jsonrpc.StringID("flood"), "tools/call", map[string]any{"name": "x"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := pending.Wait(ctx)
	if err != nil || m.Env.Kind != jsonrpc.Response {
		t.Fatalf("response after the flood: %v %s", err, m.Raw)
	}
	wait()
	if m.Seq != floodN || w.Len() != floodN+1 {
		t.Errorf("response Seq %d, Len %d; want %d, %d", m.Seq, w.Len(), floodN, floodN+1)
	}
	held := w.Messages()
	if len(held) > 100 || len(held) == 0 || held[len(held)-1].Seq != floodN {
		t.Fatalf("held %d messages, last Seq %d", len(held), held[len(held)-1].Seq)
	}
	if w.Evicted() != floodN+1-len(held) {
		t.Errorf("Evicted %d, want %d", w.Evicted(), floodN+1-len(held))
	}
	first, err := w.WaitFor(ctx, 0, func(Message) bool { return true })
	if err != nil || first.Seq != held[0].Seq {
		t.Errorf("WaitFor from Seq 0: %v, Seq %d; want the oldest held, %d", err, first.Seq, held[0].Seq)
	}
	last, err := w.WaitFor(ctx, 0, func(m Message) bool { return m.Env.ID == jsonrpc.StringID("flood") })
	if err != nil || last.Seq != floodN {
		t.Errorf("WaitFor the response: %v, Seq %d", err, last.Seq)
	}
	short, cancel := context.WithTimeout(ctx, 20e6)
	defer cancel()
	if _, err := w.WaitFor(short, w.Len(), func(Message) bool { return true }); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WaitFor from Len: %v, want a timeout", err)
	}
}

// TestHTTPWireFlood: the same over Streamable HTTP, one SSE stream
// carrying a flood of notifications before the response.
func TestHTTPWireFlood(t *testing.T) {
	const n = 3000
	w := serve(t, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		req, err := readReq(r)
		if err != nil {
			http.Error(rw, err.Error(), http.StatusBadRequest)
			return
		}
		s := startSSE(rw)
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"n\":%d}}\n\n", i)
		}
		s.raw(b.String())
		s.data("", rpcResult(req.ID, `{"content":[]}`))
	}), HTTPOptions{MaxMessages: 64})
	ctx := testCtx(t)
	call, err := w.Start(ctx, jsonrpc.StringID("flood"), "tools/call", map[string]any{"name": "x"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := call.Wait(ctx)
	if err != nil || m.Env.Kind != jsonrpc.Response {
		t.Fatalf("response after the flood: %v %s", err, m.Raw)
	}
	<-call.Ended()
	// The stream's own logs are bounded too.
	evs, msgs := call.StreamEvents(), call.Messages()
	if len(evs) > 64 || len(msgs) > 64 || call.EventsEvicted() != n+1-len(evs) {
		t.Errorf("stream holds %d events, %d messages, evicted %d", len(evs), len(msgs), call.EventsEvicted())
	}
	if len(msgs) == 0 || msgs[len(msgs)-1].Seq != n || evs[len(evs)-1].Seq != n {
		t.Errorf("the stream's last message is not the response")
	}
	if e, err := call.WaitEvent(ctx, 0, func(e StreamEvent) bool { return e.Seq >= 0 }); err != nil || e.Seq != evs[0].Seq {
		t.Errorf("WaitEvent from 0: %v, Seq %d; want the oldest held, %d", err, e.Seq, evs[0].Seq)
	}
	if w.Len() != n+1 || m.Seq != n {
		t.Errorf("Len %d, response Seq %d; want %d, %d", w.Len(), m.Seq, n+1, n)
	}
	held := w.Messages()
	if len(held) > 64 || held[len(held)-1].Seq != n || w.Evicted() != n+1-len(held) {
		t.Errorf("held %d (last Seq %d), evicted %d", len(held), held[len(held)-1].Seq, w.Evicted())
	}
	got, err := w.WaitFor(ctx, 0, func(m Message) bool { return m.Env.Kind == jsonrpc.Response })
	if err != nil || got.Seq != n {
		t.Errorf("WaitFor the response: %v, Seq %d", err, got.Seq)
	}
}

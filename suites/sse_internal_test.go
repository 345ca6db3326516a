package suites

import (
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/sse"
)

// TestHeartbeatSilence: the silence SSE-HEARTBEAT judges is on the open
// stream (from its headers or the last thing received), not from the
// headers to the end; a stream that opened with its first event was never
// silent and is not judged.
func TestHeartbeatSilence(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	msg := func(ms int) clients.StreamEvent {
		return clients.StreamEvent{Event: sse.Event{Raw: []byte("event: message\ndata: {}"), HasData: true, Data: "{}"}, At: at(ms), Seq: 0}
	}
	comment := func(ms int) clients.StreamEvent {
		return clients.StreamEvent{Event: sse.Event{Raw: []byte(": keep-alive"), IsComment: true}, At: at(ms), Seq: -1}
	}
	prime := func(ms int) clients.StreamEvent {
		return clients.StreamEvent{Event: sse.Event{Raw: []byte("event: prime\nid: a_0\ndata:")}, At: at(ms), Seq: -1}
	}
	for _, tc := range []struct {
		name    string
		headers int
		evs     []clients.StreamEvent
		want    heartbeatVerdict
		longest time.Duration
	}{
		// go-sdk 2025-06-18/2026: headers with the response after 3 s.
		{"headers with the first event", 3000, []clients.StreamEvent{msg(3001)}, heartbeatNotSilent, time.Millisecond},
		// go-sdk 2025-11-25: a priming event, then 3 s of nothing.
		{"primed, then silent", 5, []clients.StreamEvent{prime(6), msg(3010)}, heartbeatMissing, 3004 * time.Millisecond},
		// Headers at once, then silent until the response.
		{"open and silent", 2, []clients.StreamEvent{msg(1000)}, heartbeatMissing, 998 * time.Millisecond},
		{"keep-alives", 2, []clients.StreamEvent{comment(200), comment(400), comment(600), comment(800), msg(1000)}, heartbeatSeen, 200 * time.Millisecond},
		// Headers late (after 2.5 s of a 3 s call): half a second of silence
		// says nothing of a keep-alive interval.
		{"late headers, short silence", 2500, []clients.StreamEvent{msg(3000)}, heartbeatNotSilent, 500 * time.Millisecond},
		// Headers after 1 s, then 2 s of nothing: silent for most of the call.
		{"late headers, long silence", 1000, []clients.StreamEvent{msg(3000)}, heartbeatMissing, 2000 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := measureSilence(t0, at(tc.headers), tc.evs)
			if got := s.judge(); got != tc.want {
				t.Errorf("judge = %d, want %d (%+v)", got, tc.want, s)
			}
			if s.longest != tc.longest {
				t.Errorf("longest silence = %s, want %s", s.longest, tc.longest)
			}
		})
	}
}

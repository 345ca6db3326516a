package harness

import (
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/faultproxy"
)

// TestRequestSpans: a request waits from its crossing to its response's;
// an unanswered one until the connection's last message; notifications,
// responses to nothing and the server's own requests wait for nothing; an
// SSE event's data is read as the message.
func TestRequestSpans(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	tr := faultproxy.NewTranscript(nil)
	add := func(at int, dir faultproxy.Direction, stream, raw string) {
		tr.Add(faultproxy.Entry{At: ms(at), Kind: faultproxy.EntryMessage, Dir: dir, Stream: stream, Raw: []byte(raw)})
	}
	c2s, s2c := faultproxy.ClientToServer, faultproxy.ServerToClient
	add(10, c2s, "", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`)
	add(20, s2c, "", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`)
	add(30, c2s, "", `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	add(40, s2c, "", `{"jsonrpc":"2.0","id":2,"result":{}}`)
	add(110, s2c, "POST#1", "id: 7\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
	add(120, s2c, "", `{"jsonrpc":"2.0","id":"s1","method":"roots/list"}`)
	add(130, c2s, "", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`)
	add(200, c2s, "", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{}}`)
	add(260, s2c, "", `{"jsonrpc":"2.0","id":99,"result":{}}`)
	spans := requestSpans(tr)
	if len(spans) != 3 {
		t.Fatalf("%d spans, want 3 (ids 1, 2 and the unanswered 3): %v", len(spans), spans)
	}
	// 1: 10–110, 2: 30–40 (inside it), 3: 200–260 (the last message).
	if got, want := spanUnion(spans), ms(100)+ms(60); got != want {
		t.Errorf("union %s, want %s", got, want)
	}
}

func TestSpanUnion(t *testing.T) {
	at := time.Unix(0, 0)
	s := func(a, b int) waitSpan {
		return waitSpan{at.Add(time.Duration(a) * time.Millisecond), at.Add(time.Duration(b) * time.Millisecond)}
	}
	for _, tc := range []struct {
		name  string
		spans []waitSpan
		want  time.Duration
	}{
		{"none", nil, 0},
		{"one", []waitSpan{s(0, 10)}, 10 * time.Millisecond},
		{"disjoint", []waitSpan{s(20, 30), s(0, 10)}, 20 * time.Millisecond},
		{"overlapping", []waitSpan{s(0, 10), s(5, 15)}, 15 * time.Millisecond},
		{"nested", []waitSpan{s(0, 30), s(5, 10)}, 30 * time.Millisecond},
		{"touching", []waitSpan{s(0, 10), s(10, 20)}, 20 * time.Millisecond},
	} {
		if got := spanUnion(tc.spans); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

package suites

import (
	"net/http"
	"testing"
)

// TestFirstJSONReadsTheReply holds firstJSON to the answer of a raw POST:
// on an event stream a request or notification the server sends first does
// not stand for the reply.
func TestFirstJSONReadsTheReply(t *testing.T) {
	sse := http.Header{"Content-Type": {"text/event-stream"}}
	for _, tc := range []struct {
		name   string
		header http.Header
		body   string
		want   string
	}{
		{"JSON body", http.Header{"Content-Type": {"application/json"}}, `{"jsonrpc":"2.0","id":1,"result":{}}`, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"reply first", sse, "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n", `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"priming event, then a server request, then the reply", sse,
			"id: 0\ndata:\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"roots/list\"}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32602,\"message\":\"x\"}}\n\n",
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"x"}}`},
		{"a notification and no reply: the first data", sse,
			"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\r\n\r\n",
			`{"jsonrpc":"2.0","method":"notifications/message"}`},
		{"no data at all: the body", sse, ": comment\n\n", ": comment\n\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := string(firstJSON(&http.Response{Header: tc.header}, []byte(tc.body)))
			if got != tc.want {
				t.Fatalf("firstJSON = %q, want %q", got, tc.want)
			}
		})
	}
}

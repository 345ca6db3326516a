package suites

import (
	"net/http"
	"strings"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// replyJSON returns the JSON-RPC text of the answer to request id in an
// HTTP answer: the body, or the data of the SSE event that replies to id
// (a server may send other messages first on the request's stream, a
// request of its own among them); the first event's data when none does.
func replyJSON(resp *http.Response, body []byte, id jsonrpc.ID) []byte {
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return body
	}
	for _, line := range strings.Split(string(body), "\n") {
		d, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "data:")
		if !ok || strings.TrimSpace(d) == "" {
			continue
		}
		d = strings.TrimPrefix(d, " ")
		if env := jsonrpc.Parse([]byte(d)); env.Kind.IsReply() && env.ID == id {
			return []byte(d)
		}
	}
	return firstJSON(resp, body)
}

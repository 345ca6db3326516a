// Package benchwire holds the bytes and the wire steps the proxy
// benchmarks share: faultproxy's Go benchmarks and bench/cmd/proxycmp
// (the comparison with other proxies) send and serve the same.
package benchwire

import (
	"bytes"
	"io"
	"net/http"
	"strings"
)

// Event is one 200-byte SSE event (a notifications/message), the unit of
// the streaming benchmarks.
var Event = func() []byte {
	head := `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"`
	tail := "\"}}\n\n"
	return []byte(head + strings.Repeat("x", 200-len(head)-len(tail)) + tail)
}()

// WriteEvents writes ev n times to w, one write and flush each, as a
// server emits them, stopping at the first failed write. w must be an
// http.Flusher.
func WriteEvents(w http.ResponseWriter, ev []byte, n int) {
	f := w.(http.Flusher)
	for range n {
		if _, err := w.Write(ev); err != nil {
			return
		}
		f.Flush()
	}
}

// Drain reads resp's body to its end, closes it and returns its length.
func Drain(resp *http.Response) (int64, error) {
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return n, err
}

// NewPost is a POST of body to url with the headers of an MCP client in a
// 2025-11-25 session.
func NewPost(url string, body []byte) (*http.Request, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", "bench-session")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	return req, nil
}

package faultproxy

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
)

// BenchmarkWebSocketRoundTrip measures one ~300-byte frame to an echo
// server and back, directly and through the WebSocket link with no rule,
// in the same run: the proxy's cost is read as the ratio.
func BenchmarkWebSocketRoundTrip(b *testing.B) {
	frame := bytes.TrimSuffix(benchLine, []byte("\n"))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		for {
			mt, data, err := c.ReadMessage()
			if err != nil || c.WriteMessage(mt, data) != nil {
				return
			}
		}
	}))
	defer srv.Close()
	upstream := "ws" + strings.TrimPrefix(srv.URL, "http") + "/mcp"
	run := func(b *testing.B, url string) {
		c, _, err := websocket.DefaultDialer.Dial(url, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		b.SetBytes(int64(len(frame)))
		b.ResetTimer()
		for range b.N {
			if err := c.WriteMessage(websocket.TextMessage, frame); err != nil {
				b.Fatal(err)
			}
			if _, _, err := c.ReadMessage(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("direct", func(b *testing.B) { run(b, upstream) })
	b.Run("proxy", func(b *testing.B) {
		p, err := StartWebSocket(b.Context(), WebSocketOptions{Upstream: upstream})
		if err != nil {
			b.Fatal(err)
		}
		defer p.Close()
		p.Transcript().SetLimit(1024)
		run(b, p.URL())
	})
}

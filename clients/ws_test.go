package clients

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/mcp-conform/mcp-conform/fixtures"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// serveFixtureWS serves the reference server over WebSocket and returns its
// URL; cleanup stops it.
func serveFixtureWS(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- fixtures.ServeWebSocket(ctx, "127.0.0.1:0", fixtures.Options{}, func(u string) { urls <- u })
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	select {
	case u := <-urls:
		return u
	case err := <-done:
		t.Fatal(err)
	case <-time.After(testTimeout):
		t.Fatal("fixture did not listen")
	}
	return ""
}

// TestWebSocketWire: the stdio Wire over WebSocket frames negotiates both
// eras, calls a tool and awaits by id, and cancels by notification.
func TestWebSocketWire(t *testing.T) {
	url := serveFixtureWS(t)
	for _, force := range []string{"", "2025-11-25"} {
		t.Run("spec="+force, func(t *testing.T) {
			ctx := testCtx(t)
			w, err := DialWebSocket(ctx, url, nil, WireOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			s, err := w.Negotiate(ctx, force)
			if err != nil {
				t.Fatal(err)
			}
			if force != "" && s.Version != force || force == "" && s.Version != "2026-07-28" {
				t.Fatalf("negotiated %+v", s)
			}
			m, err := w.Call(ctx, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "over ws"}})
			if err != nil || m.Env.Kind != jsonrpc.Response {
				t.Fatalf("echo: %s, %v", m.Raw, err)
			}
			// A slow call cancelled in flight gets no response; the barrier
			// afterwards does.
			p, err := w.Start(ctx, jsonrpc.StringID("slow"), "tools/call", w.ProgressParams("tok", map[string]any{"name": "slow", "arguments": map[string]any{"steps": 50, "stepMs": 20}}))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.WaitFor(ctx, 0, func(m Message) bool { return m.Env.Method == "notifications/progress" }); err != nil {
				t.Fatal(err)
			}
			if err := w.Notify(ctx, "notifications/cancelled", map[string]any{"requestId": "slow"}); err != nil {
				t.Fatal(err)
			}
			barrier := "ping"
			if s.Era == EraModern {
				barrier = "server/discover"
			}
			if _, err := w.Call(ctx, barrier, nil); err != nil {
				t.Fatal(err)
			}
			select {
			case <-p.Done():
				t.Fatal("the cancelled call was answered")
			default:
			}
		})
	}
}

// TestWebSocketWireEnds: a server's normal close is a clean end; an
// oversize frame stops the reader with ErrLineTooLong.
func TestWebSocketWireEnds(t *testing.T) {
	url := serveFixtureWS(t)
	ctx := testCtx(t)
	conn, _, err := websocket.DefaultDialer.DialContext(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWebSocketWire(conn, WireOptions{MaxLine: 64})
	defer w.Close()
	if err := w.SendRaw(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"`+string(make([]byte, 100))+`"}}}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.Closed():
	case <-ctx.Done():
		t.Fatal("reader did not stop")
	}
	if !errors.Is(w.Err(), ErrLineTooLong) {
		t.Fatalf("Err = %v, want ErrLineTooLong", w.Err())
	}
}

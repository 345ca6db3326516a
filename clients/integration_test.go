package clients

import (
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/fixtures"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// serveFixtureStdio serves the reference server over os.Pipe pairs and
// returns the client's end; cleanup closes it (the server reads EOF and
// returns) and waits for Serve.
func serveFixtureStdio(t *testing.T) io.ReadWriteCloser {
	t.Helper()
	conn, srvIn, srvOut := osPipePair(t)
	served := make(chan error, 1)
	go func() { served <- fixtures.Serve(context.Background(), srvIn, srvOut, fixtures.Options{}) }()
	t.Cleanup(func() {
		_ = conn.Close()
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(testTimeout):
			t.Errorf("fixture did not stop")
		}
	})
	return conn
}

// startFixture returns a Wire connected to a fresh reference server over
// stdio; cleanup closes the Wire, then waits for the server.
func startFixture(t *testing.T, opts WireOptions) *Wire {
	t.Helper()
	w := NewWire(serveFixtureStdio(t), opts)
	t.Cleanup(func() { _ = w.Close() })
	return w
}

func TestFixtureModern(t *testing.T) {
	w := startFixture(t, WireOptions{})
	ctx := testCtx(t)
	s, err := w.Negotiate(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if s.Version != "2026-07-28" || s.Era != EraModern || s.Capabilities == nil || s.ServerInfo == nil {
		t.Fatalf("session = %+v", s)
	}
	for _, m := range w.Messages() {
		if m.Env.Method == "initialize" {
			t.Fatal("initialize sent to a modern server")
		}
	}
	m, err := w.Call(ctx, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "hé<>"}})
	if err != nil || m.Env.Kind != jsonrpc.Response {
		t.Fatalf("echo = %s, %v", m.Raw, err)
	}
	var res struct {
		ResultType string `json:"resultType"`
		Content    []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(m.Env.Result, &res); err != nil || res.ResultType != "complete" || len(res.Content) != 1 || res.Content[0].Text != "hé<>" {
		t.Fatalf("echo result = %s", m.Env.Result)
	}
	// Progress with an exact integer token.
	from := w.Len()
	token := int64(9007199254740993)
	m, err = w.Call(ctx, "tools/call", w.ProgressParams(token, map[string]any{"name": "slow", "arguments": map[string]any{"steps": 3, "stepMs": 5}}))
	if err != nil || m.Env.Kind != jsonrpc.Response {
		t.Fatalf("slow = %s, %v", m.Raw, err)
	}
	progress := 0
	for _, p := range w.Since(from) {
		if p.Env.Method == "notifications/progress" {
			progress++
			if p.Env.ProgressToken != jsonrpc.IntID(token) {
				t.Fatalf("progress token %s, want %d", p.Env.ProgressToken, token)
			}
		}
	}
	if progress != 3 {
		t.Fatalf("%d progress notifications, want 3", progress)
	}
}

func TestFixtureForcedLegacy(t *testing.T) {
	w := startFixture(t, WireOptions{})
	ctx := testCtx(t)
	s, err := w.Negotiate(ctx, "2025-11-25")
	if err != nil {
		t.Fatal(err)
	}
	if s.Version != "2025-11-25" || s.Era != EraLegacy || s.ServerInfo == nil {
		t.Fatalf("session = %+v", s)
	}
	if msgs := w.Messages(); len(msgs) != 1 {
		t.Fatalf("want only the initialize response, got %d messages", len(msgs))
	}
	m, err := w.Call(ctx, "ping", nil)
	if err != nil || m.Env.Kind != jsonrpc.Response {
		t.Fatalf("ping = %s, %v", m.Raw, err)
	}
}

package clients

import (
	"encoding/json"
	"errors"
	"io"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/fixtures"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// serveFixtureHTTP serves the reference HTTP server and returns its /mcp
// endpoint; cleanup closes the handler, then the server.
func serveFixtureHTTP(t *testing.T) string {
	t.Helper()
	h, err := fixtures.NewHTTPHandler(fixtures.HTTPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	if c, ok := h.(io.Closer); ok {
		t.Cleanup(func() { _ = c.Close() })
	}
	return ts.URL + "/mcp"
}

// startHTTPFixture returns an HTTPWire for a fresh reference HTTP server;
// cleanup closes the wire, the handler, then the server.
func startHTTPFixture(t *testing.T) *HTTPWire {
	t.Helper()
	w := NewHTTPWire(serveFixtureHTTP(t), HTTPOptions{})
	t.Cleanup(func() { _ = w.Close() })
	return w
}

// checkSlowWithProgress calls slow {steps:3, stepMs:20} with a progress token
// and checks three progress notifications then the result, on the call's
// stream.
func checkSlowWithProgress(t *testing.T, w *HTTPWire) {
	t.Helper()
	ctx := testCtx(t)
	c, err := w.Start(ctx, w.NewID(), "tools/call", w.ProgressParams("p-1", map[string]any{"name": "slow", "arguments": map[string]any{"steps": 3, "stepMs": 20}}))
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.Wait(ctx)
	if err != nil || m.Env.Kind != jsonrpc.Response {
		t.Fatalf("slow = %s, %v (HTTP %d)", m.Raw, err, c.Status())
	}
	var res struct {
		StructuredContent struct {
			Steps int `json:"steps"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(m.Env.Result, &res); err != nil || res.StructuredContent.Steps != 3 {
		t.Fatalf("slow result = %s", m.Env.Result)
	}
	progress := 0
	for _, p := range c.Messages() {
		if p.Env.Method == "notifications/progress" {
			progress++
			if p.Env.ProgressToken != jsonrpc.StringID("p-1") || p.Seq > m.Seq || p.Stream != c.Stream() {
				t.Fatalf("progress %+v", p)
			}
		}
	}
	if progress != 3 {
		t.Fatalf("%d progress notifications, want 3", progress)
	}
}

// startTaggedSlow starts a long slow call under tag and waits for its first
// progress notification.
func startTaggedSlow(t *testing.T, w *HTTPWire, tag string) *HTTPCall {
	t.Helper()
	ctx := testCtx(t)
	c, err := w.Start(ctx, w.NewID(), "tools/call", w.ProgressParams(tag, map[string]any{"name": "slow", "arguments": map[string]any{"steps": 200, "stepMs": 20, "tag": tag}}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitEvent(ctx, 0, func(e StreamEvent) bool { return e.Seq >= 0 }); err != nil {
		t.Fatalf("no progress: %v (HTTP %d)", err, c.Status())
	}
	return c
}

// probeCancelled polls the probe tool until tag's call is reported cancelled
// and no longer running.
func probeCancelled(t *testing.T, w *HTTPWire, tag string) {
	t.Helper()
	ctx := testCtx(t)
	for {
		m, err := w.Call(ctx, "tools/call", map[string]any{"name": "probe", "arguments": map[string]any{"tag": tag}})
		if err != nil || m.Env.Kind != jsonrpc.Response {
			t.Fatalf("probe = %s, %v", m.Raw, err)
		}
		var res struct {
			StructuredContent struct {
				Running, Cancelled, Finished bool
			} `json:"structuredContent"`
		}
		if err := json.Unmarshal(m.Env.Result, &res); err != nil {
			t.Fatalf("probe result %s: %v", m.Env.Result, err)
		}
		if sc := res.StructuredContent; sc.Cancelled && !sc.Running && !sc.Finished {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("probe never reported %s cancelled: %s", tag, m.Env.Result)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func TestHTTPFixtureModern(t *testing.T) {
	w := startHTTPFixture(t)
	s := mustNegotiate(t, w, "")
	if s.Era != EraModern || s.Version != "2026-07-28" || s.ServerInfo == nil || w.SessionID() != "" {
		t.Fatalf("session = %+v (id %q)", s, w.SessionID())
	}
	for _, m := range w.Messages() {
		if m.Env.Kind == jsonrpc.Response && m.Stream != "1" {
			t.Fatalf("unexpected exchange during negotiation: %+v", m)
		}
	}
	checkSlowWithProgress(t, w)

	c := startTaggedSlow(t, w, "modern-cancel")
	how, err := w.Cancel(testCtx(t), c, "test")
	if err != nil || how != "stream-close" {
		t.Fatalf("Cancel = %q, %v", how, err)
	}
	if c.EndErr() != ErrClosedByClient {
		t.Fatalf("EndErr = %v", c.EndErr())
	}
	probeCancelled(t, w, "modern-cancel")
}

func TestHTTPFixtureLegacy(t *testing.T) {
	w := startHTTPFixture(t)
	s := mustNegotiate(t, w, "2025-11-25")
	if s.Era != EraLegacy || s.Version != "2025-11-25" || w.SessionID() == "" {
		t.Fatalf("session = %+v (id %q)", s, w.SessionID())
	}
	checkSlowWithProgress(t, w)

	c := startTaggedSlow(t, w, "legacy-cancel")
	how, err := w.Cancel(testCtx(t), c, "test")
	if err != nil || how != "notification" {
		t.Fatalf("Cancel = %q, %v", how, err)
	}
	ctx := testCtx(t)
	select {
	case <-c.Ended():
	case <-ctx.Done():
		t.Fatal("the cancelled request's stream did not end")
	}
	if _, err := c.Wait(ctx); !errors.Is(err, ErrNoResponse) {
		t.Fatalf("Wait = %v", err)
	}
	if err := c.EndErr(); err != nil {
		t.Fatalf("EndErr = %v", err)
	}
	probeCancelled(t, w, "legacy-cancel")
}

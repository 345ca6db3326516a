package clients

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

func TestHTTPLegacyNegotiate(t *testing.T) {
	w, srv := newLegacy(t, HTTPOptions{}, nil)
	s := mustNegotiate(t, w, "")
	if s.Era != EraLegacy || s.Version != "2025-11-25" || !strings.Contains(string(s.ServerInfo), "scripted-legacy") {
		t.Fatalf("session = %+v", s)
	}
	if w.SessionID() != "sess-1" {
		t.Fatalf("session id %q", w.SessionID())
	}
	want := []string{"POST server/discover", "POST initialize", "POST notifications/initialized"}
	if got := srv.rec.methods(); !slices.Equal(got, want) {
		t.Fatalf("requests = %v", got)
	}
	reqs := srv.rec.all()
	if h := reqs[1].Header; h.Get("Mcp-Session-Id") != "" || h.Get("Mcp-Protocol-Version") != "" || h.Get("Mcp-Method") != "" {
		t.Errorf("initialize headers = %v", h)
	}
	if reqs[1].meta() != nil {
		t.Errorf("initialize carries _meta: %s", reqs[1].Body)
	}
	if h := reqs[2].Header; h.Get("Mcp-Session-Id") != "sess-1" || h.Get("Mcp-Protocol-Version") != "2025-11-25" {
		t.Errorf("initialized headers = %v", h)
	}
	ctx := testCtx(t)
	m, err := w.Call(ctx, "ping", nil)
	if err != nil || m.Env.Kind != jsonrpc.Response {
		t.Fatalf("ping = %s, %v", m.Raw, err)
	}
	r, _ := srv.rec.find("ping")
	if r.Header.Get("Mcp-Session-Id") != "sess-1" || r.Header.Get("Mcp-Protocol-Version") != "2025-11-25" || r.Header.Get("Mcp-Method") != "" || r.Params != nil {
		t.Errorf("ping request = %v %s", r.Header, r.Body)
	}
	if st, err := w.Notify(ctx, "notifications/roots/list_changed", nil); err != nil || st != 202 {
		t.Errorf("Notify = %d, %v", st, err)
	}
}

func TestHTTPLegacyForced(t *testing.T) {
	w, srv := newLegacy(t, HTTPOptions{}, nil)
	s := mustNegotiate(t, w, "2025-06-18")
	if s.Version != "2025-06-18" || s.Era != EraLegacy {
		t.Fatalf("session = %+v", s)
	}
	if got := srv.rec.methods(); !slices.Equal(got, []string{"POST initialize", "POST notifications/initialized"}) {
		t.Fatalf("requests = %v", got)
	}
	// Negotiating again starts a new session.
	mustNegotiate(t, w, "2025-11-25")
	if w.SessionID() != "sess-2" {
		t.Fatalf("session id %q", w.SessionID())
	}
}

func TestHTTPLegacyProbeTimeout(t *testing.T) {
	w, srv := newLegacy(t, HTTPOptions{ProbeTimeout: 150 * time.Millisecond}, func(s *legacyServer) { s.hangDiscover = true })
	start := time.Now()
	s := mustNegotiate(t, w, "")
	if s.Era != EraLegacy || time.Since(start) < 150*time.Millisecond {
		t.Fatalf("session = %+v after %v", s, time.Since(start))
	}
	if _, ok := srv.rec.find("initialize"); !ok {
		t.Fatal("no initialize")
	}
}

func TestHTTPLegacyInitializedStatus(t *testing.T) {
	w, _ := newLegacy(t, HTTPOptions{}, func(s *legacyServer) { s.initializedStatus = 400 })
	if _, err := w.Negotiate(testCtx(t), "2025-11-25"); !errors.Is(err, ErrUnexpectedStatus) || w.SessionID() != "" {
		t.Fatalf("Negotiate = %v (session id %q)", err, w.SessionID())
	}
}

func TestHTTPLegacyCancelNotification(t *testing.T) {
	w, srv := newLegacy(t, HTTPOptions{}, nil)
	mustNegotiate(t, w, "")
	ctx := testCtx(t)
	c, err := w.Start(ctx, jsonrpc.StringID("job"), "tools/call", w.ProgressParams("p", map[string]any{"name": "slow", "arguments": map[string]any{"steps": 200, "stepMs": 10}}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitEvent(ctx, 0, func(e StreamEvent) bool { return e.Seq >= 0 }); err != nil {
		t.Fatal(err)
	}
	evs := c.Events()
	if !evs[0].HasID || evs[0].ID != `"job"-0` || evs[0].Data != "" {
		t.Fatalf("priming event = %+v", evs[0])
	}
	how, err := w.Cancel(ctx, c, "")
	if err != nil || how != "notification" {
		t.Fatalf("Cancel = %q, %v", how, err)
	}
	select {
	case id := <-srv.rec.cancelled:
		if id != "job" {
			t.Fatalf("cancelled %q", id)
		}
	case <-ctx.Done():
		t.Fatal("no notifications/cancelled")
	}
	r, _ := srv.rec.find("notifications/cancelled")
	if !bytes.Equal(r.Body, []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"job"}}`)) {
		t.Errorf("cancellation body %s", r.Body)
	}
	if _, err := c.Wait(ctx); !errors.Is(err, ErrNoResponse) {
		t.Fatalf("Wait = %v", err)
	}
	if err := c.EndErr(); err != nil {
		t.Fatalf("EndErr = %v (the server ends the stream)", err)
	}
	select {
	case id := <-srv.rec.disconnected:
		t.Fatalf("the client disconnected %s", id)
	default:
	}
}

func TestHTTPLegacySessionErrors(t *testing.T) {
	w, srv := newLegacy(t, HTTPOptions{}, nil)
	mustNegotiate(t, w, "")
	ctx := testCtx(t)
	sid := w.SessionID()

	w.SetSessionID("bogus")
	c, err := w.Start(ctx, w.NewID(), "ping", nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.Wait(ctx)
	if err != nil || c.Status() != 404 || m.Env.Error == nil || m.Env.Error.Code != jsonrpc.CodeSessionNotFound {
		t.Fatalf("unknown session = %d %s, %v", c.Status(), m.Raw, err)
	}

	w.SetSessionID("")
	c, err = w.Start(ctx, w.NewID(), "ping", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Wait(ctx); err != nil || c.Status() != 400 {
		t.Fatalf("no session = %d, %v", c.Status(), err)
	}

	w.SetSessionID(sid)
	if st, err := w.Delete(ctx); err != nil || st != 200 {
		t.Fatalf("DELETE = %d, %v", st, err)
	}
	if d := srv.rec.all(); d[len(d)-1].Header.Get("Mcp-Session-Id") != sid {
		t.Fatal("DELETE without the session id")
	}
	if w.SessionID() != sid {
		t.Fatal("Delete forgot the session id")
	}
	c, err = w.Start(ctx, w.NewID(), "ping", nil)
	if err != nil {
		t.Fatal(err)
	}
	<-c.Ended()
	if c.Status() != 404 {
		t.Fatalf("deleted session = %d", c.Status())
	}
	// The session is gone for DELETE too.
	if st, err := w.Delete(ctx); err != nil || st != 404 {
		t.Fatalf("second DELETE = %d, %v", st, err)
	}
}

func TestHTTPLegacyGETStreamAndResume(t *testing.T) {
	w, srv := newLegacy(t, HTTPOptions{}, nil)
	mustNegotiate(t, w, "")
	ctx := testCtx(t)
	from := w.Len()
	g, err := w.OpenGET(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	m, err := w.WaitFor(ctx, from, func(m Message) bool { return m.Stream == "GET#1" })
	if err != nil || m.Env.Method != "notifications/message" || m.EventID != "g-1" {
		t.Fatalf("GET message = %+v, %v", m, err)
	}
	if g.LastEventID() != "g-1" {
		t.Errorf("LastEventID = %q", g.LastEventID())
	}
	g.Close()
	if g.EndErr() != ErrClosedByClient {
		t.Fatalf("EndErr = %v", g.EndErr())
	}

	r, err := w.OpenGET(ctx, "7-2")
	if err != nil {
		t.Fatal(err)
	}
	m, err = w.WaitFor(ctx, from, func(m Message) bool { return m.Env.Kind == jsonrpc.Response })
	if err != nil || m.Stream != "GET#2" || m.Env.ID != jsonrpc.IntID(7) || m.EventID != "7-9" {
		t.Fatalf("replayed = %+v, %v", m, err)
	}
	<-r.Ended()
	reqs := srv.rec.all()
	if h := reqs[len(reqs)-1].Header; h.Get("Last-Event-Id") != "7-2" || h.Get("Mcp-Session-Id") != "sess-1" {
		t.Errorf("resume headers = %v", h)
	}
}

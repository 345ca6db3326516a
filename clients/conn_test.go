package clients

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/protocol"
)

// fixtureTransport returns a Transport to a fresh reference server on the
// named transport; cleanup stops the server.
func fixtureTransport(t *testing.T, name protocol.Transport) Transport {
	t.Helper()
	switch name {
	case protocol.TransportStdio:
		return &StdioTransport{Stream: serveFixtureStdio(t)}
	case protocol.TransportHTTP:
		return &HTTPTransport{Endpoint: serveFixtureHTTP(t)}
	case protocol.TransportWebSocket:
		return &WebSocketTransport{URL: serveFixtureWS(t)}
	}
	t.Fatalf("no transport %q", name)
	return nil
}

// TestConnOnEveryTransport drives the reference server through nothing
// but the Conn interface, on each transport and in both eras: the same
// negotiation, the same explicit-id requests, the same message log, the
// same end.
func TestConnOnEveryTransport(t *testing.T) {
	for _, name := range protocol.Transports() {
		for _, force := range []string{"", "2025-11-25"} {
			t.Run(string(name)+"/spec="+force, func(t *testing.T) {
				tr := fixtureTransport(t, name)
				if tr.Name() != name {
					t.Fatalf("Name() = %q, want %q", tr.Name(), name)
				}
				ctx := testCtx(t)
				c, err := tr.Connect(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				checkConn(t, ctx, c, force)
			})
		}
	}
}

func checkConn(t *testing.T, ctx context.Context, c Conn, force string) {
	t.Helper()
	s, err := c.Negotiate(ctx, force)
	if err != nil {
		t.Fatal(err)
	}
	wantV, wantEra := "2026-07-28", EraModern
	if force != "" {
		wantV, wantEra = force, EraLegacy
	}
	if s.Version != wantV || s.Era != wantEra || c.Session().Version != wantV {
		t.Fatalf("negotiated %+v, Session() %+v; want %s %s", s, c.Session(), wantV, wantEra)
	}

	// An explicit id, awaited by its InFlight and found again in the log.
	from := c.Len()
	id := jsonrpc.StringID("conn-1")
	r, err := c.Send(ctx, id, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "one log"}})
	if err != nil {
		t.Fatal(err)
	}
	if r.ID() != id {
		t.Fatalf("InFlight.ID() = %s, want %s", r.ID(), id)
	}
	m, err := r.Wait(ctx)
	if err != nil || m.Env.Kind != jsonrpc.Response || m.Env.ID != id {
		t.Fatalf("Wait = %s, %v", m.Raw, err)
	}
	logged, err := c.WaitFor(ctx, from, func(m Message) bool { return m.Env.ID == id })
	if err != nil || logged.Seq != m.Seq || logged.Seq < from {
		t.Fatalf("WaitFor = seq %d %v, Wait gave seq %d (from %d)", logged.Seq, err, m.Seq, from)
	}
	if since := c.Since(m.Seq); len(since) == 0 || since[0].Seq != m.Seq || c.Len() <= m.Seq {
		t.Fatalf("Since(%d) = %d messages, Len %d", m.Seq, len(since), c.Len())
	}

	// Call: a fresh id; an error response is a Message.
	e, err := c.Call(ctx, "tools/call", map[string]any{"name": "no-such-tool"})
	if err != nil || e.Env.Kind != jsonrpc.ErrorReply {
		t.Fatalf("Call(no-such-tool) = %s, %v", e.Raw, err)
	}
	if a, b := c.NewID(), c.NewID(); a == b {
		t.Fatalf("NewID repeated %s", a)
	}

	// After Close: waits end, sends fail, the log stays.
	n := c.Len()
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	_ = c.Close() // idempotent
	if _, err := c.WaitFor(ctx, n, func(Message) bool { return true }); !errors.Is(err, ErrClosed) {
		t.Fatalf("WaitFor after Close = %v, want ErrClosed", err)
	}
	if r, err := c.Send(ctx, c.NewID(), "ping", nil); !errors.Is(err, ErrClosed) || r != nil {
		t.Fatalf("Send after Close = %v, %v; want nil, ErrClosed", r, err)
	}
	if got := len(c.Since(0)); got == 0 || got != c.Len() {
		t.Fatalf("log after Close holds %d of %d messages", got, c.Len())
	}
}

// TestSendFailureIsANilInFlight: a failed Send returns a nil interface,
// not a typed nil a caller would mistake for a request.
func TestSendFailureIsANilInFlight(t *testing.T) {
	w, _ := newPair(t, WireOptions{})
	h := NewHTTPWire("http://127.0.0.1:1/mcp", HTTPOptions{})
	defer h.Close()
	for _, c := range []Conn{w, h} {
		r, err := c.Send(testCtx(t), "", "ping", nil)
		if err == nil || r != nil {
			t.Errorf("%T.Send without an id = %v, %v; want nil and an error", c, r, err)
		}
	}
}

func TestStdioTransportConnectsOnce(t *testing.T) {
	tr := fixtureTransport(t, protocol.TransportStdio)
	ctx := testCtx(t)
	c, err := tr.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c2, err := tr.Connect(ctx); err == nil || c2 != nil {
		t.Fatalf("second Connect = %v, %v; want an error", c2, err)
	}
}

// TestTransportConnectHonoursCtx: an ended ctx opens nothing.
func TestTransportConnectHonoursCtx(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tr := range []Transport{
		&StdioTransport{Stream: nopStream{}},
		&HTTPTransport{Endpoint: "http://127.0.0.1:1/mcp"},
		&WebSocketTransport{URL: "ws://127.0.0.1:1/"},
	} {
		if c, err := tr.Connect(ctx); !errors.Is(err, context.Canceled) || c != nil {
			t.Errorf("%s: Connect on an ended ctx = %v, %v", tr.Name(), c, err)
		}
	}
}

type nopStream struct{}

func (nopStream) Read([]byte) (int, error)    { return 0, io.EOF }
func (nopStream) Write(p []byte) (int, error) { return len(p), nil }
func (nopStream) Close() error                { return nil }

package reliable

import (
	"context"
	"io"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/fixtures"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// pipeConn joins the two halves of a client's end of in-memory pipes.
type pipeConn struct {
	io.Reader
	io.Writer
	closers []io.Closer
}

func (p pipeConn) Close() error {
	for _, c := range p.closers {
		_ = c.Close()
	}
	return nil
}

// stdioFixture serves the real reference server over in-memory pipes (so
// that, inside a synctest bubble, its step timers run on the fake clock)
// and returns a negotiated Wire.
func stdioFixture(t *testing.T, version string) *clients.Wire {
	srvIn, cliOut := io.Pipe()
	cliIn, srvOut := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- fixtures.Serve(context.Background(), srvIn, srvOut, fixtures.Options{})
		_ = srvOut.Close()
	}()
	w := clients.NewWire(pipeConn{Reader: cliIn, Writer: cliOut, closers: []io.Closer{cliOut, cliIn}}, clients.WireOptions{})
	t.Cleanup(func() {
		_ = w.Close()
		<-served
	})
	if _, err := w.Negotiate(t.Context(), version); err != nil {
		t.Fatal(err)
	}
	return w
}

// The same request over stdio: the idle deadline passes before the
// reference server's first progress; the client sends
// notifications/cancelled (the only signal on stdio, in every version), and
// the server stops: no response and no further progress, however long.
func TestStdioIdleTimeoutStopsServer(t *testing.T) {
	for _, v := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(v, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := stdioFixture(t, v)
				c := New(Stdio{W: w}, Options{ID: "stdio", Idle: 500 * time.Millisecond, Max: 10 * time.Second})
				defer c.Close()
				out := c.Call(t.Context(), "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"steps": 3, "stepMs": 1000}})
				if out.State != IdleTimeout || out.Elapsed != 500*time.Millisecond || out.Signal != SignalNotification || out.SignalErr != nil {
					t.Fatalf("outcome %v after %v, signal %q (%v)", out.State, out.Elapsed, out.Signal, out.SignalErr)
				}
				mark := w.Len()
				time.Sleep(10 * time.Second) // fake clock: far past the slow call's end
				synctest.Wait()
				for _, m := range w.Since(mark) {
					t.Errorf("message after the timeout's cancellation: %s", m.Raw)
				}
			})
		})
	}
}

// Progress before every idle deadline keeps the call going; the maximum
// ends it anyway, with the same signal, and the server stops.
func TestStdioMaximumDespiteProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := stdioFixture(t, "")
		c := New(Stdio{W: w}, Options{ID: "stdio", Idle: 1500 * time.Millisecond, Max: 3500 * time.Millisecond})
		defer c.Close()
		out := c.Call(t.Context(), "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"steps": 6, "stepMs": 1000}})
		if out.State != MaxTimeout || out.Elapsed != 3500*time.Millisecond || out.Signal != SignalNotification {
			t.Fatalf("outcome %v after %v, signal %q", out.State, out.Elapsed, out.Signal)
		}
		if st := out.Coordinator.Stats(); st.Progress != 3 {
			t.Fatalf("stats %+v, want 3 progress", st)
		}
		mark := w.Len()
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if rest := w.Since(mark); len(rest) != 0 {
			t.Fatalf("server went on after the cancellation: %s", rest[0].Raw)
		}
	})
}

// A call that completes in time completes, over the real server.
func TestStdioCompletes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := stdioFixture(t, "")
		c := New(Stdio{W: w}, Options{Idle: 1500 * time.Millisecond, Max: 10 * time.Second})
		defer c.Close()
		out := c.Call(t.Context(), "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"steps": 4, "stepMs": 1000}})
		if out.State != Completed || out.Response.Env.Kind != jsonrpc.Response || out.Coordinator.Stats().Progress != 4 {
			t.Fatalf("outcome %v %s %+v", out.State, out.Response.Raw, out.Coordinator.Stats())
		}
	})
}

// Over Streamable HTTP (real sockets, so real time: the idle deadline is
// 20 times shorter than the first step, no sleep) the signal depends on the
// era: 2026-07-28 closes the stream, 2025-11-25 posts the notification.
func TestHTTPSignalByEra(t *testing.T) {
	for _, tc := range []struct {
		version string
		want    Signal
	}{{"2026-07-28", SignalStreamClose}, {"2025-11-25", SignalNotification}} {
		t.Run(tc.version, func(t *testing.T) {
			h, err := fixtures.NewHTTPHandler(fixtures.HTTPOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(h)
			defer ts.Close()
			defer h.(io.Closer).Close()
			w := clients.NewHTTPWire(ts.URL+"/mcp", clients.HTTPOptions{})
			defer w.Close()
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			if _, err := w.Negotiate(ctx, tc.version); err != nil {
				t.Fatal(err)
			}
			c := New(HTTP{W: w}, Options{ID: "http", Idle: 150 * time.Millisecond, Max: 5 * time.Second})
			defer c.Close()
			out := c.Call(ctx, "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"steps": 2, "stepMs": 3000}})
			if out.State != IdleTimeout || out.Signal != tc.want || out.SignalErr != nil {
				t.Fatalf("outcome %v, signal %q (%v), want idle-timeout with %q", out.State, out.Signal, out.SignalErr, tc.want)
			}
		})
	}
}

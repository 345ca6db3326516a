package suites

// LIFECYCLE-NO-EARLY-REQUESTS over Streamable HTTP (registered in
// lifecycle_early.go): a second session through the check's proxy, whose
// client sends notifications/initialized only once the window is over.
//
//	harness ──POST initialize {capabilities: {roots}}──▶ server   stream I
//	        ◀── I: result (and whatever came before it) ──┘
//	harness ──GET (standalone, when offered)────────────▶ server   stream G
//	harness ──POST ping─────────────────────────────────▶ server   stream P
//	        ◀── P: ping result ───────────────────────────┘
//	   (every message received so far was sent before initialized)
//	harness ──POST notifications/initialized────────────▶ server
//
// The harness has not sent initialized until the ping's answer came, so
// anything the server sent on I, G or P by then it sent without having
// received initialized: no race with the server's reading.

import (
	"context"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

func noEarlyRequestsHTTP(h *H) {
	c := h.ConnectHTTP()
	w := clients.NewHTTPWire(c.Proxy.URL(), clients.HTTPOptions{ClientName: "mcp-conform"})
	defer func() { _ = w.Close() }()
	ctx, cancel := context.WithTimeout(h.Ctx(), h.Cfg().CallTimeout)
	defer cancel()
	initID := jsonrpc.StringID(unique("init"))
	ic, err := w.Start(ctx, initID, "initialize", map[string]any{
		"protocolVersion": h.Version(),
		"capabilities":    map[string]any{"roots": map[string]any{}},
		"clientInfo":      map[string]any{"name": "mcp-conform", "version": clients.DefaultClientVersion},
	})
	if err != nil {
		h.FailServer("initialize: %v%s", err, c.ExitHint())
	}
	if r := awaitBeforeInitialized(ctx, h, w, ic, "initialize", c.ExitHint); r.Env.Kind != jsonrpc.Response {
		h.Errorf("initialize in %s declaring roots was refused, the check cannot go on: %s", h.Version(), clip(r.Raw))
	}
	w.SetSession(clients.Session{Version: h.Version(), Era: clients.EraLegacy})
	w.SetSessionID(ic.Header().Get(clients.HeaderSessionID))
	// The standalone GET stream, opened as httpMsg does for the run's
	// session (a server that offers none has nothing to send there).
	hc := *c
	hc.W = w
	m := &httpMsg{HConn: &hc}
	m.openStandalone()
	pc, err := w.Start(ctx, jsonrpc.StringID(unique("before-initialized")), "ping", nil)
	if err != nil {
		h.FailServer("ping: %v%s", err, c.ExitHint())
	}
	awaitBeforeInitialized(ctx, h, w, pc, "the ping sent before notifications/initialized", c.ExitHint)
	if m.get != nil {
		for _, msg := range m.get.Messages() {
			if msg.Env.Kind == jsonrpc.Request && msg.Env.Method != "ping" {
				h.Failf("%s", earlyRequest(msg, m.get.Stream()))
			}
		}
	}
	if _, err := w.Notify(ctx, "notifications/initialized", nil); err != nil {
		h.FailServer("notifications/initialized: %v%s", err, c.ExitHint())
	}
	h.Notef("no request but ping came on the initialize, GET or ping streams before notifications/initialized was sent")
}

// earlyRequest is the finding for m, a request the server sent on stream
// before the client sent notifications/initialized.
func earlyRequest(m clients.Message, stream string) string {
	return "the server sent a " + m.Env.Method + " request on " + stream +
		" before it received notifications/initialized (the client had not sent it yet): " + clip(m.Raw)
}

// awaitBeforeInitialized waits for the answer to call's request on its own
// stream (a JSON body or an SSE event), answering the server's pings on
// the way; any other request the server sends there fails the check.
func awaitBeforeInitialized(ctx context.Context, h *H, w *clients.HTTPWire, call *clients.HTTPCall, what string, hint func() string) clients.Message {
	if !call.IsSSE() {
		m, err := call.Wait(ctx)
		if err != nil {
			h.FailServer("%s was not answered: %v%s", what, err, hint())
		}
		return m
	}
	from := 0
	for {
		// pred sees each event once, in order, from index from on: n is
		// the index after the one it last saw.
		n := from
		e, err := call.WaitEvent(ctx, from, func(e clients.StreamEvent) bool {
			n++
			if !e.HasData {
				return false
			}
			env := jsonrpc.Parse([]byte(e.Data))
			return env.Kind == jsonrpc.Request || (env.Kind.IsReply() && env.ID == call.ID())
		})
		if err != nil {
			h.FailServer("%s was not answered: %v%s", what, err, hint())
		}
		from = n
		env := jsonrpc.Parse([]byte(e.Data))
		if env.Kind != jsonrpc.Request {
			return clients.Message{Raw: []byte(e.Data), Env: env, Seq: e.Seq}
		}
		if env.Method != "ping" {
			h.Failf("%s", earlyRequest(clients.Message{Raw: []byte(e.Data), Env: env}, call.Stream()))
		}
		if _, err := w.Reply(ctx, env.ID, map[string]any{}); err != nil {
			h.FailServer("answer the server's ping: %v%s", err, hint())
		}
	}
}

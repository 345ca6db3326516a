package suites

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/protocol"
)

// msgConn is one connection a message-level check (CANCEL, PROGRESS)
// drives, on any transport: stdio and WebSocket (a Wire over lines or
// frames) or Streamable HTTP (an HTTPWire, whose one log holds what every
// stream carried). The clauses of these checks bind every transport; only
// how a message travels differs.
//
// A msgConn belongs to one check body and is used from its goroutine,
// except waits, which may run on another.
type msgConn interface {
	// startRole sends a tools/call of the role's tool with an explicit id
	// and, when token is not nil, a progress token.
	startRole(role string, id jsonrpc.ID, token any) waiter
	// await waits for the reply within the call timeout; none fails the
	// check (the server hung or died).
	await(w waiter, what string) clients.Message
	// ping sends the era's barrier request and waits for its answer.
	ping(why string) clients.Message
	// send sends a request with an explicit id (in the modern era with
	// the per-request _meta) and returns at once: a request that stays
	// open (subscriptions/listen) is read with waitFirst. Over HTTP its
	// stream lives as long as the check. A request that could not be sent
	// ends the check in ERROR.
	send(id jsonrpc.ID, method string, params map[string]any) clients.InFlight
	// notify sends a notification given as raw JSON. Over HTTP it is a
	// POST whose answer must be 202 with no body or an error status: a
	// JSON-RPC message in its body is recorded in the log like any other,
	// for the check to judge. It returns once the server took it (HTTP:
	// the POST was answered), or fails the check when it could not.
	notify(line string)
	// notifyAsync is notify on its own goroutine: over HTTP a POST the
	// proxy holds does not return until the hold ends. The channel
	// delivers once, with "" or what went wrong.
	notifyAsync(line string) <-chan string
	// length is the number of inbound messages so far, since returns
	// those from index from on.
	length() int
	since(from int) []clients.Message
	// waitFirst waits up to d for the first inbound message from index
	// from on satisfying pred.
	waitFirst(from int, d time.Duration, pred func(clients.Message) bool) (clients.Message, bool)
	// silence says why a wait of up to d came back empty.
	silence(d time.Duration) string
	// waitPassed blocks until the proxy delivered a message matching m.
	waitPassed(ctx context.Context, m faultproxy.Match) error
	// session is the negotiated session.
	session() clients.Session
	// sameStream reports whether two inbound messages arrived on one
	// stream, so that their order is the server's (always on stdio and
	// WebSocket; over HTTP, messages of different streams may arrive in
	// another order than the server sent them).
	sameStream(a, b clients.Message) bool
	// streamOf names the stream a request's own messages travel on ("" on
	// stdio and WebSocket).
	streamOf(w waiter) string
	exitHint() string
}

// connectMsg connects to the target on its transport. Over Streamable HTTP
// in a 2025 session it also holds the session's standalone GET stream open
// (when the server offers one), so that whatever the server sends there —
// a request's progress once its POST stream has closed — is judged too.
func connectMsg(h *H, rules ...faultproxy.Rule) msgConn {
	if h.Target().Via() != protocol.TransportHTTP {
		return stdioMsg{h.Connect(rules...)}
	}
	c := h.ConnectHTTP(rules...)
	m := &httpMsg{HConn: c}
	m.openStandalone()
	return m
}

// cancelNotification is notifications/cancelled for id, as a raw line.
func cancelNotification(id jsonrpc.ID, reason string) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled",
		"params": map[string]any{"requestId": id.Raw(), "reason": reason}})
	return string(b)
}

// stdioMsg is a msgConn over stdio or WebSocket.
type stdioMsg struct{ *Conn }

func (c stdioMsg) startRole(role string, id jsonrpc.ID, token any) waiter {
	return c.StartRole(role, id, token)
}

func (c stdioMsg) await(w waiter, what string) clients.Message {
	return c.Await(w.(*clients.Pending), what)
}

func (c stdioMsg) ping(why string) clients.Message { return c.Ping(why) }
func (c stdioMsg) send(id jsonrpc.ID, method string, params map[string]any) clients.InFlight {
	return sendOn(c.H(), c.W, id, method, params)
}
func (c stdioMsg) notify(line string) { c.SendRaw(line) }
func (c stdioMsg) notifyAsync(line string) <-chan string {
	ch := make(chan string, 1)
	c.SendRaw(line)
	ch <- ""
	return ch
}
func (c stdioMsg) length() int                          { return c.W.Len() }
func (c stdioMsg) since(from int) []clients.Message     { return c.W.Since(from) }
func (c stdioMsg) silence(d time.Duration) string       { return c.Silence(d) }
func (c stdioMsg) session() clients.Session             { return c.W.Session() }
func (c stdioMsg) sameStream(_, _ clients.Message) bool { return true }
func (c stdioMsg) streamOf(waiter) string               { return "" }
func (c stdioMsg) exitHint() string                     { return c.Conn.ExitHint() }
func (c stdioMsg) waitFirst(from int, d time.Duration, pred func(clients.Message) bool) (clients.Message, bool) {
	return c.WaitFirst(from, d, pred)
}
func (c stdioMsg) waitPassed(ctx context.Context, m faultproxy.Match) error {
	return c.Conn.WaitPassed(ctx, m)
}

// httpMsg is a msgConn over Streamable HTTP.
type httpMsg struct {
	*HConn
	// get is the standalone GET stream held open (nil when the era has
	// none or the server refused it).
	get *clients.HTTPCall
}

// openStandalone opens the session's standalone GET stream in a 2025
// session. A server that answers 405 (it offers none) cannot send
// anything there: nothing more to watch.
func (c *httpMsg) openStandalone() {
	if c.W.Session().Era == clients.EraModern || c.W.SessionID() == "" {
		return
	}
	// The stream lives as long as the check; its head must come within
	// the exchange timeout.
	type opened struct {
		g   *clients.HTTPCall
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		g, err := c.W.OpenGET(c.H().Ctx(), "")
		ch <- opened{g, err}
	}()
	var g *clients.HTTPCall
	var err error
	t := time.NewTimer(c.H().Cfg().OpTimeout)
	defer t.Stop()
	select {
	case o := <-ch:
		g, err = o.g, o.err
	case <-t.C:
		c.H().Notef("the standalone GET stream sent no response head within %s: only the POST streams are watched", c.H().Cfg().OpTimeout)
		return
	}
	if err != nil {
		c.H().Notef("the standalone GET stream could not be opened (%v): only the POST streams are watched", err)
		return
	}
	if g.Status() != http.StatusOK || !g.IsSSE() {
		g.Close()
		c.H().Notef("the server offers no standalone GET stream (HTTP %d): only the POST streams are watched", g.Status())
		return
	}
	c.get = g
}

func (c *httpMsg) startRole(role string, id jsonrpc.ID, token any) waiter {
	return c.StartRole(role, id, token, nil)
}

func (c *httpMsg) await(w waiter, what string) clients.Message {
	ctx, cancel := context.WithTimeout(c.H().Ctx(), c.H().Cfg().CallTimeout)
	defer cancel()
	m, err := w.Wait(ctx)
	if err != nil {
		c.H().FailServer("%s: no response for id %s: %v%s", what, w.ID(), err, c.HConn.ExitHint())
	}
	return m
}

func (c *httpMsg) ping(why string) clients.Message { return c.Ping(why) }
func (c *httpMsg) send(id jsonrpc.ID, method string, params map[string]any) clients.InFlight {
	return sendOn(c.H(), c.W, id, method, params)
}

// sendOn is msgConn.send on either wire.
func sendOn(h *H, w clients.Conn, id jsonrpc.ID, method string, params map[string]any) clients.InFlight {
	f, err := w.Send(h.Ctx(), id, method, params)
	if err != nil {
		h.Errorf("send %s: %v", method, err)
	}
	return f
}

func (c *httpMsg) notify(line string) {
	if why := <-c.notifyAsync(line); why != "" {
		c.H().FailServer("%s", why)
	}
}

func (c *httpMsg) notifyAsync(line string) <-chan string {
	ch := make(chan string, 1)
	hd := sessionHeaders(c.HConn, c.W.SessionID())
	if c.W.Session().Era == clients.EraModern {
		hd["Mcp-Method"] = []string{jsonrpc.Parse([]byte(line)).Method}
	}
	hd["Content-Type"] = []string{"application/json"}
	hd["Accept"] = []string{"application/json, text/event-stream"}
	go func() {
		ctx, cancel := context.WithTimeout(c.H().Ctx(), c.H().Cfg().CallTimeout)
		defer cancel()
		resp, body, err := c.W.RawPOST(ctx, []byte(line), hd)
		if err != nil {
			ch <- fmt.Sprintf("POST of a notification failed: %v%s", err, c.HConn.ExitHint())
			return
		}
		switch {
		case resp.StatusCode == http.StatusAccepted && len(body) == 0:
		case resp.StatusCode >= 400:
			c.H().Notef("the notification %.80s was refused with HTTP %d", line, resp.StatusCode)
		default:
			c.H().Notef("the notification %.80s got HTTP %d with %d bytes of body (want 202 with no body)", line, resp.StatusCode, len(body))
		}
		ch <- ""
	}()
	return ch
}

func (c *httpMsg) length() int                      { return c.W.Len() }
func (c *httpMsg) since(from int) []clients.Message { return c.W.Since(from) }
func (c *httpMsg) session() clients.Session         { return c.W.Session() }
func (c *httpMsg) sameStream(a, b clients.Message) bool {
	return a.Stream == b.Stream
}
func (c *httpMsg) streamOf(w waiter) string {
	if call, ok := w.(*clients.HTTPCall); ok {
		return call.Stream()
	}
	return ""
}
func (c *httpMsg) exitHint() string { return c.HConn.ExitHint() }

func (c *httpMsg) waitFirst(from int, d time.Duration, pred func(clients.Message) bool) (clients.Message, bool) {
	ctx, cancel := context.WithTimeout(c.H().Ctx(), d)
	defer cancel()
	m, err := c.W.WaitFor(ctx, from, pred)
	return m, err == nil
}

func (c *httpMsg) silence(d time.Duration) string {
	return fmt.Sprintf("within %s%s", d, c.HConn.ExitHint())
}

func (c *httpMsg) waitPassed(ctx context.Context, m faultproxy.Match) error {
	return c.Proxy.WaitPassed(ctx, m)
}

// progressSince returns the progress notifications from index from on.
func progressSince(c msgConn, from int) []clients.Message {
	var out []clients.Message
	for _, m := range c.since(from) {
		if m.Env.Kind == jsonrpc.Notification && m.Env.Method == "notifications/progress" {
			out = append(out, m)
		}
	}
	return out
}

// repliesSince returns the replies with id from index from on.
func repliesSince(c msgConn, from int, id jsonrpc.ID) []clients.Message {
	var out []clients.Message
	for _, m := range c.since(from) {
		if m.Env.Kind.IsReply() && m.Env.ID == id {
			out = append(out, m)
		}
	}
	return out
}

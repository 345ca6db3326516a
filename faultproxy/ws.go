package faultproxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// WebSocketOptions configures a WebSocket link.
type WebSocketOptions struct {
	Options
	// Upstream is the server's WebSocket URL (ws:// or wss://).
	Upstream string
	// Listen is the proxy's address; empty means 127.0.0.1:0.
	Listen string
	// Rules is the rule set to start with; nil means none.
	Rules *Rules
	// Signal, when set, reaches the process group of a server the harness
	// started, for crash and pause faults.
	Signal func(Signal) error
	// Transcript, when set, is used instead of a new one.
	Transcript *Transcript
	// Authorize, when set, adds the proxy's credentials to each upstream
	// opening handshake (as HTTPOptions.Authorize does).
	Authorize func(req *http.Request) error
}

// WebSocket is a fault proxy in front of a server that speaks JSON-RPC over
// WebSocket, one message per frame. Each client connection gets its own
// upstream connection; every data frame, either way, is a Message (Stream
// "WS#n" names the connection) that goes through the rules, and with no
// rule active it is relayed byte for byte, as the same frame type, in
// order. Close frames are relayed with their code, and pings and pongs are
// passed on, so the two ends see each other's closing handshake.
type WebSocket struct {
	*core
	opts     WebSocketOptions
	upstream *url.URL
	srv      *http.Server
	ln       net.Listener
	n        atomic.Int64
	handlers sync.WaitGroup

	mu     sync.Mutex
	pairs  map[*wsPair]bool
	closed bool
}

// StartWebSocket starts a proxy listening on opts.Listen in front of
// opts.Upstream.
func StartWebSocket(ctx context.Context, opts WebSocketOptions) (*WebSocket, error) {
	up, err := url.Parse(opts.Upstream)
	if err != nil || (up.Scheme != "ws" && up.Scheme != "wss") || up.Host == "" {
		return nil, fmt.Errorf("faultproxy: upstream %q is not a ws:// or wss:// URL", opts.Upstream)
	}
	ln, tr, err := listenNet(&opts.Options, &opts.Listen, opts.Transcript)
	if err != nil {
		return nil, err
	}
	p := &WebSocket{core: newCore(ctx, tr, opts.Rules, opts.Signal), opts: opts, upstream: up, ln: ln, pairs: map[*wsPair]bool{}}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	p.tr.Add(Entry{Kind: EntryNote, Text: fmt.Sprintf("proxy %s → %s", p.URL(), opts.Upstream)})
	return p, nil
}

// URL is the proxy's endpoint: the upstream URL with the proxy's address
// (always ws://; the proxy itself does not terminate TLS).
func (p *WebSocket) URL() string {
	u := *p.upstream
	u.Scheme = "ws"
	u.Host = p.ln.Addr().String()
	return u.String()
}

// Addr is the proxy's listening address.
func (p *WebSocket) Addr() string { return p.ln.Addr().String() }

// Close stops held messages, drops every connection and waits (bounded)
// for the handlers to end.
func (p *WebSocket) Close() error {
	p.cancel()
	_ = p.srv.Close()
	p.mu.Lock()
	p.closed = true
	for pr := range p.pairs {
		pr.abort()
	}
	p.mu.Unlock()
	done := make(chan struct{})
	go func() { p.handlers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		p.tr.Note("websocket handlers did not drain within 3s")
	}
	return nil
}

// wsForward lists the request headers a WebSocket handshake passes on.
func wsForward(h http.Header) http.Header {
	out := http.Header{}
	for k, vs := range h {
		switch ck := http.CanonicalHeaderKey(k); {
		case strings.HasPrefix(ck, "Sec-Websocket-"), ck == "Host":
		case isHop(ck):
		default:
			out[ck] = append([]string(nil), vs...)
		}
	}
	return out
}

func isHop(k string) bool {
	for _, h := range hopHeaders {
		if h == k {
			return true
		}
	}
	return false
}

// ServeHTTP dials the upstream, upgrades the client with the subprotocol
// the upstream chose, and relays frames both ways until either side ends.
func (p *WebSocket) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.handlers.Add(1)
	defer p.handlers.Done()
	name := fmt.Sprintf("WS#%d", p.n.Add(1))
	target := *p.upstream
	target.Path, target.RawQuery = r.URL.Path, r.URL.RawQuery
	d := websocket.Dialer{HandshakeTimeout: 10 * time.Second, Subprotocols: websocket.Subprotocols(r)}
	fwd := wsForward(r.Header)
	if p.opts.Authorize != nil {
		areq := &http.Request{Method: http.MethodGet, URL: &target, Header: fwd, Host: target.Host}
		if err := p.opts.Authorize(areq.WithContext(r.Context())); err != nil {
			p.tr.Add(Entry{Kind: EntryNote, Stream: name, Text: "credentials for the upstream WebSocket: " + err.Error()})
			http.Error(w, "mcp-conform proxy: credentials for the upstream WebSocket: "+err.Error(), http.StatusBadGateway)
			return
		}
	}
	server, resp, err := d.DialContext(r.Context(), target.String(), fwd)
	if err != nil {
		status := http.StatusBadGateway
		if resp != nil {
			status = resp.StatusCode
		}
		p.tr.Add(Entry{Kind: EntryNote, Stream: name, Text: fmt.Sprintf("upstream %s refused the WebSocket: %v", target.String(), err)})
		http.Error(w, "mcp-conform proxy: upstream WebSocket: "+err.Error(), status)
		return
	}
	up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	if sp := server.Subprotocol(); sp != "" {
		up.Subprotocols = []string{sp}
	}
	client, err := up.Upgrade(w, r, nil)
	if err != nil {
		_ = server.Close()
		p.tr.Add(Entry{Kind: EntryNote, Stream: name, Text: fmt.Sprintf("client upgrade failed: %v", err)})
		return
	}
	pr := &wsPair{p: p, name: name, conns: map[Direction]*websocket.Conn{ClientToServer: server, ServerToClient: client},
		pending: map[Direction]*sync.WaitGroup{ClientToServer: {}, ServerToClient: {}}}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		pr.abort()
		return
	}
	p.pairs[pr] = true
	p.mu.Unlock()
	p.tr.Add(Entry{Kind: EntryNote, Stream: name, Text: fmt.Sprintf("connection %s open → %s", name, target.String())})
	pr.relay()
	p.mu.Lock()
	delete(p.pairs, pr)
	p.mu.Unlock()
}

// wsPair is one client connection and its upstream connection.
type wsPair struct {
	p    *WebSocket
	name string
	// conns maps a direction to the connection its messages are written
	// to: client-to-server messages go to the server connection.
	conns   map[Direction]*websocket.Conn
	wmu     [2]sync.Mutex
	pending map[Direction]*sync.WaitGroup
	once    sync.Once
}

// from is the connection messages of dir are read from.
func (pr *wsPair) from(dir Direction) *websocket.Conn { return pr.conns[dir.Reverse()] }

func dirIndex(dir Direction) int {
	if dir == ClientToServer {
		return 0
	}
	return 1
}

// abort closes both connections at once, without a closing handshake.
func (pr *wsPair) abort() {
	pr.once.Do(func() {
		_ = pr.conns[ClientToServer].Close()
		_ = pr.conns[ServerToClient].Close()
	})
}

// relay runs both pumps and closes both connections when they end.
func (pr *wsPair) relay() {
	for _, dir := range []Direction{ClientToServer, ServerToClient} {
		src, dst := pr.from(dir), pr.conns[dir]
		// Pings and pongs pass through; a close frame is relayed by the
		// pump instead of being answered here.
		src.SetPingHandler(func(data string) error {
			_ = dst.WriteControl(websocket.PingMessage, []byte(data), time.Now().Add(time.Second))
			return nil
		})
		src.SetPongHandler(func(data string) error {
			_ = dst.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(time.Second))
			return nil
		})
		src.SetCloseHandler(func(int, string) error { return nil })
		src.SetReadLimit(int64(pr.p.opts.MaxFrame))
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); pr.pump(ClientToServer) }()
	go func() { defer wg.Done(); pr.pump(ServerToClient) }()
	wg.Wait()
	pr.abort()
}

// pump reads the frames travelling in dir and hands each to the rule
// engine; at the end it relays the close (or the abrupt loss) of its
// source to the other side.
func (pr *wsPair) pump(dir Direction) {
	src := pr.from(dir)
	side := map[Direction]string{ClientToServer: "client", ServerToClient: "server"}[dir]
	for {
		mt, data, err := src.ReadMessage()
		if err != nil {
			pr.pending[dir].Wait()
			var ce *websocket.CloseError
			if errors.As(err, &ce) && ce.Code != websocket.CloseAbnormalClosure {
				pr.p.tr.Add(Entry{Kind: EntryNote, Dir: dir, Stream: pr.name, Text: fmt.Sprintf("%s sent close %d %q", side, ce.Code, ce.Text)})
				payload := []byte{}
				if ce.Code != websocket.CloseNoStatusReceived {
					payload = websocket.FormatCloseMessage(ce.Code, ce.Text)
				}
				_ = pr.conns[dir].WriteControl(websocket.CloseMessage, payload, time.Now().Add(time.Second))
				// The other side answers with its own close, which its
				// pump relays back; it gets a little time to do so.
				_ = pr.conns[dir].SetReadDeadline(time.Now().Add(2 * time.Second))
				return
			}
			if pr.p.ctx.Err() == nil {
				pr.p.tr.Add(Entry{Kind: EntryNote, Dir: dir, Stream: pr.name, Text: fmt.Sprintf("%s connection lost: %v", side, err)})
			}
			pr.abort()
			return
		}
		msg := &Message{Seq: pr.p.seq.Add(1), Dir: dir, Raw: data, At: pr.p.tr.Since(), Stream: pr.name, Binary: mt == websocket.BinaryMessage}
		e := Entry{At: msg.At, Kind: EntryMessage, Dir: dir, Seq: msg.Seq, Raw: data, Stream: pr.name}
		if msg.Binary {
			e.Text = "binary frame"
		}
		pr.p.tr.Add(e)
		pr.p.apply(msg, wsSink{pr: pr, dir: dir})
	}
}

// deliver writes msg as one frame of its type to its destination.
func (pr *wsPair) deliver(msg *Message) error {
	mt := websocket.TextMessage
	if msg.Binary {
		mt = websocket.BinaryMessage
	}
	mu := &pr.wmu[dirIndex(msg.Dir)]
	mu.Lock()
	err := pr.conns[msg.Dir].WriteMessage(mt, msg.Raw)
	mu.Unlock()
	if err != nil {
		pr.p.tr.Add(Entry{Kind: EntryNote, Dir: msg.Dir, Seq: msg.Seq, Stream: msg.Stream, Text: fmt.Sprintf("could not deliver: %v", err)})
		return err
	}
	pr.p.markPassed(msg)
	return nil
}

// wsSink delivers a pair's messages.
type wsSink struct {
	pr  *wsPair
	dir Direction
}

var _ sink = wsSink{}

func (s wsSink) deliver(msg *Message, _ bool) error { return s.pr.deliver(msg) }
func (s wsSink) pending() *sync.WaitGroup           { return s.pr.pending[s.dir] }
func (s wsSink) stream() StreamControl              { return nil }

func (s wsSink) inject(dir Direction, raw []byte) error {
	p := s.pr.p
	msg := &Message{Seq: p.seq.Add(1), Dir: dir, Raw: raw, At: p.tr.Since(), Synthetic: true, Stream: s.pr.name}
	p.tr.Add(Entry{At: msg.At, Kind: EntryMessage, Dir: dir, Seq: msg.Seq, Raw: raw, Stream: s.pr.name, Fault: "inject", Outcome: OutcomeInjected})
	return s.pr.deliver(msg)
}

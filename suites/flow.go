package suites

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/protocol"
	"github.com/mcp-conform/mcp-conform/reports"
)

// Slow consumers of the FLOW checks.
const (
	// flowStall is how long the stdio client stops reading.
	flowStall = 300 * time.Millisecond
	// flowThrottle is the HTTP consumer's rate (proxy throttle).
	flowThrottle = 16 << 20
	// flowTranscriptLimit keeps a flood check's transcript (its report) to
	// the last messages: the end of the flood, the final response, the
	// barrier.
	flowTranscriptLimit = 300
)

var checkFlowFinal = register(&Check{
	ID:    "FLOW-FINAL-ARRIVES",
	Title: "under a slow consumer the final response arrives and progress stays monotonic",
	How: "Calls the flood role (a burst of progress notifications, then the result) while the consumer is slow: on stdio " +
		"the client stops reading for 300 ms; on HTTP the proxy throttles the response stream to 16 MiB/s and the client " +
		"(on a connection of its own, with a fixed 128 KiB receive buffer) stops reading until the role's probe reports the " +
		"flood's work done (300 ms without a probe). Progress may be coalesced or thinned, but its values must strictly " +
		"increase, the final response must arrive (within the exchange timeout of the last progress), nothing may follow it, " +
		"and the server must answer a barrier request afterwards.",
	Rules: merge(
		sameRule(Rule{Level: reports.Must, Spec: indexPage, Also: []string{progressLegacy},
			Clause: jsonrpcMust + " [JSON-RPC 2.0: a request gets a response] [progress.mdx] The progress value MUST increase with each notification, even if the total is unknown. [seed: \"Final response dropped under pressure — Reserve capacity or evict progress, never the final response\"]"},
			legacyVersions...),
		map[string]Rule{v20260728: {Level: reports.Must, Spec: basicModernPage, Also: []string{progressModern},
			Clause: jsonrpcMust + " [JSON-RPC 2.0: a request gets a response] [progress.mdx] The progress value MUST increase with each notification, even if the total is unknown. [seed: \"Final response dropped under pressure — Reserve capacity or evict progress, never the final response\"]"}},
	),
	Transports: []string{viaStdio, viaHTTP},
	Roles:      []string{"flood"},
})

var checkFlowBounded = register(&Check{
	ID:    "FLOW-SERVER-BOUNDED",
	Title: "the server's outbound queue for a slow consumer stays bounded",
	How: "Calls the flood role over HTTP (the reference's: 5000 progress notifications of 1 KB) through a 16 MiB/s throttle, " +
		"with a client that stops reading until the role's probe reports the flood's work done, and reads the probe's " +
		"backlogPeak: the most messages the server held unsent for that consumer. More than 1024 is a queue that grows with " +
		"the flood (the seed's \"Unbounded progress queue: memory rises with a slow consumer\"); a server that blocks its work " +
		"on the consumer (backpressure) or coalesces and evicts progress within a bound passes. This is the server's own " +
		"instrumented report, as CANCEL-HTTP-CLOSE reads the probe's steps: the queue is not visible on the wire, and socket " +
		"buffers hide it. Without a probe on the role, or a probe that does not report backlogPeak (its absence is no peak of 0): SKIP.",
	Rules: merge(
		sameRule(Rule{Level: reports.Should, Spec: "specification/VERSION/basic/utilities/progress.mdx",
			Clause: "Both parties SHOULD implement rate limiting to prevent flooding [seed " + seedFlow + ": \"Unbounded progress queue — Memory rises with a slow consumer — Coalesce and drop replaceable progress within a bound\"]"},
			legacyVersions...),
		map[string]Rule{v20260728: {Level: reports.Should, Spec: progressModern,
			Clause: "Both parties SHOULD implement rate limiting to prevent flooding [seed " + seedFlow + ": \"Unbounded progress queue — Memory rises with a slow consumer — Coalesce and drop replaceable progress within a bound\"]"}},
	),
	Transports: []string{viaHTTP},
	Roles:      []string{"flood"},
})

func registerFlow() {
	ginkgo.Describe("FLOW", ginkgo.Label("area:flow"), func() {
		define(checkFlowFinal, flowFinalArrives)
		define(checkFlowBounded, flowServerBounded)
	})
}

// ---- a stdio client that stops reading ----

// gate blocks reads while closed.
type gate struct {
	mu     sync.Mutex
	open   chan struct{}
	closed chan struct{}
}

func newGate() *gate {
	g := &gate{open: make(chan struct{}), closed: make(chan struct{})}
	close(g.open)
	return g
}

// stop makes reads block; resume lets them go on.
func (g *gate) stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
		g.open = make(chan struct{})
	default:
	}
}

// release unblocks every read for good (the client is closing).
func (g *gate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.closed:
	default:
		close(g.closed)
	}
}

func (g *gate) resume() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
	default:
		close(g.open)
	}
}

// gatedConn is a client end that reads only while its gate is open: a
// consumer that stops reading, so the pipe fills and the server's writes
// block.
type gatedConn struct {
	io.ReadWriteCloser
	g *gate
}

func (c *gatedConn) Read(p []byte) (int, error) {
	c.g.mu.Lock()
	open := c.g.open
	c.g.mu.Unlock()
	select {
	case <-open:
	case <-c.g.closed:
		return 0, io.ErrClosedPipe
	}
	return c.ReadWriteCloser.Read(p)
}

func (c *gatedConn) Close() error {
	c.g.release()
	return c.ReadWriteCloser.Close()
}

// connectGated is Connect with a client whose reading a gate controls.
func connectGated(h *H, g *gate, rules ...faultproxy.Rule) *Conn {
	return h.ConnectWrapped(func(rw io.ReadWriteCloser) io.ReadWriteCloser {
		return &gatedConn{ReadWriteCloser: rw, g: g}
	}, rules...)
}

// ---- judging a flood ----

type floodProgress struct {
	Token    json.RawMessage `json:"progressToken"`
	Progress float64         `json:"progress"`
	Total    *float64        `json:"total"`
}

// judgeFlood checks the flood's messages (in arrival order): progress for
// token strictly increasing, the final response present, nothing after it.
// It returns how many progress notifications arrived.
func judgeFlood(h *H, msgs []clients.Message, id, token jsonrpc.ID) int {
	n, last, final := 0, 0.0, -1
	for i, m := range msgs {
		switch {
		case m.Env.Kind.IsReply() && m.Env.ID == id:
			if final < 0 {
				final = i
			}
		case m.Env.Method == "notifications/progress" && m.Env.ProgressToken == token:
			if final >= 0 {
				h.Failf("progress after the flood's final response: %s", m.Raw)
			}
			var p struct {
				Params floodProgress `json:"params"`
			}
			if err := json.Unmarshal(m.Raw, &p); err != nil {
				h.Failf("unreadable progress notification: %s", m.Raw)
			}
			if n > 0 && p.Params.Progress <= last {
				h.Failf("under a slow consumer, progress did not increase (%v after %v): %s", p.Params.Progress, last, m.Raw)
			}
			last = p.Params.Progress
			n++
		}
	}
	return n
}

// isLastProgress matches the progress notification whose value reached its
// total: the flood's last, which a bounded buffer always keeps.
func isLastProgress(env jsonrpc.Envelope, raw []byte, token jsonrpc.ID) bool {
	if env.Method != "notifications/progress" || env.ProgressToken != token {
		return false
	}
	var p struct {
		Params floodProgress `json:"params"`
	}
	return json.Unmarshal(raw, &p) == nil && p.Params.Total != nil && p.Params.Progress >= *p.Params.Total
}

func floodCount(r Role) string {
	if n, ok := r.Arguments["count"]; ok {
		return fmt.Sprint(n)
	}
	return "?"
}

// ---- FLOW-FINAL-ARRIVES ----

func flowFinalArrives(h *H) {
	if h.Target().Via() == protocol.TransportHTTP {
		flowFinalHTTP(h)
		return
	}
	g := newGate()
	c := connectGated(h, g)
	c.Link.Transcript().SetLimit(flowTranscriptLimit)
	id, token := jsonrpc.StringID("flow-final-1"), jsonrpc.StringID("flow-final-token")
	from := c.W.Len()
	g.stop()
	c.StartRole("flood", id, token)
	resume := time.AfterFunc(flowStall, g.resume)
	defer resume.Stop()
	isFinal := func(m clients.Message) bool { return m.Env.Kind.IsReply() && m.Env.ID == id }
	m, ok := c.WaitFirst(from, h.Cfg().CallTimeout, func(m clients.Message) bool {
		return isFinal(m) || isLastProgress(m.Env, m.Raw, token)
	})
	if !ok {
		h.Failf("the flood got neither its last progress nor its final response %s after a %s reading stall", c.Silence(h.Cfg().CallTimeout), flowStall)
	}
	if !isFinal(m) {
		if _, ok := c.WaitFirst(m.Seq+1, h.Cfg().OpTimeout, isFinal); !ok {
			h.Failf("the final response to %s never arrived after a %s reading stall: the last progress came (%s), then nothing %s", id, flowStall, m.Raw, c.Silence(h.Cfg().OpTimeout))
		}
	}
	c.Ping("after the flood")
	n := judgeFlood(h, c.W.Since(from), id, token)
	h.Notef("after a %s reading stall the final response arrived; %d of %s progress notifications, strictly increasing", flowStall, n, floodCount(h.Role("flood")))
}

// throttleStream limits the call's response stream toward the client.
func throttleStream(token jsonrpc.ID) faultproxy.Rule {
	return faultproxy.Rule{
		Name:  "slow-consumer",
		Match: faultproxy.Match{Dir: faultproxy.ServerToClient, Method: "notifications/progress", ProgressToken: token},
		Nth:   1,
		Fault: faultproxy.Throttle{BytesPerSecond: flowThrottle},
	}
}

func flowFinalHTTP(h *H) {
	id, token := jsonrpc.StringID("flow-final-1"), jsonrpc.StringID("flow-final-token")
	c := h.ConnectHTTP(throttleStream(token))
	c.Proxy.Transcript().SetLimit(flowTranscriptLimit)
	call, st, how, done := floodStalled(h, c, id, token)
	defer done()
	isFinal := isReplyTo(id)
	e, ok := c.WaitEvent(call, h.Cfg().CallTimeout, func(e clients.StreamEvent) bool {
		return isFinal(e) || (e.HasData && isLastProgress(jsonrpc.Parse([]byte(e.Data)), []byte(e.Data), token))
	})
	if !ok {
		h.Failf("the flood got neither its last progress nor its final response within %s after %s (stream: %v)%s", h.Cfg().CallTimeout, how, call.EndErr(), c.ExitHint())
	}
	if !isFinal(e) {
		if _, ok := c.WaitEvent(call, h.Cfg().OpTimeout, isFinal); !ok {
			h.Failf("the final response to %s never arrived after %s: the last progress came (%s), then the stream %s (probe %+v)", id, how, e.Data, streamEnd(call), st)
		}
	}
	httpBarrier(h, c, "after the flood")
	n := judgeFlood(h, call.Messages(), id, token)
	h.Notef("after %s the final response arrived; %d of %s progress notifications, strictly increasing", how, n, floodCount(h.Role("flood")))
}

// floodStalled starts the flood role on a client of its own that stops
// reading the response (behind the proxy's throttle) until the role's probe
// reports the flood's work done — or, without a probe, for flowStall —
// and then reads on. It returns the call, the last probe report and what
// the consumer did, for reasons.
func floodStalled(h *H, c *HConn, id, token jsonrpc.ID) (call *clients.HTTPCall, st probeState, how string, done func()) {
	p := h.Role("flood").Probe
	tool, _ := p["tool"].(string)
	tagArg, _ := p["tag"].(string)
	g := newGate()
	fw := clients.NewHTTPWire(c.Proxy.URL(), clients.HTTPOptions{ClientName: "mcp-conform", Client: gatedHTTPClient(g)})
	done = func() { g.release(); _ = fw.Close() }
	ctx, cancel := context.WithTimeout(h.Ctx(), h.Cfg().StartTimeout)
	err := h.Settle(ctx, fw)
	cancel()
	if err != nil {
		done()
		h.Errorf("second client for the flood: %v%s", err, c.ExitHint())
	}
	var extra map[string]any
	tag := unique("flood")
	if tool != "" && tagArg != "" {
		extra = map[string]any{tagArg: tag}
	}
	args := map[string]any{}
	for k, v := range h.Role("flood").Arguments {
		args[k] = v
	}
	for k, v := range extra {
		args[k] = v
	}
	g.stop()
	call, err = fw.Start(h.Ctx(), id, "tools/call", fw.ProgressParams(token, map[string]any{"name": h.Role("flood").Tool, "arguments": args}))
	if err != nil {
		done()
		h.FailServer("tools/call %s: %v%s", h.Role("flood").Tool, err, c.ExitHint())
	}
	how = fmt.Sprintf("a %d B/s consumer that stopped reading for %s", flowThrottle, flowStall)
	if extra == nil {
		t := time.NewTimer(flowStall)
		select {
		case <-t.C:
		case <-h.Ctx().Done():
		}
		t.Stop()
		g.resume()
		return call, st, how, done
	}
	if c.W.Session().Era != clients.EraModern {
		// The probing client's 2025 session may have idled out while the
		// flood's own client was set up: open a fresh one.
		ctx, cancel := context.WithTimeout(h.Ctx(), h.Cfg().StartTimeout)
		err := h.Settle(ctx, c.W)
		cancel()
		if err != nil {
			done()
			h.FailServer("the server did not accept a new session to probe the flood: %v%s", err, c.ExitHint())
		}
	}
	deadline := time.Now().Add(h.Cfg().CallTimeout)
	for {
		st = floodProbe(h, c, tool, tagArg, tag)
		if st.Finished || st.Cancelled || time.Now().After(deadline) {
			break
		}
		t := time.NewTimer(20 * time.Millisecond)
		select {
		case <-t.C:
		case <-h.Ctx().Done():
			t.Stop()
			done()
			h.Errorf("interrupted while polling the probe")
		}
	}
	g.resume()
	return call, st, fmt.Sprintf("a %d B/s consumer that stopped reading until the server reported the flood's work done", flowThrottle), done
}

// httpBarrier pings the server after a long stream. A 2025 session may
// have expired by its idle policy while a throttled consumer drained what
// the server had long finished sending: the barrier then opens a new
// session, since what it asks is whether the server is alive.
func httpBarrier(h *H, c *HConn, why string) {
	if c.W.Session().Era != clients.EraModern {
		ctx, cancel := h.Op()
		err := h.Settle(ctx, c.W)
		cancel()
		if err != nil {
			h.FailServer("the server did not accept a new session %s: %v%s", why, err, c.ExitHint())
		}
	}
	c.Ping(why)
}

// streamEnd says how a call's stream stands.
func streamEnd(call *clients.HTTPCall) string {
	select {
	case <-call.Ended():
		return fmt.Sprintf("ended without it (%v)", call.EndErr())
	default:
		return "stayed open without it"
	}
}

// ---- FLOW-SERVER-BOUNDED ----

// flowBacklogBound is the most messages a server may hold unsent for one
// slow consumer before the check says its queue is unbounded: a bounded
// buffer of a few hundred messages passes with a wide margin, a queue that
// grows with the flood (thousands, for the reference's 5000) does not.
const flowBacklogBound = 1024

func flowServerBounded(h *H) {
	p := h.Role("flood").Probe
	tool, _ := p["tool"].(string)
	tagArg, _ := p["tag"].(string)
	if tool == "" || tagArg == "" {
		h.Skip("the flood role declares no probe (probe: {tool, tag}): the server's own queue is not observable from outside")
	}
	id, token := jsonrpc.StringID("flow-bounded-1"), jsonrpc.StringID("flow-bounded-token")
	c := h.ConnectHTTP(throttleStream(token))
	c.Proxy.Transcript().SetLimit(flowTranscriptLimit)
	call, st, how, done := floodStalled(h, c, id, token)
	got := len(call.Messages())
	done()
	if st.BacklogPeak == nil {
		// A probe that does not report the backlog says nothing about the
		// queue: its absence is not a peak of 0.
		h.Skip(fmt.Sprintf("the flood role's probe %s does not report backlogPeak (it answered %v): the server's own queue is not observable from outside", tool, st))
	}
	if !st.Finished {
		h.Failf("the flood's work did not finish within %s while the consumer was stalled (probe %v)", h.Cfg().CallTimeout, st)
	}
	peak := *st.BacklogPeak
	if peak > flowBacklogBound {
		h.Failf("the server held up to %d messages unsent for %s (bound %d): its queue grew with the flood of %s (the client had read %d; probe %v)",
			peak, how, flowBacklogBound, floodCount(h.Role("flood")), got, st)
	}
	h.Notef("with %s, the server's queue peaked at %d unsent messages (bound %d); the client had read %d", how, peak, flowBacklogBound, got)
}

// floodProbe asks the probe about tag. A 2025 session that the server let
// expire by its idle policy (a loaded machine can leave a gap between two
// polls) is replaced by a new one, once: whether the session lives is not
// what the FLOW checks ask.
func floodProbe(h *H, c *HConn, tool, tagArg, tag string) probeState {
	for retry := 0; ; retry++ {
		ctx, cancel := h.Op()
		m, err := c.W.Call(ctx, "tools/call", map[string]any{"name": tool, "arguments": probeArgs(tagArg, tag)})
		cancel()
		if err != nil {
			h.Errorf("probe tool %s: %v", tool, err)
		}
		if m.Env.Kind == jsonrpc.ErrorReply && c.W.Session().Era != clients.EraModern && retry == 0 {
			ctx, cancel := h.Op()
			err := h.Settle(ctx, c.W)
			cancel()
			if err != nil {
				h.FailServer("the server did not accept a new session to probe the flood: %v%s", err, c.ExitHint())
			}
			continue
		}
		st, err := readProbe(m, tagArg, tag)
		if err != nil {
			h.Errorf("probe tool %s: %v", tool, err)
		}
		return st
	}
}

// ---- an HTTP client whose response bodies a gate holds ----

// gatedHTTPClient returns an HTTP client whose response bodies read only
// while g is open.
func gatedHTTPClient(g *gate) *http.Client {
	// A fixed receive buffer (no autotuning): a consumer that stops
	// reading must not have the kernel read megabytes on its behalf.
	d := &net.Dialer{Timeout: 10 * time.Second, Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = setRecvBuffer(fd, 128<<10)
		}); err != nil {
			return err
		}
		return serr
	}}
	return &http.Client{
		Transport:     gatedTransport{rt: &http.Transport{DisableCompression: true, DialContext: d.DialContext}, g: g},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

type gatedTransport struct {
	rt *http.Transport
	g  *gate
}

func (t gatedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(r)
	if err == nil {
		resp.Body = &gatedBody{ReadCloser: resp.Body, g: t.g, closed: make(chan struct{})}
	}
	return resp, err
}

type gatedBody struct {
	io.ReadCloser
	g      *gate
	once   sync.Once
	closed chan struct{}
}

func (b *gatedBody) Read(p []byte) (int, error) {
	b.g.mu.Lock()
	open := b.g.open
	b.g.mu.Unlock()
	select {
	case <-open:
	case <-b.closed:
		return 0, io.ErrClosedPipe
	case <-b.g.closed:
		return 0, io.ErrClosedPipe
	}
	return b.ReadCloser.Read(p)
}

func (b *gatedBody) Close() error {
	b.once.Do(func() { close(b.closed) })
	return b.ReadCloser.Close()
}

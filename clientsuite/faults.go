package clientsuite

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// The faults of this package's scenarios, built on faultproxy's Conduit
// (as faultproxy's own faults are): each makes a scenario's timing
// message-triggered, so that what a check judges does not depend on how
// fast the client under test happens to run.

// ---- tools-call: the server's ping, answered before the calls end ----

// serverPing sends the client one ping request and keeps the client's
// calls from ending before it answered: every tools/call reply is held
// until the client's answer to the ping has passed (or hold, the check's
// bound on "promptly", has elapsed), so that a client that shuts down as
// soon as its calls end still has the whole bound to answer, and only a
// client that does not answer fails. One value is the fault of the
// scenario's rules: the one that sends the ping (after
// notifications/initialized on stdio; before the first progress
// notification on HTTP) and the one that holds the replies, which sends
// the ping itself when the first did not (a call without progress).
type serverPing struct {
	hold time.Duration

	mu   sync.Mutex
	sent bool
}

var _ faultproxy.Fault = (*serverPing)(nil)

// pingAnswer matches the client's answer to the ping.
var pingAnswer = faultproxy.Match{Dir: faultproxy.ClientToServer, ID: jsonrpc.ID(PingID)}

// claim reports whether the ping is still to be sent, and marks it sent.
func (p *serverPing) claim() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	first := !p.sent
	p.sent = true
	return first
}

// Apply sends the ping around msg (once) and holds tools/call replies.
func (p *serverPing) Apply(_ context.Context, c faultproxy.Conduit, msg *faultproxy.Message) {
	env := msg.Envelope()
	switch {
	case msg.Dir == faultproxy.ClientToServer: // notifications/initialized (stdio): the ping follows it
		_ = c.Deliver(msg)
		if p.claim() {
			c.Record(msg, "inject", faultproxy.OutcomeDelivered, "the server's ping is sent after this message")
			_ = c.Inject(faultproxy.ServerToClient, pingRequest)
		}
	case env.Kind.IsReply(): // a tools/call reply: held until the ping is answered
		if p.claim() {
			c.Record(msg, "inject", faultproxy.OutcomeHeld, "the server's ping is sent before this reply")
			_ = c.Inject(faultproxy.ServerToClient, pingRequest)
		}
		c.Record(msg, "hold", faultproxy.OutcomeHeld, fmt.Sprintf("held until the client answers the server's ping (at most %s): the calls do not end before it could", p.hold))
		c.Go(func(ctx context.Context) {
			wctx, cancel := context.WithTimeout(ctx, p.hold)
			defer cancel()
			err := c.WaitPassed(wctx, pingAnswer)
			switch {
			case err == nil:
				c.Record(msg, "release", faultproxy.OutcomeReleased, "the client answered the ping")
			case ctx.Err() != nil:
				c.Record(msg, "hold", faultproxy.OutcomeDropped, "link closed while held; message not delivered")
				return
			default:
				c.Record(msg, "release", faultproxy.OutcomeReleased, fmt.Sprintf("no answer to the ping within %s; released anyway", p.hold))
			}
			_ = c.Deliver(msg)
		})
	default: // the first progress notification of a call (HTTP): the ping goes before it, on its stream
		if p.claim() {
			c.Record(msg, "inject", faultproxy.OutcomeDelivered, "the server's ping is sent before this message, on its stream")
			_ = c.Inject(faultproxy.ServerToClient, pingRequest)
		}
		_ = c.Deliver(msg)
	}
}

// pingRules are tools-call's rules in 2025: the ping, and the hold of the
// replies until it is answered.
func pingRules(tr string, hold time.Duration) []faultproxy.Rule {
	p := &serverPing{hold: hold}
	send := faultproxy.Rule{Name: "server-ping-before-first-progress",
		Match: faultproxy.Match{Dir: faultproxy.ServerToClient, Method: "notifications/progress"}, Times: 1, Fault: p}
	if tr == Stdio {
		send = faultproxy.Rule{Name: "server-ping-after-initialized",
			Match: faultproxy.Match{Dir: faultproxy.ClientToServer, Method: "notifications/initialized"}, Times: 1, Fault: p}
	}
	return []faultproxy.Rule{send, {Name: "hold-call-results-until-ping-answered",
		Match: faultproxy.Match{Dir: faultproxy.ServerToClient, RepliesTo: "tools/call"}, Fault: p}}
}

// ---- herd: one client at a time, each reconnection measured alone ----

// Rule names of the herd conductor, as the transcript shows them.
const (
	ruleHerdGate      = "herd-gate"
	ruleHerdReconnect = "herd-reconnect"
	ruleHerdCut       = "herd-cut"
	ruleHerdResults   = "herd-hold-results"
)

// herdConductor paces the herd so that each client's reconnection delay
// is measured alone, with no other client competing for the CPU (eight
// client processes reconnecting at the same instant on a small machine
// serialise on it, and that alone spreads clients that have no jitter over
// 100-200 ms; a node client starting up beside one that reconnects delays
// it by hundreds of milliseconds). It gathers the clients' calls of the
// tool at a gate until every client's call is there (or gather after the
// first came: nothing is timed from the run's start, however long a client
// took to start), then lets them in one at a time, in the order they came;
// cuts the stream of the call let in right after its first progress
// notification; and lets the next call in once that client reconnected (a
// GET of its session after the cut, or its call sent again), or pace after
// the cut when it does not. While one client reconnects, the others wait at
// the gate, idle; and the calls' results are held until the last turn
// ended, so that no client exits (a node process tearing down) while
// another's reconnection is timed. Each client's delay is timed from its own cut
// (CLIENT-HERD-JITTER). Calls sent again (2026-07-28's re-issue) and
// resumed streams pass untouched; a call that comes after the gate opened
// queues for its turn.
type herdConductor struct {
	// n is how many clients the herd has; gather bounds the wait for all
	// their calls; pace bounds the wait for a client's reconnection
	// before the next call is let in; hold bounds a call's wait at the
	// gate.
	n                  int
	gather, pace, hold time.Duration

	mu      sync.Mutex
	tagOf   map[string]string // the stream of each client's first call → its tag
	seen    map[string]bool   // tags whose first call arrived
	cut     map[string]bool   // streams cut
	waiting []*herdCall       // calls at the gate, in arrival order
	open    bool              // the gate opened (every call came, or gather elapsed)
	turn    int               // the turn in progress (1-based); 0 before the first
	busy    bool              // a call was let in and its client has not reconnected yet
	current *herdCall         // the turn's call
	// cutDone is set once the turn's stream was cut.
	cutDone bool
	// gathered: every client's call came, or gather elapsed; done is
	// closed once the gate is open, gathered, and no turn is left.
	gathered bool
	done     chan struct{}
	doneOnce sync.Once
}

// herdCall is one client's first call of the tool.
type herdCall struct {
	stream, tag, session string
	n                    int           // its turn's number, once its turn came
	turn                 chan struct{} // closed at its turn
}

var _ faultproxy.Fault = (*herdConductor)(nil)

func newHerdConductor(n int, gather, pace, hold time.Duration) *herdConductor {
	return &herdConductor{n: n, gather: gather, pace: pace, hold: hold,
		tagOf: map[string]string{}, seen: map[string]bool{}, cut: map[string]bool{}, done: make(chan struct{})}
}

// herdRules are the herd's rules for n clients: the gate on the calls, the
// watch for reconnections, the cut at the first progress, the hold of the
// results.
func herdRules(n int, gather, pace, hold time.Duration) []faultproxy.Rule {
	h := newHerdConductor(n, gather, pace, hold)
	return []faultproxy.Rule{
		{Name: ruleHerdGate, Match: faultproxy.Match{Dir: faultproxy.ClientToServer, Method: "tools/call"}, Fault: h},
		{Name: ruleHerdReconnect, Match: faultproxy.Match{Dir: faultproxy.ClientToServer, HTTPMethod: "GET"}, Fault: h},
		{Name: ruleHerdCut, Match: faultproxy.Match{Dir: faultproxy.ServerToClient, Method: "notifications/progress"}, Fault: h},
		{Name: ruleHerdResults, Match: faultproxy.Match{Dir: faultproxy.ServerToClient, RepliesTo: "tools/call"}, Fault: h},
	}
}

// callTag is arguments.tag of a tools/call message.
func callTag(env jsonrpc.Envelope) string {
	var p struct {
		Arguments struct {
			Tag string `json:"tag"`
		} `json:"arguments"`
	}
	_ = json.Unmarshal(env.Params, &p)
	return p.Arguments.Tag
}

// Apply dispatches on what msg is.
func (h *herdConductor) Apply(_ context.Context, c faultproxy.Conduit, msg *faultproxy.Message) {
	switch {
	case msg.Dir == faultproxy.ServerToClient && msg.Envelope().Kind.IsReply():
		h.result(c, msg)
	case msg.Dir == faultproxy.ServerToClient:
		h.progress(c, msg)
	case msg.HTTPMethod == "GET":
		// Only the turn's client's GET ends the turn: another client's
		// (its standalone stream, opened after it initialized) says
		// nothing about the reconnection being timed.
		h.mu.Lock()
		if h.busy && h.cutDone && h.current != nil && (h.current.session == "" || h.current.session == msg.Session) {
			h.advanceLocked()
		}
		h.mu.Unlock()
		_ = c.Deliver(msg)
	default:
		h.call(c, msg)
	}
}

// call holds a client's first call at the gate until its turn; a call sent
// again passes.
func (h *herdConductor) call(c faultproxy.Conduit, msg *faultproxy.Message) {
	tag := callTag(msg.Envelope())
	h.mu.Lock()
	if tag == "" || h.seen[tag] {
		if tag != "" && h.busy && h.cutDone && h.current != nil && h.current.tag == tag {
			h.advanceLocked()
		}
		h.mu.Unlock()
		_ = c.Deliver(msg)
		return
	}
	h.seen[tag] = true
	h.tagOf[msg.Stream] = tag
	hc := &herdCall{stream: msg.Stream, tag: tag, session: msg.Session, turn: make(chan struct{})}
	h.waiting = append(h.waiting, hc)
	n := len(h.waiting)
	if !h.open && len(h.seen) == 1 {
		time.AfterFunc(h.gather, func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.gathered = true
			h.openLocked()
			h.checkDoneLocked()
		})
	}
	if len(h.seen) >= h.n {
		h.gathered = true
	}
	if !h.open && h.gathered {
		h.openLocked()
	} else if h.open && !h.busy {
		h.advanceLocked()
	}
	h.mu.Unlock()
	c.Record(msg, "gate", faultproxy.OutcomeHeld, fmt.Sprintf("%s's call waits at the gate (%d waiting): the calls go in one at a time, once all %d clients called, so that one client reconnects at a time", tag, n, h.n))
	c.Go(func(ctx context.Context) {
		t := time.NewTimer(h.hold)
		defer t.Stop()
		select {
		case <-hc.turn:
			c.Record(msg, "release", faultproxy.OutcomeReleased, fmt.Sprintf("herd turn %d: %s's call goes in", hc.n, tag))
		case <-t.C:
			h.mu.Lock()
			h.dropWaitingLocked(hc)
			h.checkDoneLocked()
			h.mu.Unlock()
			c.Record(msg, "release", faultproxy.OutcomeReleased, fmt.Sprintf("no turn within %s; released anyway", h.hold))
		case <-ctx.Done():
			c.Record(msg, "gate", faultproxy.OutcomeDropped, "link closed while held; message not delivered")
			return
		}
		_ = c.Deliver(msg)
	})
}

// openLocked opens the gate (once): the first turn begins.
func (h *herdConductor) openLocked() {
	if h.open {
		return
	}
	h.open = true
	if !h.busy {
		h.advanceLocked()
	}
}

// paceLocked lets the next call in d after now if turn is still in
// progress then. Its timer is not the link's (Conduit.Go): a goroutine
// there would be work pending on the message's exchange, which would hold
// the exchange open until the timer fired.
func (h *herdConductor) paceLocked(turn int, d time.Duration) {
	time.AfterFunc(d, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.turn == turn && h.busy {
			h.advanceLocked()
		}
	})
}

// advanceLocked ends the turn in progress, if any, and lets the next
// waiting call in.
func (h *herdConductor) advanceLocked() {
	h.busy, h.current = false, nil
	if len(h.waiting) == 0 {
		h.checkDoneLocked()
		return
	}
	next := h.waiting[0]
	h.waiting = h.waiting[1:]
	h.turn++
	h.busy, h.cutDone, h.current = true, false, next
	next.n = h.turn
	h.paceLocked(h.turn, 2*h.pace) // a call that never reports progress does not stall the herd
	close(next.turn)
}

// checkDoneLocked closes done once no turn is left.
func (h *herdConductor) checkDoneLocked() {
	if h.open && h.gathered && !h.busy && len(h.waiting) == 0 {
		h.doneOnce.Do(func() { close(h.done) })
	}
}

// result holds a call's result until the herd's last turn ended (at most
// hold), then delivers it.
func (h *herdConductor) result(c faultproxy.Conduit, msg *faultproxy.Message) {
	select {
	case <-h.done:
		_ = c.Deliver(msg)
		return
	default:
	}
	c.Record(msg, "hold", faultproxy.OutcomeHeld, "held until the herd's last turn ended: no client exits while another's reconnection is timed")
	c.Go(func(ctx context.Context) {
		t := time.NewTimer(h.hold)
		defer t.Stop()
		select {
		case <-h.done:
			c.Record(msg, "release", faultproxy.OutcomeReleased, "the herd's last turn ended")
		case <-t.C:
			c.Record(msg, "release", faultproxy.OutcomeReleased, fmt.Sprintf("the herd's turns did not end within %s; released anyway", h.hold))
		case <-ctx.Done():
			c.Record(msg, "hold", faultproxy.OutcomeDropped, "link closed while held; message not delivered")
			return
		}
		_ = c.Deliver(msg)
	})
}

func (h *herdConductor) dropWaitingLocked(hc *herdCall) {
	for i, w := range h.waiting {
		if w == hc {
			h.waiting = append(h.waiting[:i], h.waiting[i+1:]...)
			return
		}
	}
}

// progress cuts the turn's stream right after its first progress
// notification; every other message passes.
func (h *herdConductor) progress(c faultproxy.Conduit, msg *faultproxy.Message) {
	h.mu.Lock()
	tag, first := h.tagOf[msg.Stream], !h.cut[msg.Stream]
	doCut := tag != "" && first && h.current != nil && msg.Stream == h.current.stream
	if doCut {
		h.cut[msg.Stream] = true
		h.cutDone = true
		h.paceLocked(h.turn, h.pace)
	}
	turn := h.turn
	h.mu.Unlock()
	st := c.Stream()
	if !doCut || st == nil {
		_ = c.Deliver(msg)
		return
	}
	_ = c.Deliver(msg)
	c.Record(msg, "cut", faultproxy.OutcomeDelivered, fmt.Sprintf("herd turn %d: %s's stream is cut after its first progress", turn, tag))
	st.Cut("rule " + c.Rule())
}

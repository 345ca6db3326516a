package clientsuite

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/reports"
)

// Finding is what a judge made of one run.
type Finding int

// The findings.
const (
	// Held: the clause held (PASS).
	Held Finding = iota
	// Broken: the client broke the clause (FAIL for a MUST, WARN for a
	// SHOULD).
	Broken
	// NotApplicable: the run gives nothing to judge (SKIP, with why).
	NotApplicable
	// Unjudgeable: the run did not happen as the scenario needs (the
	// client never made the call, the harness failed): ERROR.
	Unjudgeable
)

type judgeFunc func(r *Run) (Finding, string)

// Judge decides check c on run r.
func (c *Check) Judge(r *Run) (Finding, string) {
	if r.HarnessErr != nil {
		return Unjudgeable, "the harness could not run " + r.Scenario.Name + ": " + r.HarnessErr.Error()
	}
	if r.Unsupported() {
		return NotApplicable, "the driver does not support " + r.Scenario.Name + " (exit 2)" + stderrTail(r)
	}
	if c.Hygiene() && r.Scenario.NumClients() > 1 {
		return NotApplicable, "not judged on the herd (several clients share the transcript)"
	}
	if got := r.Negotiated(); got == "" {
		if c.Hygiene() {
			return NotApplicable, "the client sent no request in " + r.Scenario.Name + clientExit(r)
		}
		return Unjudgeable, "the client sent no request" + clientExit(r)
	} else if got != r.Version {
		return NotApplicable, fmt.Sprintf("the client negotiated %s, not %s (does it speak %s?)", got, r.Version, r.Version)
	}
	return c.judge(r)
}

// Status turns a finding into a verdict at level.
func Status(f Finding, level reports.Level) reports.Status {
	switch f {
	case Held:
		return reports.Pass
	case Broken:
		if level == reports.Must {
			return reports.Fail
		}
		return reports.Warn
	case NotApplicable:
		return reports.Skip
	}
	return reports.Error
}

// Negotiated returns the protocol version the client spoke in the run: the
// initialize result's (2025), else the _meta protocolVersion of its
// requests (2026-07-28); "" when it sent no request.
func (r *Run) Negotiated() string {
	v := r.View()
	reqs := v.ClientRequests()
	if len(reqs) == 0 {
		return ""
	}
	for _, m := range reqs {
		if m.Env.Method != "initialize" {
			continue
		}
		if rep, ok := v.Reply(m.Env.ID, m.Index); ok {
			var ver string
			if raw := resultField(rep, "protocolVersion"); raw != nil {
				_ = json.Unmarshal(raw, &ver)
				if ver != "" {
					return ver
				}
			}
		}
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(m.Env.Params, &p)
		if p.ProtocolVersion != "" && !strings.HasPrefix(r.Version, "2026") {
			return p.ProtocolVersion
		}
	}
	for _, m := range reqs {
		if mv := metaVersion(m); mv != "" {
			return mv
		}
	}
	if isLegacy(r.Version) {
		return r.Version // requests without initialize: judged as sent
	}
	return ""
}

// ---- helpers ----

// slack is the tolerance of a late event, scaled.
func (r *Run) slack(d time.Duration) time.Duration {
	s := r.Scale
	if s <= 0 {
		s = 1
	}
	return time.Duration(float64(d) * s)
}

const (
	// lateSlack is how late after its timeout a cancellation may come.
	lateSlack = time.Second
	// earlyTolerance is how early a timed event may come (clock and
	// scheduling noise).
	earlyTolerance = 50 * time.Millisecond
	// exitSlack: a 2026 HTTP stream closed this close to the client's exit
	// was closed by the exit, not by a cancellation.
	exitSlack = 300 * time.Millisecond
	// herdMinSpread is the least spread of the herd's reconnection delays
	// that shows jitter. Each delay is measured alone (the herd conductor
	// lets one client reconnect at a time), so a client without jitter
	// shows only its own wake-up noise, a few milliseconds, not the
	// 100-200 ms that eight processes reconnecting at the same instant on
	// two cores take to get through the CPU one after the other; the
	// seeds' jitter draws attempt 0 from [0, 250 ms).
	herdMinSpread = 100 * time.Millisecond
	// herdCap bounds a first reconnection (the backoff cap, 8 s, and
	// margin).
	herdCap = 10 * time.Second
	// pingPrompt bounds the answer to a ping.
	pingPrompt = 5 * time.Second
	// cancelGrace is how long after a response reached the client a
	// cancellation still counts as crossing it.
	cancelGrace = time.Second
)

func msOf(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }

func stderrTail(r *Run) string {
	if len(r.Clients) == 0 {
		return ""
	}
	s := strings.TrimSpace(r.Clients[0].Stderr)
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	return ": " + strings.TrimSpace(lines[len(lines)-1])
}

func clientExit(r *Run) string {
	if len(r.Clients) == 0 {
		return ""
	}
	p := r.Clients[0]
	switch {
	case p.StartErr != nil:
		return " (it could not be started: " + p.StartErr.Error() + ")"
	case p.Killed:
		return " (killed at the deadline)"
	}
	return fmt.Sprintf(" (the driver exited %d%s)", p.ExitCode, stderrTail(r))
}

// firstCall is the first tools/call of the scenario's tool, or an
// Unjudgeable reason.
func firstCall(r *Run) (*Msg, string) {
	calls := r.View().ToolCalls(r.Params.Tool)
	if len(calls) == 0 {
		return nil, "the client never called " + r.Params.Tool + clientExit(r)
	}
	return calls[0], ""
}

// modernHTTP reports whether the run is Streamable HTTP in 2026-07-28.
func (r *Run) modernHTTP() bool { return r.Transport == HTTP && !isLegacy(r.Version) }

// cancellation finds how the client cancelled request c: the
// notifications/cancelled naming it (stdio, 2025 HTTP) or the close of its
// response stream (2026 HTTP). ok is false when it did not.
func cancellation(r *Run, c *Msg) (at time.Duration, index int, how string, ok bool) {
	v := r.View()
	if r.modernHTTP() {
		if n, ok := v.ClientClosed(c.Stream); ok {
			return n.At, n.Index, "closing the response stream", true
		}
		return 0, 0, "", false
	}
	if cs := v.CancelsOf(c.Env.ID); len(cs) > 0 {
		return cs[0].At, cs[0].Index, "notifications/cancelled", true
	}
	return 0, 0, "", false
}

// clockSignal is the client's cancellation of c by either signal (for
// the clock checks, which judge when, not how): its notifications/cancelled,
// or the close of its response stream — except a close that came as the
// client process ended (HTTP: within exitSlack of its exit), which is the
// shutdown's and not a clock's, as on stdio, where a shutdown closes no
// request's stream.
func clockSignal(r *Run, c *Msg) (time.Duration, bool) {
	v := r.View()
	best, found := time.Duration(0), false
	if cs := v.CancelsOf(c.Env.ID); len(cs) > 0 {
		best, found = cs[0].At, true
	}
	if c.Stream != "" {
		if n, ok := v.ClientClosed(c.Stream); ok && !closedAtExit(r, n.At) && (!found || n.At < best) {
			best, found = n.At, true
		}
	}
	return best, found
}

// closedAtExit reports whether a stream closed at at closed because the
// (first) client process ended.
func closedAtExit(r *Run, at time.Duration) bool {
	return len(r.Clients) > 0 && r.Clients[0].ExitAt > 0 && at >= r.Clients[0].ExitAt-r.slack(exitSlack)
}

// exitClose returns the note of c's response stream closing as the client
// process ended, if it did.
func exitClose(r *Run, c *Msg) (faultproxy.Entry, bool) {
	if c.Stream == "" {
		return faultproxy.Entry{}, false
	}
	if n, ok := r.View().ClientClosed(c.Stream); ok && closedAtExit(r, n.At) {
		return n, true
	}
	return faultproxy.Entry{}, false
}

// clockFired is when a clock of the client ended call c, and how it shows:
// its cancellation (clockSignal), or the driver's outcome line "timeout"
// when the grader knows when it came (HTTP), whichever is first.
func clockFired(r *Run, c *Msg) (time.Duration, string, bool) {
	at, ok := clockSignal(r, c)
	how := "cancelled"
	if o, found := outcomeOf(r, r.Params.Tool); found && o.Outcome == "timeout" && o.Stamped && (!ok || o.At < at) {
		at, how, ok = o.At, "timed out", true
	}
	return at, how, ok
}

// progressOf are the delivered progress notifications of c's token.
func progressOf(r *Run, c *Msg) []*Msg {
	if c.Env.ProgressToken.IsZero() {
		return nil
	}
	var out []*Msg
	for _, m := range r.View().Msgs {
		if m.Dir == faultproxy.ServerToClient && m.Env.Method == "notifications/progress" && m.Env.ProgressToken == c.Env.ProgressToken {
			if _, ok := m.Delivered(); ok {
				out = append(out, m)
			}
		}
	}
	return out
}

// lostAnswer reports whether the proxy dropped an answer to c.
func lostAnswer(r *Run, c *Msg) bool {
	for _, m := range r.View().Msgs {
		if m.Dir == faultproxy.ServerToClient && m.Env.Kind.IsReply() && m.Env.ID == c.Env.ID && m.Stopped {
			return true
		}
	}
	return false
}

// cutOf returns the proxy's cut of stream, if it cut it.
func cutOf(r *Run, stream string) (faultproxy.Entry, bool) {
	for _, f := range r.View().Faults {
		if f.Fault == "cut" && f.Stream == stream {
			return f, true
		}
	}
	return faultproxy.Entry{}, false
}

// outcomeOf is the driver's last outcome line for the tool.
func outcomeOf(r *Run, tool string) (Outcome, bool) {
	if len(r.Clients) == 0 {
		return Outcome{}, false
	}
	var o Outcome
	found := false
	for _, x := range r.Clients[0].Outcomes {
		if x.Tool == tool || x.Tool == "" {
			o, found = x, true
		}
	}
	return o, found
}

// sessionKey groups requests into sessions: the server process on stdio
// (incarnation), the Mcp-Session-Id on 2025 HTTP.
func sessionKey(r *Run, m *Msg) string {
	if r.Transport == Stdio {
		n := 0
		for _, note := range r.View().Notes {
			if note.Index < m.Index && strings.HasPrefix(note.Text, NoteServerStart) {
				n++
			}
		}
		return fmt.Sprint(n)
	}
	if m.Env.Method == "initialize" {
		// An initialize belongs to the session it creates: the id its
		// response head hands out.
		if h := r.View().RespHead[m.Stream]; h != nil {
			return http.Header(h.Header).Get("Mcp-Session-Id")
		}
		return ""
	}
	if m.Header != nil {
		return m.Header.Get("Mcp-Session-Id")
	}
	return ""
}

// decodeHeaderValue undoes the Base64 sentinel of Mcp-Name values.
func decodeHeaderValue(v string) string {
	if strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?=") {
		if b, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(strings.TrimPrefix(v, "=?base64?"), "?=")); err == nil {
			return string(b)
		}
	}
	return v
}

// percentile is the nearest-rank percentile of sorted values (as the herd
// command computes its latencies).
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*q+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func sortDurations(ds []time.Duration) { sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] }) }

func idText(id jsonrpc.ID) string {
	if id.IsZero() {
		return "(none)"
	}
	return string(id)
}

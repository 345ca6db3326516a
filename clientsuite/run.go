package clientsuite

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/sse"
)

// Run is what one run of a scenario left: the proxy's transcript (the
// evidence every check reads) and the client processes.
type Run struct {
	Scenario  *Scenario
	Transport string
	Version   string
	// Params are the scenario's parameters as given to the first client
	// (MCP_CONFORM_CONTEXT).
	Params Params
	// Entries is the proxy's transcript. On stdio it is the transcript of
	// each server process the client started, in order, each preceded by
	// a note (the times of each restart from 0).
	Entries []faultproxy.Entry
	// Clients are the client processes, in start order.
	Clients []Process
	// Servers counts the stdio server processes the client started.
	Servers int
	// HarnessErr is why the harness could not run the scenario (the run
	// then judges nothing: every check is ERROR).
	HarnessErr error
	// Scale is the factor the run's durations were multiplied by (1 by
	// default); the judges' tolerances follow it.
	Scale float64

	once sync.Once
	view *View
}

// Process is one client process of a run.
type Process struct {
	ID string
	// ExitCode is the process's exit status (-1 when it was killed or did
	// not start).
	ExitCode int
	// Killed is set when the grader ended it at the deadline.
	Killed bool
	// StartErr is why it could not be started.
	StartErr error
	// ExitAt is when it ended, on the transcript's clock (HTTP; zero on
	// stdio, whose transcript has the server process's clock).
	ExitAt time.Duration
	// Stdout and Stderr are its output (bounded).
	Stdout, Stderr string
	// Outcomes are the outcome lines it printed.
	Outcomes []Outcome
}

// Outcome is one outcome line of a driver (docs/CLIENT-DRIVERS.md).
type Outcome struct {
	MCPConform string `json:"mcpConform"`
	Tool       string `json:"tool"`
	Outcome    string `json:"outcome"`
	Detail     string `json:"detail,omitempty"`
	// At is when the grader read the line, on the transcript's clock
	// (HTTP); Stamped says whether it is known (not on stdio, whose
	// transcript has the server process's clock).
	At      time.Duration `json:"-"`
	Stamped bool          `json:"-"`
}

// StampedLine is one line of a driver's stdout and when the grader read
// it, on the transcript's clock.
type StampedLine struct {
	Text string
	At   time.Duration
}

// StampOutcomes gives each outcome of outs the time of the stdout line it
// was read from (lines in the order they came; outcomes in ParseOutcomes'
// order).
func StampOutcomes(outs []Outcome, lines []StampedLine) {
	i := 0
	for _, l := range lines {
		if i >= len(outs) {
			return
		}
		if got := ParseOutcomes(l.Text); len(got) == 1 && got[0] == (Outcome{MCPConform: outs[i].MCPConform, Tool: outs[i].Tool, Outcome: outs[i].Outcome, Detail: outs[i].Detail}) {
			outs[i].At, outs[i].Stamped = l.At, true
			i++
		}
	}
}

// ParseOutcomes reads the outcome lines of a driver's stdout.
func ParseOutcomes(stdout string) []Outcome {
	var out []Outcome
	for _, line := range strings.Split(stdout, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var o Outcome
		if json.Unmarshal([]byte(line), &o) == nil && o.MCPConform == "outcome" {
			out = append(out, o)
		}
	}
	return out
}

// Unsupported reports whether the (single) client said it does not
// support the scenario (exit 2).
func (r *Run) Unsupported() bool {
	if len(r.Clients) == 0 {
		return false
	}
	for _, p := range r.Clients {
		if p.ExitCode != 2 || p.Killed {
			return false
		}
	}
	return true
}

// Msg is one message of a run's transcript, with what the transcript says
// about it.
type Msg struct {
	// Index is the entry's position in Run.Entries.
	Index int
	At    time.Duration
	Dir   faultproxy.Direction
	Seq   int64
	// Stream is the HTTP exchange ("POST#3"); empty on stdio.
	Stream string
	// HTTPMethod is the exchange's request method (HTTP).
	HTTPMethod string
	Env        jsonrpc.Envelope
	// Body is the JSON-RPC text (an SSE event's data).
	Body []byte
	// Synthetic marks a message the proxy injected.
	Synthetic bool
	// Comment marks an SSE comment (a heartbeat).
	Comment bool
	// EventID, HasEventID, Retry, HasRetry are the SSE fields of an event.
	EventID    string
	HasEventID bool
	Retry      int
	HasRetry   bool
	// Header is the request head of the message's exchange (c2s, HTTP).
	Header http.Header
	// Stopped is set when a fault kept the message from its destination.
	Stopped bool
	// Released is the entry index at which a held message went on (its
	// own index when it was not held; -1 when it never did).
	Released int
}

// View is a run's transcript, read once.
type View struct {
	Msgs []*Msg
	// Notes are the note and process entries, by index.
	Notes []faultproxy.Entry
	// RespHead is the response head of each HTTP exchange.
	RespHead map[string]*faultproxy.HTTPInfo
	// ReqHead is the request head of each HTTP exchange.
	ReqHead map[string]*faultproxy.HTTPInfo
	// Faults are the fault entries.
	Faults []faultproxy.Entry
}

// View returns the run's transcript, read.
func (r *Run) View() *View {
	r.once.Do(func() { r.view = newView(r.Entries) })
	return r.view
}

func newView(entries []faultproxy.Entry) *View {
	v := &View{RespHead: map[string]*faultproxy.HTTPInfo{}, ReqHead: map[string]*faultproxy.HTTPInfo{}}
	bySeq := map[int64]*Msg{}
	for i, e := range entries {
		e.Index = i // positions in Run.Entries, whatever the entries said
		switch e.Kind {
		case faultproxy.EntryHTTP:
			if e.HTTP == nil {
				continue
			}
			if e.Dir == faultproxy.ClientToServer {
				v.ReqHead[e.Stream] = e.HTTP
			} else {
				v.RespHead[e.Stream] = e.HTTP
			}
		case faultproxy.EntryMessage:
			m := &Msg{Index: i, At: e.At, Dir: e.Dir, Seq: e.Seq, Stream: e.Stream, Synthetic: e.Fault == "inject", Released: i}
			body := e.Raw
			if e.Stream != "" && e.Dir == faultproxy.ServerToClient && !json.Valid(bytes.TrimSpace(body)) {
				// An SSE event: its fields and its data.
				ev, err := sse.NewReader(bytes.NewReader(e.Raw), sse.Options{Lenient: true}).Next()
				if err == nil {
					m.Comment = ev.IsComment
					m.EventID, m.HasEventID = ev.ID, ev.HasID
					m.Retry, m.HasRetry = ev.Retry, ev.HasRetry
					body = []byte(ev.Data)
				}
			}
			m.Body = body
			if len(bytes.TrimSpace(body)) > 0 {
				m.Env = jsonrpc.Parse(body)
			}
			if h := v.ReqHead[e.Stream]; h != nil {
				m.HTTPMethod = h.Method
				m.Header = http.Header(h.Header)
			}
			v.Msgs = append(v.Msgs, m)
			if m.Seq != 0 {
				bySeq[m.Seq] = m
			}
		case faultproxy.EntryFault:
			v.Faults = append(v.Faults, e)
			m := bySeq[e.Seq]
			if m == nil {
				continue
			}
			switch e.Outcome {
			case faultproxy.OutcomeDropped, faultproxy.OutcomeReplaced, faultproxy.OutcomeCut, faultproxy.OutcomeReset, faultproxy.OutcomeAnswered:
				m.Stopped = true
			case faultproxy.OutcomeHeld:
				m.Released = -1 // until its release entry
			case faultproxy.OutcomeReleased:
				m.Released = i
			case 0:
				legacyFate(m, e, i)
			}
		case faultproxy.EntryNote, faultproxy.EntryProcess:
			v.Notes = append(v.Notes, e)
		}
	}
	return v
}

// ClientRequests are the requests the client sent (not the proxy's).
func (v *View) ClientRequests() []*Msg {
	var out []*Msg
	for _, m := range v.Msgs {
		if m.Dir == faultproxy.ClientToServer && !m.Synthetic && m.Env.Kind == jsonrpc.Request {
			out = append(out, m)
		}
	}
	return out
}

// ToolCalls are the client's tools/call requests for tool.
func (v *View) ToolCalls(tool string) []*Msg {
	var out []*Msg
	for _, m := range v.ClientRequests() {
		if m.Env.Method == "tools/call" && toolName(m) == tool {
			out = append(out, m)
		}
	}
	return out
}

// Delivered reports whether the message reached its destination, and the
// entry index at which it went on.
func (m *Msg) Delivered() (int, bool) {
	if m.Stopped || m.Released < 0 {
		return 0, false
	}
	return m.Released, true
}

// Reply returns the first delivered s2c reply to id after entry index
// from, if any.
func (v *View) Reply(id jsonrpc.ID, from int) (*Msg, bool) {
	for _, m := range v.Msgs {
		if m.Index <= from || m.Dir != faultproxy.ServerToClient || !m.Env.Kind.IsReply() || m.Env.ID != id {
			continue
		}
		if _, ok := m.Delivered(); ok {
			return m, true
		}
	}
	return nil, false
}

// CancelsOf are the client's notifications/cancelled naming id.
func (v *View) CancelsOf(id jsonrpc.ID) []*Msg {
	var out []*Msg
	for _, m := range v.Msgs {
		if m.Dir == faultproxy.ClientToServer && !m.Synthetic && m.Env.Method == "notifications/cancelled" && m.Env.CancelledID == id {
			out = append(out, m)
		}
	}
	return out
}

// Cancels are every notifications/cancelled the client sent.
func (v *View) Cancels() []*Msg {
	var out []*Msg
	for _, m := range v.Msgs {
		if m.Dir == faultproxy.ClientToServer && !m.Synthetic && m.Env.Method == "notifications/cancelled" {
			out = append(out, m)
		}
	}
	return out
}

// ClientClosed returns the note saying the client closed stream's
// response stream, if it did.
func (v *View) ClientClosed(stream string) (faultproxy.Entry, bool) {
	for _, n := range v.Notes {
		if n.Stream == stream && strings.HasPrefix(n.Text, "client closed the stream") {
			return n, true
		}
	}
	return faultproxy.Entry{}, false
}

// NoteIndex returns the first note whose text starts with prefix (and, when
// stream is set, on that stream).
func (v *View) NoteIndex(prefix, stream string) (faultproxy.Entry, bool) {
	for _, n := range v.Notes {
		if strings.HasPrefix(n.Text, prefix) && (stream == "" || n.Stream == stream) {
			return n, true
		}
	}
	return faultproxy.Entry{}, false
}

// params returns a message's params object.
func params(m *Msg) map[string]json.RawMessage {
	var p map[string]json.RawMessage
	_ = json.Unmarshal(m.Env.Params, &p)
	return p
}

// toolName is params.name of a tools/call.
func toolName(m *Msg) string {
	var name string
	_ = json.Unmarshal(params(m)["name"], &name)
	return name
}

// arguments is params.arguments of a tools/call, compacted.
func arguments(m *Msg) string {
	raw := params(m)["arguments"]
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return canonical(b.Bytes())
}

// canonical re-encodes JSON with sorted keys, for comparing arguments.
func canonical(raw []byte) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// metaVersion is params._meta["io.modelcontextprotocol/protocolVersion"].
func metaVersion(m *Msg) string {
	var meta map[string]json.RawMessage
	_ = json.Unmarshal(params(m)["_meta"], &meta)
	var v string
	_ = json.Unmarshal(meta["io.modelcontextprotocol/protocolVersion"], &v)
	return v
}

// resultField returns result[key] of a response.
func resultField(m *Msg, key string) json.RawMessage {
	var r map[string]json.RawMessage
	_ = json.Unmarshal(m.Env.Result, &r)
	return r[key]
}

// legacyFate reads a fault entry without an outcome (a transcript recorded
// before the proxy wrote outcomes) from its fault name and sentence.
func legacyFate(m *Msg, e faultproxy.Entry, i int) {
	switch e.Fault {
	case "drop", "status", "reset":
		m.Stopped = true
	case "cut":
		m.Stopped = strings.Contains(e.Text, "before")
	case "delay", "hold":
		if !strings.Contains(e.Text, "not delivered") {
			m.Released = -1
		}
	case "release":
		m.Released = i
	}
}

package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/internal/schema"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/reports"
)

// SCHEMA-VALID's machinery: every check's transcripts are walked when the
// check ends and each server message validated against the negotiated
// version's schema.json (internal/schema); one result per transport and
// version is made when the report is built. The check itself (id, rules,
// clauses) is the catalog's, named to the harness by SchemaCheck.

// schemaCheck is the passive check the walks report as (nil: none is
// registered, no message is validated).
var schemaCheck *Check

// SchemaCheck names c, a registered Passive check, as the one whose results
// the harness makes from every other check's transcripts (SCHEMA-VALID).
// It returns c.
func SchemaCheck(c *Check) *Check {
	if !c.Passive {
		panic(fmt.Sprintf("harness: schema check %s is not Passive", c.ID))
	}
	schemaCheck = c
	return c
}

// schemaRun is what SCHEMA-VALID learnt from one check run.
type schemaRun struct {
	Check     string          `json:"check"`
	Transport string          `json:"transport"`
	Version   string          `json:"version"`
	Target    string          `json:"target,omitempty"`
	Messages  int             `json:"messages"`
	Findings  []schemaFinding `json:"findings,omitempty"`
	// Err is set when the version's schema could not be loaded.
	Err string `json:"err,omitempty"`
	// NoSchema marks a walk made for the content-type check alone
	// (SCHEMA-VALID was not selected): no message was validated.
	NoSchema bool `json:"noSchema,omitempty"`
	// ContentType marks a walk that judged the response heads for
	// HTTP-RESPONSE-CONTENT-TYPE (content_type.go): Answers heads of
	// POSTs carrying a request, Heads the ones that broke the sentence.
	ContentType bool        `json:"contentType,omitempty"`
	Answers     int         `json:"answers,omitempty"`
	Heads       []ctFinding `json:"heads,omitempty"`
	// Structured marks a walk that judged the tools/call results for
	// the mixed checks TOOLS-OUTPUT-SCHEMA and TOOLS-STRUCTURED-TEXT
	// (structured.go): SCCalls results of a tool with an outputSchema,
	// SCText results carrying structuredContent, SCFindings the ones
	// that broke tl#9 or tl#8.
	Structured bool        `json:"structured,omitempty"`
	SCCalls    int         `json:"scCalls,omitempty"`
	SCText     int         `json:"scText,omitempty"`
	SCFindings []scFinding `json:"scFindings,omitempty"`
	// UTF8 marks a walk that judged the bytes of the server's messages
	// over Streamable HTTP for HTTP-UTF8 (utf8_wire.go): U8Messages
	// messages, U8Findings the ones that are not UTF-8.
	UTF8       bool        `json:"utf8,omitempty"`
	U8Messages int         `json:"u8Messages,omitempty"`
	U8Findings []u8Finding `json:"u8Findings,omitempty"`
}

// schemaFinding is one offending message.
type schemaFinding struct {
	Conn       int             `json:"conn"`
	Message    reports.Entry   `json:"message"`
	Violations []string        `json:"violations"`
	Must       bool            `json:"must"`
	Against    string          `json:"against,omitempty"`
	Method     string          `json:"method,omitempty"`
	ID         json.RawMessage `json:"id,omitempty"`
}

var (
	schemaMu   sync.Mutex
	schemaRuns []schemaRun
	// schemaOff is set when the run's options leave SCHEMA-VALID out
	// (--focus on other checks): no message is validated.
	schemaOff bool
)

func setSchemaOn(on bool) {
	schemaMu.Lock()
	schemaOff = !on
	schemaMu.Unlock()
}

func schemaIsOn() bool {
	schemaMu.Lock()
	defer schemaMu.Unlock()
	return !schemaOff && schemaCheck != nil
}

// resetSchemaRuns forgets the runs of an earlier Configure.
func resetSchemaRuns() {
	schemaMu.Lock()
	schemaRuns = nil
	schemaMu.Unlock()
}

// schemaWalk validates the server's messages of one connection's
// transcript, in order.
type schemaWalk struct {
	v    *schema.Validator
	conn int
	// byID holds the client's requests by id; byStream, over HTTP, the
	// request each POST carried, by id (a response on POST#n answers a
	// request of POST#n, whatever another session reused its id for).
	byID     map[jsonrpc.ID][]schema.Request
	byStream map[string]map[jsonrpc.ID]schema.Request
	// status is the last HTTP status of each stream.
	status map[string]int
	// batch marks the streams ("" on stdio) the client sent a batch on.
	batch map[string]bool
	// headSeen marks the streams whose response head was judged for the
	// content-type check.
	headSeen map[string]bool
	// sent is the client's last request entry on each stream (posted its
	// method; neither counts a request a fault injected), badHead
	// the index in run.Heads of a stream whose head broke the sentence
	// and whose body is still to come (content_type.go).
	sent    map[string]reports.Entry
	posted  map[string]string
	badHead map[string]int
	// sc is the structured-output judgement's state (nil: off).
	sc  *scState
	run *schemaRun
}

func newSchemaWalk(v *schema.Validator, conn int, run *schemaRun) *schemaWalk {
	return &schemaWalk{v: v, conn: conn, run: run, byID: map[jsonrpc.ID][]schema.Request{},
		byStream: map[string]map[jsonrpc.ID]schema.Request{}, status: map[string]int{}, batch: map[string]bool{}, headSeen: map[string]bool{},
		sent: map[string]reports.Entry{}, posted: map[string]string{}, badHead: map[string]int{}}
}

// seeOther takes a transcript entry that carries no message: an HTTP
// status line tells how the stream's body is judged.
func (w *schemaWalk) seeOther(e faultproxy.Entry) {
	if e.Kind == faultproxy.EntryHTTP && e.HTTP != nil && e.Dir == faultproxy.ServerToClient {
		w.status[e.Stream] = e.HTTP.Status
		w.seeHead(e)
	}
}

// see takes one message entry, its report form, and its message (raw,
// messageBytes') parsed (env); it returns a note that marks the entry when
// the message breaks the schema.
func (w *schemaWalk) see(e faultproxy.Entry, re reports.Entry, raw []byte, env jsonrpc.Envelope) (reports.Entry, bool) {
	if e.Dir == faultproxy.ServerToClient && e.Outcome == faultproxy.OutcomeInjected {
		// The proxy's own message, not the server's.
		return reports.Entry{}, false
	}
	// An SSE event's data is the message; a comment or the priming event
	// (an id and empty data) carries none.
	if raw == nil && e.Raw != nil {
		return reports.Entry{}, false
	}
	if e.Dir == faultproxy.ClientToServer {
		if isArray(raw) {
			w.batch[e.Stream] = true
		}
		if w.sc != nil {
			w.sc.seeRequest(e, env)
		}
		if req, ok := schema.RequestFrom(env); ok && !env.ID.IsZero() {
			id := env.ID
			w.byID[id] = append(w.byID[id], req)
			if e.Stream != "" {
				if w.byStream[e.Stream] == nil {
					w.byStream[e.Stream] = map[jsonrpc.ID]schema.Request{}
				}
				w.byStream[e.Stream][id] = req
				if e.Outcome != faultproxy.OutcomeInjected && utf8.Valid(raw) {
					// The POST's own body, not a request a fault
					// injected on its stream (content_type.go). A body
					// that is not UTF-8 is no JSON text (RFC 8259 §8.1),
					// so not the request the sentence speaks of, though
					// Go's parser reads it (ROBUST-INVALID-UTF8 sends one).
					w.sent[e.Stream] = re
					w.posted[e.Stream] = req.Method
				}
			}
		}
		return reports.Entry{}, false
	}
	w.seeBody(e, re)
	if w.sc != nil && (scStream(e) == "" || w.status[e.Stream] < 300) {
		// Not the body of an HTTP error status (structured.go).
		w.seeAnswer(e, re, env)
	}
	if w.v == nil {
		// The content-type check alone walks: nothing is validated.
		return reports.Entry{}, false
	}
	rewritten := false // raw is no longer the message env parsed
	if e.Stream != "" && !strings.HasPrefix(e.Stream, "WS#") {
		// Streamable HTTP: the body of an error status is free ("MAY
		// comprise a JSON-RPC error response"); only a JSON-RPC message
		// there is judged.
		// The transports pages: "The HTTP response body MAY comprise a
		// JSON-RPC error response that has no id" — its id is judged
		// as the null id of JSON-RPC 2.0 section 5.
		if st := w.status[e.Stream]; st >= 300 {
			if !looksJSONRPC(raw) {
				return reports.Entry{}, false
			}
			raw, rewritten = withNullID(raw), true
		}
	}
	if isArray(raw) && w.batch[e.Stream] {
		// The answer to a client's batch, which is no MCP message either
		// (batching was removed in 2025-06-18): ROBUST-BATCH-REJECTED
		// judges how a server treats that input, not this check.
		return reports.Entry{}, false
	}
	w.run.Messages++
	id := env.ID
	if rewritten {
		id = jsonrpc.IDFrom(idOf(raw))
	}
	o := w.validate(e, raw, id)
	if o.OK() {
		return reports.Entry{}, false
	}
	f := schemaFinding{Conn: w.conn, Message: re, Against: o.Against, Method: o.Method}
	if !o.ID.IsZero() {
		f.ID = o.ID.Raw()
	}
	for _, v := range o.Violations {
		f.Violations = append(f.Violations, v.String())
		if v.Level == "" || strings.HasPrefix(v.Level, "MUST") {
			f.Must = true
		}
	}
	w.run.Findings = append(w.run.Findings, f)
	return reports.Entry{AtMs: re.AtMs, Kind: "note", Seq: e.Seq, Stream: e.Stream,
		Text: "SCHEMA-VALID: the message above breaks the " + w.v.Version() + " schema: " + strings.Join(f.Violations, "; ")}, true
}

// validate validates one server message. A response whose id the client
// used for several requests (ROBUST-DUPLICATE-ID reuses an id in flight)
// answers one of them: it is valid when it is valid for one.
func (w *schemaWalk) validate(e faultproxy.Entry, raw []byte, id jsonrpc.ID) schema.Outcome {
	if r, ok := w.byStream[e.Stream][id]; ok && e.Stream != "" {
		return w.v.ValidateServerMessage(e.Seq, raw, func(jsonrpc.ID) (schema.Request, bool) { return r, true })
	}
	cands := w.byID[id]
	if len(cands) <= 1 {
		return w.v.ValidateServerMessage(e.Seq, raw, func(id jsonrpc.ID) (schema.Request, bool) {
			rs := w.byID[id]
			if len(rs) == 0 {
				return schema.Request{}, false
			}
			return rs[len(rs)-1], true
		})
	}
	var last schema.Outcome
	for i := len(cands) - 1; i >= 0; i-- {
		r := cands[i]
		last = w.v.ValidateServerMessage(e.Seq, raw, func(jsonrpc.ID) (schema.Request, bool) { return r, true })
		if last.OK() {
			return last
		}
	}
	return last
}

// idOf is the raw id member of a message (nil when absent).
func idOf(raw []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(raw, &m)
	return m.ID
}

// withNullID gives an error response without an id the null id.
func withNullID(raw []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return raw
	}
	if _, has := m["id"]; has || m["error"] == nil || m["result"] != nil {
		return raw
	}
	m["id"] = json.RawMessage("null")
	b, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return b
}

// isArray reports whether raw is a JSON array.
func isArray(raw []byte) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '['
}

// looksJSONRPC reports whether raw is a JSON object with a jsonrpc member.
func looksJSONRPC(raw []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return false
	}
	_, ok := m["jsonrpc"]
	return ok
}

// schemaWalkFor starts the walk of connection conn of h, or nil when the
// check never negotiated a version with a schema.
func (h *H) schemaWalkFor(conn int) *schemaWalk {
	if h.schemaRun == nil {
		if h.session.Version == "" || h.check.Passive || !passiveIsOn() {
			return nil
		}
		h.schemaRun = &schemaRun{Check: h.check.ID, Transport: h.target.Transport, Version: h.session.Version, Target: h.target.Name,
			NoSchema: !schemaIsOn(), ContentType: contentTypeIsOn(), Structured: structuredIsOn(), UTF8: utf8IsOn()}
		if schemaIsOn() {
			v, err := schema.For(h.session.Version)
			if err != nil {
				h.schemaRun.Err = err.Error()
			} else {
				h.schemaV = v
			}
		}
	}
	if h.schemaV == nil && !h.schemaRun.ContentType && !h.schemaRun.Structured && !h.schemaRun.UTF8 {
		return nil
	}
	w := newSchemaWalk(h.schemaV, conn, h.schemaRun)
	if h.schemaRun.Structured {
		w.sc = newSCState(probedTools(h.target))
	}
	return w
}

// recordSchemaRun keeps what the walk of h's transcripts found.
func (h *H) recordSchemaRun() {
	if h.schemaRun == nil {
		return
	}
	schemaMu.Lock()
	schemaRuns = append(schemaRuns, *h.schemaRun)
	schemaMu.Unlock()
}

// schemaResultsOf makes the SCHEMA-VALID results of runs: one per target
// transport and version a check ran in.
func schemaResultsOf(runs []schemaRun) []reports.Check {
	type key struct{ transport, version, target string }
	var order []key
	by := map[key][]schemaRun{}
	for _, r := range runs {
		if r.NoSchema {
			continue
		}
		k := key{r.Transport, r.Version, r.Target}
		if _, seen := by[k]; !seen {
			order = append(order, k)
		}
		by[k] = append(by[k], r)
	}
	c := schemaCheck
	if c == nil {
		return nil
	}
	var out []reports.Check
	for _, k := range order {
		rs := by[k]
		rule, ok := c.RuleOn(k.transport, k.version)
		if !ok {
			continue
		}
		res := reports.Check{ID: c.ID, Title: c.Title, Level: rule.Level, Spec: rule.Pages(), Clause: rule.Clause,
			Source: rule.SourceOf(), Clauses: slices.Clone(c.Clauses), Transport: k.transport, ProtocolVersion: k.version, Status: reports.Pass}
		messages, bad, must := 0, 0, false
		var lines []string
		for _, r := range rs {
			messages += r.Messages
			if r.Err != "" {
				res.Status, res.Reason = reports.Error, fmt.Sprintf("no schema for %s: %s", k.version, r.Err)
				break
			}
			for _, f := range r.Findings {
				bad++
				must = must || f.Must
				what := "message"
				if f.Method != "" {
					what = f.Method + " message"
				}
				line := fmt.Sprintf("%s (connection %d): %s seq %d: %s", r.Check, f.Conn, what, f.Message.Seq, strings.Join(f.Violations, "; "))
				lines = append(lines, line)
				res.Transcript = append(res.Transcript, reports.Entry{Kind: "note", Text: "in " + r.Check + fmt.Sprintf(", connection %d:", f.Conn)}, f.Message,
					reports.Entry{AtMs: f.Message.AtMs, Kind: "note", Seq: f.Message.Seq, Stream: f.Message.Stream, Text: "SCHEMA-VALID: " + strings.Join(f.Violations, "; ")})
			}
		}
		if res.Status == reports.Error {
			out = append(out, res)
			continue
		}
		switch {
		case bad == 0:
			res.Reason = fmt.Sprintf("%d server messages of %d check runs valid against the %s schema", messages, len(rs), k.version)
		default:
			res.Status = reports.Fail
			if !must {
				res.Status, res.Level = reports.Warn, reports.Should
			}
			const show = 5
			shown := lines
			if len(shown) > show {
				shown = shown[:show]
			}
			res.Reason = fmt.Sprintf("%d of %d server messages break the %s schema or a JSON-RPC rule: %s", bad, messages, k.version, strings.Join(shown, " | "))
			if len(lines) > show {
				res.Reason += fmt.Sprintf(" | ... and %d more (the transcript lists them all)", len(lines)-show)
			}
		}
		out = append(out, res)
	}
	return out
}

package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/internal/schema"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/reports"
)

// The structured-output judgement: a third judgement on SCHEMA-VALID's walk
// of every check's transcripts (schema_valid.go), for two MIXED checks —
// checks with an active body of their own (TOOLS-OUTPUT-SCHEMA,
// TOOLS-STRUCTURED-TEXT) whose results also judge every tools/call result
// any check of the run received:
//
//   - tl#9: a result of a tool whose outputSchema the connection's
//     tools/list gave (or, when the connection never listed tools, the
//     probe's list) carries structuredContent valid against that schema;
//   - tl#8: a result that carries structuredContent also holds it,
//     serialized, in a text block.
//
// Not judged: a task-augmented call (its answer is a CreateTaskResult), an
// InputRequiredResult (2026-07-28), an error, an isError result, a message
// the proxy wrote itself, a body of an HTTP error status, and the answer to
// an id reused in flight for another call. The findings ride in the walk's schemaRun; the
// report folds them into the two checks' own results (foldStructured), in
// BuildReport, BuildReportFromGinkgo and JoinParts.

// outputSchemaCheck and structuredTextCheck are the mixed checks the
// findings fold into (nil: none registered).
var outputSchemaCheck, structuredTextCheck *Check

// StructuredChecks names the two mixed checks whose results the harness
// widens with every other check's tools/call results: conform judges tl#9
// (a MUST: a finding FAILs it), text judges tl#8 (a SHOULD: a finding WARNs
// it). Neither may be Passive: each keeps its own active body.
func StructuredChecks(conform, text *Check) {
	if conform.Passive || text.Passive {
		panic("harness: the structured-output checks have bodies of their own; they are not Passive")
	}
	outputSchemaCheck, structuredTextCheck = conform, text
}

var (
	scMu sync.Mutex
	// scOn is set when the run's options select a mixed check, or a
	// passive one (a slice of a split run keeps the passive checks only,
	// and its walks are joined with the slice that ran the mixed check).
	scOn bool
)

func setStructuredOn(on bool) {
	scMu.Lock()
	scOn = on
	scMu.Unlock()
}

func structuredIsOn() bool {
	scMu.Lock()
	defer scMu.Unlock()
	return scOn && outputSchemaCheck != nil
}

// selectsStructured reports whether the options select a mixed check (or
// leave a passive one on, see scOn).
func selectsStructured(opts RunOptions, selected []*Check) bool {
	if outputSchemaCheck == nil {
		return false
	}
	for _, c := range selected {
		if c == outputSchemaCheck || c == structuredTextCheck {
			return true
		}
	}
	return (schemaCheck != nil && selectsPassive(opts, schemaCheck)) ||
		(contentTypeCheck != nil && selectsPassive(opts, contentTypeCheck))
}

// isStructuredCheck reports whether id names a mixed check.
func isStructuredCheck(id string) bool {
	return (outputSchemaCheck != nil && id == outputSchemaCheck.ID) || (structuredTextCheck != nil && id == structuredTextCheck.ID)
}

// scFinding is one tools/call result that broke tl#9 (Clause "tl#9") or
// tl#8 ("tl#8").
type scFinding struct {
	Clause string        `json:"clause"`
	Conn   int           `json:"conn"`
	Tool   string        `json:"tool"`
	Why    string        `json:"why"`
	Entry  reports.Entry `json:"entry"`
}

// scCall is a tools/call request as the walk recorded it.
type scCall struct {
	name      string
	task      bool
	ambiguous bool
}

// scState is the walk's state for the structured-output judgement.
type scState struct {
	// calls are the tools/call requests by stream ("" on stdio and
	// WebSocket) and id; listIDs the tools/list requests' ids likewise.
	calls   map[string]map[jsonrpc.ID]scCall
	listIDs map[string]map[jsonrpc.ID]bool
	// listed holds each tool's outputSchema from this connection's
	// tools/list results (nil: none; a tool listed without one maps to
	// nil); probed is the probe's list, used for a tool the connection
	// did not list.
	listed map[string]json.RawMessage
	probed map[string]json.RawMessage
}

func newSCState(probed []map[string]any) *scState {
	s := &scState{calls: map[string]map[jsonrpc.ID]scCall{}, listIDs: map[string]map[jsonrpc.ID]bool{},
		listed: map[string]json.RawMessage{}, probed: map[string]json.RawMessage{}}
	for _, t := range probed {
		name, _ := t["name"].(string)
		if name == "" {
			continue
		}
		if out, ok := t["outputSchema"]; ok && out != nil {
			if b, err := json.Marshal(out); err == nil {
				s.probed[name] = b
			}
		}
	}
	return s
}

// scStream is the key of a stream for the call maps: Streamable HTTP
// answers a request on its POST's stream; on stdio and WebSocket every
// message is on one.
func scStream(e faultproxy.Entry) string {
	if e.Stream == "" || strings.HasPrefix(e.Stream, "WS#") {
		return ""
	}
	return e.Stream
}

// seeRequest records a client request the server received.
func (s *scState) seeRequest(e faultproxy.Entry, env jsonrpc.Envelope) {
	if env.Kind != jsonrpc.Request || env.ID.IsZero() {
		return
	}
	if e.Outcome == faultproxy.OutcomeReplaced || e.Outcome == faultproxy.OutcomeDropped ||
		e.Outcome == faultproxy.OutcomeCut || e.Outcome == faultproxy.OutcomeReset || e.Outcome == faultproxy.OutcomeAnswered {
		return // the server never received it
	}
	st := scStream(e)
	switch env.Method {
	case "tools/call":
		var p struct {
			Name string          `json:"name"`
			Task json.RawMessage `json:"task"`
		}
		if json.Unmarshal(env.Params, &p) != nil || p.Name == "" {
			return
		}
		if s.calls[st] == nil {
			s.calls[st] = map[jsonrpc.ID]scCall{}
		}
		c := scCall{name: p.Name, task: len(p.Task) > 0 && string(p.Task) != "null"}
		if old, ok := s.calls[st][env.ID]; ok && old != c {
			// An id reused while in flight (ROBUST-DUPLICATE-ID) for
			// another call: its answer is not judged.
			c = scCall{ambiguous: true}
		}
		s.calls[st][env.ID] = c
	case "tools/list":
		if s.listIDs[st] == nil {
			s.listIDs[st] = map[jsonrpc.ID]bool{}
		}
		s.listIDs[st][env.ID] = true
	}
}

// seeAnswer takes a server message (not the proxy's own, not the body of
// an HTTP error status) and judges it when it answers a tools/call.
func (w *schemaWalk) seeAnswer(e faultproxy.Entry, re reports.Entry, env jsonrpc.Envelope) {
	s := w.sc
	if env.Kind != jsonrpc.Response || env.ID.IsZero() || e.Outcome == faultproxy.OutcomeReplaced {
		return
	}
	st := scStream(e)
	if s.listIDs[st][env.ID] {
		var res struct {
			Tools []struct {
				Name         string          `json:"name"`
				OutputSchema json.RawMessage `json:"outputSchema"`
			} `json:"tools"`
		}
		if json.Unmarshal(env.Result, &res) == nil {
			for _, t := range res.Tools {
				if len(t.OutputSchema) == 0 || string(t.OutputSchema) == "null" {
					s.listed[t.Name] = nil
					continue
				}
				s.listed[t.Name] = t.OutputSchema
			}
		}
		return
	}
	call, ok := s.calls[st][env.ID]
	if !ok {
		return
	}
	delete(s.calls[st], env.ID) // answered: a later answer to the id is not this call's
	if call.task || call.ambiguous {
		return
	}
	var res struct {
		IsError    bool              `json:"isError"`
		Content    []json.RawMessage `json:"content"`
		Structured json.RawMessage   `json:"structuredContent"`
		Task       json.RawMessage   `json:"task"`
		// 2026-07-28: an InputRequiredResult (resultType
		// "input_required", inputRequests, requestState) is no tool
		// result yet.
		ResultType    string          `json:"resultType"`
		InputRequests json.RawMessage `json:"inputRequests"`
		RequestState  json.RawMessage `json:"requestState"`
	}
	if len(env.Result) == 0 || json.Unmarshal(env.Result, &res) != nil || res.IsError || len(res.Task) > 0 ||
		(res.ResultType != "" && res.ResultType != "complete") || len(res.InputRequests) > 0 || len(res.RequestState) > 0 {
		return
	}
	hasSC := len(res.Structured) > 0 && string(res.Structured) != "null"
	if sch, raw := w.outputSchemaOf(call.name); sch != nil {
		w.run.SCCalls++
		switch {
		case !hasSC:
			w.scFind("tl#9", call.name, re, fmt.Sprintf("the tool has an outputSchema but its result (id %s) carries no structuredContent", env.ID))
		default:
			if err := schema.ValidateJSON(sch, res.Structured); err != nil {
				w.scFind("tl#9", call.name, re, fmt.Sprintf("structuredContent %s (id %s) does not conform to its outputSchema %s: %s",
					Clip(res.Structured), env.ID, Clip(raw), strings.Join(strings.Fields(err.Error()), " ")))
			}
		}
	}
	if hasSC {
		w.run.SCText++
		if !StructuredRepeated(res.Content, res.Structured) {
			content, _ := json.Marshal(res.Content)
			w.scFind("tl#8", call.name, re, fmt.Sprintf("its result (id %s) has the structuredContent %s but no text block holding that JSON; content: %s",
				env.ID, Clip(res.Structured), Clip(content)))
		}
	}
}

// outputSchemaOf is tool's compiled outputSchema as this connection's
// tools/list gave it (the probe's when the connection did not list the
// tool), or nil when it has none or one that does not compile
// (TOOLS-OUTPUT-SCHEMA's own body judges a listed schema).
func (w *schemaWalk) outputSchemaOf(tool string) (*jsonschema.Schema, json.RawMessage) {
	raw, ok := w.sc.listed[tool]
	if !ok {
		raw = w.sc.probed[tool]
	}
	if len(raw) == 0 {
		return nil, nil
	}
	sch, err := schema.CompileTool(raw)
	if err != nil {
		return nil, nil
	}
	return sch, raw
}

func (w *schemaWalk) scFind(clause, tool string, re reports.Entry, why string) {
	w.run.SCFindings = append(w.run.SCFindings, scFinding{Clause: clause, Conn: w.conn, Tool: tool, Why: why, Entry: re})
}

// StructuredRepeated reports whether one text block of content holds JSON
// equal to structured (the same JSON value: spacing and member order are
// free).
func StructuredRepeated(content []json.RawMessage, structured json.RawMessage) bool {
	var want any
	if json.Unmarshal(structured, &want) != nil {
		return false
	}
	for _, raw := range content {
		var b struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(raw, &b) != nil || b.Type != "text" {
			continue
		}
		var got any
		dec := json.NewDecoder(bytes.NewReader([]byte(b.Text)))
		if dec.Decode(&got) != nil || dec.More() {
			continue
		}
		if reflect.DeepEqual(got, want) {
			return true
		}
	}
	return false
}

// probedTools is what tools/list gave at target's probe (nil: none).
func probedTools(target *Manifest) []map[string]any {
	cfgMu.Lock()
	defer cfgMu.Unlock()
	if p := probed[target]; p != nil {
		return p.tools
	}
	return nil
}

// foldStructured widens each result of a mixed check in res with the
// findings of runs of its transport, version and target: a finding of its
// clause FAILs (tl#9) or WARNs (tl#8) a PASS or SKIP of it, and every
// result it folds into says how many calls were judged.
func foldStructured(res []reports.Check, runs []schemaRun) {
	for i := range res {
		r := &res[i]
		var c *Check
		switch {
		case outputSchemaCheck != nil && r.ID == outputSchemaCheck.ID:
			c = outputSchemaCheck
		case structuredTextCheck != nil && r.ID == structuredTextCheck.ID:
			c = structuredTextCheck
		default:
			continue
		}
		if r.Status == reports.Error {
			continue // the harness could not run it: no verdict to widen
		}
		if _, ok := c.RuleOn(r.Transport, r.ProtocolVersion); !ok {
			continue // not a version the check applies to (a SKIP saying so)
		}
		clause := "tl#9"
		if c == structuredTextCheck {
			clause = "tl#8"
		}
		checkRuns, judged := 0, 0
		var lines []string
		var tr []reports.Entry
		for _, run := range runs {
			if !run.Structured || run.Transport != r.Transport || run.Version != r.ProtocolVersion ||
				(r.Target != "" && run.Target != "" && r.Target != run.Target) {
				continue
			}
			checkRuns++
			if c == outputSchemaCheck {
				judged += run.SCCalls
			} else {
				judged += run.SCText
			}
			for _, f := range run.SCFindings {
				if f.Clause != clause {
					continue
				}
				lines = append(lines, fmt.Sprintf("in %s (connection %d), tool %s: %s", run.Check, f.Conn, f.Tool, f.Why))
				tr = append(tr, reports.Entry{Kind: "note", Text: fmt.Sprintf("in %s, connection %d:", run.Check, f.Conn)}, f.Entry,
					reports.Entry{AtMs: f.Entry.AtMs, Kind: "note", Seq: f.Entry.Seq, Stream: f.Entry.Stream, Text: c.ID + " (passive): tool " + f.Tool + ": " + f.Why})
			}
		}
		if checkRuns == 0 {
			continue // no walk judged anything (the judgement was off)
		}
		what := "tools/call results of a tool with an outputSchema"
		if c == structuredTextCheck {
			what = "tools/call results carrying structuredContent"
		}
		summary := fmt.Sprintf("passively, %d %s in %d check runs (every check's calls, this one's included) judged", judged, what, checkRuns)
		if len(lines) == 0 {
			switch {
			case r.Status == reports.Skip && judged > 0:
				r.Status, r.Reason = reports.Pass, summary+": each "+okWords(c)+" (this check's own calls: "+r.Reason+")"
			case r.Status == reports.Skip:
				r.Reason += "; " + summary + ": none"
			case r.Status == reports.Pass:
				r.Reason = joinReason(r.Reason, summary+": each "+okWords(c))
			default:
				r.Reason = joinReason(r.Reason, summary+": none broke the clause")
			}
			continue
		}
		const show = 5
		shown := lines
		if len(shown) > show {
			shown = shown[:show]
		}
		found := fmt.Sprintf("%s; %d broke the clause: %s", summary, len(lines), strings.Join(shown, " | "))
		if len(lines) > show {
			found += fmt.Sprintf(" | ... and %d more (the transcript lists them all)", len(lines)-show)
		}
		rule, _ := c.RuleOn(r.Transport, r.ProtocolVersion)
		switch {
		case r.Status == reports.Fail:
			r.Reason = joinReason(r.Reason, found)
		case c == outputSchemaCheck:
			r.Status, r.Level, r.Reason = reports.Fail, rule.Level, found
		case r.Status == reports.Warn:
			r.Reason = joinReason(r.Reason, found)
		default:
			r.Status, r.Level, r.Reason = reports.Warn, reports.Should, found
		}
		// The findings quote what the server said: no secret of the run
		// leaves in the reason (runCheck scrubs the body's own).
		r.Reason = reports.Secrets.String(r.Reason)
		r.Transcript = append(slices.Clip(r.Transcript), reports.Entry{Kind: "note", Text: c.ID + ": the tools/call results of the run's checks that broke the clause follow"})
		r.Transcript = append(r.Transcript, tr...)
	}
}

func okWords(c *Check) string {
	if c == structuredTextCheck {
		return "repeats it as text"
	}
	return "carries conforming structuredContent"
}

func joinReason(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// activeStructured are the results of the mixed checks this process
// recorded, before any fold: a split run's parent folds them over every
// part's walks (JoinParts).
func activeStructured() []reports.Check {
	var out []reports.Check
	for _, r := range Results() {
		if isStructuredCheck(r.ID) {
			out = append(out, r)
		}
	}
	return slices.Clip(out)
}

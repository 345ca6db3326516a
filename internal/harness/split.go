package harness

import (
	"slices"

	"github.com/mcp-conform/mcp-conform/reports"
)

// A target's checks may be split over several processes (internal/runner
// does so for a target whose server is started for each check). Two
// results are not one check's own: SCHEMA-VALID, made from every check's
// transcripts, and the retry-class table, made from the tools listed and
// the evidence the IDEM checks recorded (and, in part, the mixed checks
// TOOLS-OUTPUT-SCHEMA and TOOLS-STRUCTURED-TEXT, widened with every check's
// tools/call results: structured.go). Each process saves what it learnt
// for them (SavePartState); the parent joins the parts (JoinParts) and
// makes them as one process would have made them.
//
//	child 1: checks A, C, … ─┐ report (results) + PartState (walks, tools, evidence, unfolded mixed results)
//	child 2: checks B, D, … ─┤
//	                         └─► JoinParts: every result but SCHEMA-VALID,
//	                             SCHEMA-VALID over all walks, the mixed
//	                             checks folded over all walks, one retry table

// PartState is what one process of a split target learnt beyond its
// results. It is JSON, for the file a child leaves its parent.
type PartState struct {
	// SchemaOn says the process validated messages (SCHEMA-VALID was
	// selected); Schema holds its walks, one per check run.
	SchemaOn bool        `json:"schemaOn,omitempty"`
	Schema   []schemaRun `json:"schema,omitempty"`
	// ContentTypeOn says the process judged response heads for
	// HTTP-RESPONSE-CONTENT-TYPE (its findings ride in Schema's walks).
	ContentTypeOn bool `json:"contentTypeOn,omitempty"`
	// UTF8On says the process judged the server's message bytes for
	// HTTP-UTF8 (its findings ride in Schema's walks too).
	UTF8On bool `json:"utf8On,omitempty"`
	// Active holds this process's results of the mixed checks
	// TOOLS-OUTPUT-SCHEMA and TOOLS-STRUCTURED-TEXT before their
	// passive findings were folded in (structured.go): the parent folds
	// them over every part's walks.
	Active []reports.Check `json:"active,omitempty"`
	// Tools is what tools/list gave at each target's probe, by class key.
	Tools map[string][]map[string]any `json:"tools,omitempty"`
	// Idem, Annotations and Lied are the retry-class evidence, by class
	// key and tool (runEvidence).
	Idem        map[string]map[string][]string `json:"idem,omitempty"`
	Annotations map[string]map[string]string   `json:"annotations,omitempty"`
	Lied        map[string]map[string]bool     `json:"lied,omitempty"`
}

// SavePartState returns what this process learnt for SCHEMA-VALID and the
// retry classes so far (call it after Run).
func SavePartState() PartState {
	schemaMu.Lock()
	st := PartState{SchemaOn: !schemaOff && schemaCheck != nil, Schema: slices.Clone(schemaRuns)}
	schemaMu.Unlock()
	st.ContentTypeOn = contentTypeIsOn()
	st.UTF8On = utf8IsOn()
	st.Active = activeStructured()
	cfgMu.Lock()
	defer cfgMu.Unlock()
	st.Tools = map[string][]map[string]any{}
	for m, p := range probed {
		if p != nil && p.tools != nil && st.Tools[classKey(m)] == nil {
			st.Tools[classKey(m)] = p.tools
		}
	}
	st.Idem, st.Annotations, st.Lied = evidence.idem, evidence.annotations, evidence.lied
	return st
}

// JoinParts makes the results of a target whose checks ran in several
// processes: res holds every part's results (their SCHEMA-VALID rows are
// dropped), states what each part saved. It returns the results with
// SCHEMA-VALID remade over every part's walks (as BuildReport makes it,
// gaps and a cut-short run included) and the retry-class table over every
// part's evidence, for cfg's targets.
func JoinParts(cfg *Config, res []reports.Check, states []PartState) ([]reports.Check, []reports.ToolClass) {
	// The mixed checks' rows are folded again over every part's walks,
	// from each part's result before its own fold (PartState.Active).
	active := false
	for _, st := range states {
		active = active || len(st.Active) > 0
	}
	var out []reports.Check
	for _, r := range res {
		if active && isStructuredCheck(r.ID) {
			continue
		}
		if (schemaCheck == nil || r.ID != schemaCheck.ID) && (contentTypeCheck == nil || r.ID != contentTypeCheck.ID) &&
			(utf8Check == nil || r.ID != utf8Check.ID) {
			out = append(out, r)
		}
	}
	for _, st := range states {
		out = append(out, st.Active...)
	}
	var (
		runs []schemaRun
		on   bool
		ctOn bool
		u8On bool
	)
	tools := map[string][]map[string]any{}
	ev := newRunEvidence()
	for _, st := range states {
		on = on || st.SchemaOn
		ctOn = ctOn || st.ContentTypeOn
		u8On = u8On || st.UTF8On
		runs = append(runs, st.Schema...)
		for k, ts := range st.Tools {
			if tools[k] == nil {
				tools[k] = ts
			}
		}
		joinEvidence(ev, st)
	}
	foldStructured(out, runs)
	if on && schemaCheck != nil {
		out = append(out, schemaResultsOf(runs)...)
		out = append(out, schemaGaps(out)...)
		schemaCutShort(out)
	}
	if ctOn && contentTypeCheck != nil {
		out = append(out, contentTypeResultsOf(runs)...)
		out = append(out, contentTypeGaps(out)...)
		passiveCutShort(contentTypeCheck, out)
	}
	if u8On && utf8Check != nil {
		out = append(out, utf8ResultsOf(runs)...)
		out = append(out, utf8Gaps(cfg, out)...)
		passiveCutShort(utf8Check, out)
	}
	return out, retryClasses(cfg, tools, ev, out)
}

// joinEvidence adds one part's retry-class evidence to ev: the union of
// what the IDEM checks proved, an annotation verdict where one part has
// it, a lie where any part caught one.
func joinEvidence(ev *runEvidence, st PartState) {
	for k, byTool := range st.Idem {
		if ev.idem[k] == nil {
			ev.idem[k] = map[string][]string{}
		}
		for tool, proofs := range byTool {
			for _, p := range proofs {
				if !slices.Contains(ev.idem[k][tool], p) {
					ev.idem[k][tool] = append(ev.idem[k][tool], p)
				}
			}
			slices.Sort(ev.idem[k][tool])
		}
	}
	for k, byTool := range st.Annotations {
		if ev.annotations[k] == nil {
			ev.annotations[k] = map[string]string{}
		}
		for tool, v := range byTool {
			if ev.annotations[k][tool] == "" {
				ev.annotations[k][tool] = v
			}
		}
	}
	for k, byTool := range st.Lied {
		if ev.lied[k] == nil {
			ev.lied[k] = map[string]bool{}
		}
		for tool, v := range byTool {
			ev.lied[k][tool] = ev.lied[k][tool] || v
		}
	}
}

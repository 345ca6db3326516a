package draft

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcp-conform/mcp-conform/protocol"
)

// How long the drafted slow and task calls take, and in how many steps
// (when the tool counts steps): long enough to cancel mid-way after the
// first progress, short enough that the checks that call them many times
// stay quick.
const (
	slowTotal = 900 * time.Millisecond
	slowSteps = 6
	// floodCount and floodPad are the flood role's burst: 2000 progress
	// notifications of about 1 KB.
	floodCount = 2000
	floodPad   = 1000
)

// candidate is a tool proposed for a role, with its score.
type candidate struct {
	*Proposal
	score int
	// probeTool is an instrumented probe of tagged calls of this tool
	// (probe: {tool, tag}), found but not confirmed; tagArg is the tool's
	// argument that carries the tag.
	probeTool, tagArg string
	// probeField is the mutation probe's count field when its output
	// schema names one; probeNamed is the probe tool.
	probeNamed, probeField string
}

// Propose drafts the roles of a target from its tools, on transport
// ("stdio", "http", "websocket"). It calls nothing: what only a call can
// settle (a probe's field, whether progress comes) is left to Confirm.
func Propose(tools []Tool, transport string) *Draft {
	d := &Draft{Transport: transport, Tools: tools, Missing: map[string]string{}}
	d.cands = map[string][]*candidate{}
	add := func(role string, cs []*candidate, missing string) {
		if len(cs) == 0 {
			d.Missing[role] = missing
			return
		}
		for _, c := range cs[1:] {
			cs[0].Others = append(cs[0].Others, c.Tool)
		}
		d.cands[role] = cs
		d.Proposals = append(d.Proposals, cs[0].Proposal)
	}
	add("slow", slowCandidates(tools),
		"no tool annotated readOnlyHint: true takes a duration-like argument (duration, seconds, ms, delay, stepMs, ...)")
	muts := mutationCandidates(tools)
	add("mutation", muts,
		"no tool annotated idempotentHint: true (and not read-only) takes a key-like string argument (idempotency_key, operation_key, request_id, key, ...)")
	if len(muts) > 0 {
		m := muts[0]
		if transport == string(protocol.TransportStdio) {
			m.Check = append(m.Check, "IDEM-CONCURRENT starts two server processes and IDEM-RESTART a new one after a kill: "+
				"both must find the operations of the first, so give the server's store in env if its location is configurable "+
				"({tmpdir} is a directory private to each check)")
		}
		add("lookup", lookupCandidates(tools, m), fmt.Sprintf("no read-only tool takes the mutation's key %s and looks like a lookup (lookup, get, find, status ...)", m.Key))
	} else {
		d.Missing["lookup"] = "no mutation role: a lookup reconciles the mutation's operations by their key"
	}
	add("task", taskCandidates(tools), "no tool declares execution.taskSupport optional or required")
	add("flood", floodCandidates(tools), "no read-only tool looks like a progress flood (flood, burst ... with a count argument)")
	silent := "no tool says it stays silent; SSE-HEARTBEAT needs a call that sends nothing for longer than the server's keep-alive interval, which tools/list does not tell"
	if transport != string(protocol.TransportHTTP) {
		silent += " (SSE-HEARTBEAT runs on HTTP only)"
	}
	sil := silentCandidates(tools)
	if len(sil) == 0 && transport == string(protocol.TransportHTTP) {
		sil = slowAsSilent(tools)
	}
	add("silent", sil, silent)
	add("log", logCandidates(tools), logMissing)                         // logrole.go
	add("listChanged", listChangedCandidates(tools), listChangedMissing) // listchangedrole.go
	add("handle", handleCandidates(tools), handleMissing)                // handlerole.go
	// The order of the file, whatever the order found.
	slices.SortStableFunc(d.Proposals, func(a, b *Proposal) int {
		return cmp.Compare(slices.Index(Roles, a.Role), slices.Index(Roles, b.Role))
	})
	d.settle()
	return d
}

// withMutation is why a lookup is commented out with its mutation.
const withMutation = "the mutation it reconciles is commented out"

// settle keeps the roles consistent: a lookup reconciles the mutation's
// key, so it is commented out with the mutation, and back when a call
// completed the mutation.
func (d *Draft) settle() {
	m, l := d.Proposal("mutation"), d.Proposal("lookup")
	switch {
	case m == nil || l == nil:
	case !m.Enabled && l.Enabled:
		l.Enabled, l.Disabled = false, withMutation
	case m.Enabled && !l.Enabled && l.Disabled == withMutation:
		l.Enabled, l.Disabled = true, ""
	}
}

// best sorts candidates by score, then name.
func best(cs []*candidate) []*candidate {
	slices.SortStableFunc(cs, func(a, b *candidate) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return strings.Compare(a.Tool, b.Tool)
	})
	return cs
}

// merge adds src's entries to dst where dst has none.
func merge(dst, src map[string]any) {
	for k, v := range src {
		if _, ok := dst[k]; !ok {
			dst[k] = v
		}
	}
}

func slowCandidates(tools []Tool) []*candidate {
	var cs []*candidate
	for _, t := range tools {
		if !t.ReadOnlyHinted() || t.TaskSupport == "required" {
			continue
		}
		tm, ok := timingOf(t)
		if !ok {
			continue
		}
		c := &candidate{Proposal: &Proposal{Role: "slow", Tool: t.Name, Enabled: true, timing: tm}, score: 1}
		c.Why = append(c.Why, "annotated readOnlyHint: true")
		if mentions(strings.ToLower(t.Description), "progress") {
			c.score += 3
			c.Why = append(c.Why, "its description mentions progress")
		}
		if tm.stepsArg != "" {
			c.score += 2
		}
		if hasWord(words(t.Name), slowNameWords...) {
			c.score++
		}
		args, desc := tm.args(t, slowTotal, slowSteps)
		req, notes := fillRequired(t, keysOf(args)...)
		merge(args, req)
		c.Arguments = args
		c.Why = append(c.Why, describeTiming(tm))
		c.Check = append(c.Check,
			"that it sends notifications/progress while it works when the request carries a progress token (the CANCEL and PROGRESS checks act on the first one)",
			"that a call is long enough to cancel mid-way: "+desc+" with these arguments")
		if tm.guessed {
			c.Check = append(c.Check, fmt.Sprintf("the unit of %s: guessed %s, from neither its name nor its description", tm.timeArg, unitName(tm.unit)))
		}
		c.Check = append(c.Check, notes...)
		c.probeTool, c.tagArg = tagProbe(tools, t)
		cs = append(cs, c)
	}
	return best(cs)
}

func describeTiming(tm timing) string {
	s := fmt.Sprintf("duration-like argument %s (%s", tm.timeArg, unitName(tm.unit))
	if tm.perStep {
		s += " per step"
	}
	s += ")"
	if tm.stepsArg != "" {
		s += " and steps argument " + tm.stepsArg
	}
	return s
}

func unitName(u string) string {
	if u == "ms" {
		return "milliseconds"
	}
	return "seconds"
}

func keysOf(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// tagProbe finds, for a tool with a tag-like string argument, a read-only
// tool that takes the same argument and looks like a probe of tagged calls:
// the instrumented probe some checks read (probe: {tool, tag}, where tag
// names the argument both tools take).
func tagProbe(tools []Tool, t Tool) (probe, tagArg string) {
	for _, p := range t.Input {
		if (p.Type == "string" || p.Type == "") && hasWord(words(p.Name), tagWords...) {
			tagArg = p.Name
			break
		}
	}
	if tagArg == "" {
		return "", ""
	}
	for _, o := range tools {
		if o.Name == t.Name || !o.ReadOnlyHinted() {
			continue
		}
		if _, ok := o.Prop(tagArg); !ok {
			continue
		}
		if hasWord(words(o.Name), probeWords...) || mentions(strings.ToLower(o.Description), "tag", strings.ToLower(tagArg)) {
			return o.Name, tagArg
		}
	}
	return "", ""
}

// keyScore rates a string argument as an idempotency key.
func keyScore(p Prop) (int, string) {
	if p.Type != "string" && p.Type != "" {
		return 0, ""
	}
	n, ws := norm(p.Name), words(p.Name)
	desc := strings.ToLower(p.Description)
	score, why := 0, ""
	switch {
	case slices.Contains(strongKeys, n):
		score, why = 3, "its name"
	case hasWord(ws, "idempotency", "idempotent", "dedup", "dedupe", "deduplication"):
		score, why = 3, "its name"
	case n == "key" || len(ws) > 1 && ws[len(ws)-1] == "key":
		score, why = 1, "its name"
	}
	if mentions(desc, "idempot", "same key", "dedup", "retry", "retries", "reused", "same intended", "replay") {
		if score == 0 {
			why = "its description"
		} else {
			why += " and description"
		}
		score += 2
	}
	if score > 0 && p.Required {
		score++
	}
	return score, why
}

func mutationCandidates(tools []Tool) []*candidate {
	var cs []*candidate
	for _, t := range tools {
		if t.ReadOnlyHinted() || !t.IdempotentSet || !t.Idempotent || t.TaskSupport == "required" {
			continue
		}
		var key Prop
		ks, kwhy := 0, ""
		for _, p := range t.Input {
			if s, w := keyScore(p); s > ks {
				key, ks, kwhy = p, s, w
			}
		}
		if ks == 0 {
			continue
		}
		c := &candidate{Proposal: &Proposal{Role: "mutation", Tool: t.Name, Key: key.Name}, score: ks}
		c.Why = append(c.Why, "annotated idempotentHint: true and not read-only",
			fmt.Sprintf("string argument %s looks like an idempotency key (%s)", key.Name, kwhy))
		if t.DestructiveSet && !t.Destructive {
			c.score++
		}
		if mentions(strings.ToLower(t.Description), "idempot", "same key", "retry", "operation key") {
			c.score++
			c.Why = append(c.Why, "its description speaks of retries or keys")
		}
		args, notes := fillRequired(t, key.Name)
		if len(args) == 0 {
			// IDEM-KEY-REUSE changes an argument other than the key.
			for _, p := range t.Input {
				if p.Name != key.Name && (p.Type == "string" || numeric(p.Type) || p.Type == "boolean") {
					v, note := sample(p)
					args[p.Name] = v
					if note != "" {
						notes = append(notes, note)
					}
					c.Check = append(c.Check, fmt.Sprintf("%s is optional; it is set so that IDEM-KEY-REUSE has an argument besides the key to change", p.Name))
					break
				}
			}
		}
		c.Arguments = args
		c.Check = append(c.Check,
			fmt.Sprintf("that a retry with the same %s and arguments returns the stored result without running the effect again (what the IDEM checks assert)", key.Name),
			"that the target is a test instance: the IDEM checks call it many times, each call with a fresh key a real effect")
		if key.MaxLength != nil && *key.MaxLength < 40 || key.MinLength != nil && *key.MinLength > 40 || key.Pattern != "" {
			c.Check = append(c.Check, fmt.Sprintf("the checks send keys of 40 characters (mcpc-<purpose>-<24 hex digits>); %s's schema constrains it (minLength/maxLength/pattern)", key.Name))
		}
		if t.DestructiveSet && t.Destructive || !t.DestructiveSet {
			c.Check = append(c.Check, "it is not annotated destructiveHint: false: make sure the calls destroy nothing that matters")
		}
		c.Check = append(c.Check, notes...)
		c.probeNamed, c.probeField = probeOf(tools, t, key.Name)
		switch {
		case c.probeNamed == "":
			c.Disabled = fmt.Sprintf("no read-only tool takes %s and counts the executions of the effect: the IDEM checks need a probe (probe: {tool, field})", key.Name)
		case c.probeField == "":
			c.Probe = map[string]any{"tool": c.probeNamed, "field": "FIELD"}
			c.Disabled = fmt.Sprintf("which field of %s's result counts the executions is not in its output schema, and no call has read it", c.probeNamed)
		default:
			c.Probe = map[string]any{"tool": c.probeNamed, "field": c.probeField}
			c.Enabled = true
			c.Why = append(c.Why, fmt.Sprintf("probe %s: read-only, takes %s, its output schema has the number %s", c.probeNamed, key.Name, c.probeField))
		}
		cs = append(cs, c)
	}
	return best(cs)
}

// probeOf picks, for the mutation tool mut keyed by key, the read-only
// tool that counts its executions (the probe), and the count's field when
// the probe's output schema names it.
func probeOf(tools []Tool, mut Tool, key string) (tool, field string) {
	bestScore := 0
	for _, t := range tools {
		if t.Name == mut.Name || !t.ReadOnlyHinted() || t.TaskSupport == "required" {
			continue
		}
		if _, ok := t.Prop(key); !ok {
			continue
		}
		ws := words(t.Name)
		score := 0
		if hasWord(ws, statsWords...) {
			score += 3
		}
		if mentions(strings.ToLower(t.Description), "how many", "number of", "count", "times", "executions") {
			score += 2
		}
		f := countField(numericFields(t.Output))
		if f != "" {
			score += 2
		}
		if hasWord(ws, lookupWords...) {
			score--
		}
		if score >= 2 && score > bestScore {
			tool, field, bestScore = t.Name, f, score
		}
	}
	return tool, field
}

// numericFields lists the numeric properties of an output schema.
func numericFields(ps []Prop) []string {
	var out []string
	for _, p := range ps {
		if numeric(p.Type) {
			out = append(out, p.Name)
		}
	}
	return out
}

// countField picks the field that counts executions among numeric ones:
// a known name first, else the only one.
func countField(fields []string) string {
	for _, want := range countFields {
		for _, f := range fields {
			if norm(f) == norm(want) {
				return f
			}
		}
	}
	if len(fields) == 1 {
		return fields[0]
	}
	return ""
}

func lookupCandidates(tools []Tool, mut *candidate) []*candidate {
	var cs []*candidate
	for _, t := range tools {
		if t.Name == mut.Tool || !t.ReadOnlyHinted() || t.TaskSupport == "required" {
			continue
		}
		p, ok := t.Prop(mut.Key)
		if !ok {
			continue
		}
		c := &candidate{Proposal: &Proposal{Role: "lookup", Tool: t.Name, Enabled: true}}
		c.Why = append(c.Why, "annotated readOnlyHint: true", "takes the mutation's key "+mut.Key)
		if p.Required {
			c.score += 2
		}
		if hasWord(words(t.Name), lookupWords...) {
			c.score += 2
			c.Why = append(c.Why, "its name says it looks something up")
		}
		desc := strings.ToLower(t.Description)
		switch {
		case mentions(desc, "by key", "reconcil", "look up", "lookup", "by operation key"):
			c.score += 2
			c.Why = append(c.Why, "its description speaks of finding by key")
		case mentions(desc, strings.ToLower(mut.Key)):
			c.score++
			c.Why = append(c.Why, "its description names the key "+mut.Key)
		}
		if t.Name == mut.probeNamed {
			c.score -= 3
		}
		if c.score < 3 {
			continue
		}
		c.Check = append(c.Check, fmt.Sprintf("that it finds an operation by %s after the mutation ran (IDEM-RESTART reconciles by key; a result with found: false fails it)", mut.Key))
		cs = append(cs, c)
	}
	return best(cs)
}

func taskCandidates(tools []Tool) []*candidate {
	var cs []*candidate
	for _, t := range tools {
		if t.TaskSupport != "required" && t.TaskSupport != "optional" {
			continue
		}
		c := &candidate{Proposal: &Proposal{Role: "task", Tool: t.Name, Enabled: true}}
		c.Why = append(c.Why, "execution.taskSupport: "+t.TaskSupport)
		if t.TaskSupport == "required" {
			c.score++
		}
		if t.ReadOnlyHinted() {
			c.score += 2
			c.Why = append(c.Why, "annotated readOnlyHint: true")
		} else {
			c.Check = append(c.Check, "it is not annotated read-only: each TASK check creates several tasks with these arguments, and their effects run")
		}
		if hasWord(words(t.Name), taskWords...) {
			c.score++
		}
		args := map[string]any{}
		if tm, ok := timingOf(t); ok {
			a, desc := tm.args(t, slowTotal, slowSteps)
			args = a
			c.Why = append(c.Why, describeTiming(tm))
			c.Check = append(c.Check, "that a task runs long enough to be cancelled while it works: "+desc+" with these arguments")
		} else {
			c.Check = append(c.Check, "that a task runs long enough to be cancelled while it works, and ends within the checks' call timeout (30 s)")
		}
		req, notes := fillRequired(t, keysOf(args)...)
		merge(args, req)
		c.Arguments = args
		c.Check = append(c.Check, notes...)
		cs = append(cs, c)
	}
	return best(cs)
}

package draft

// The flood and silent roles: a tool that says it is one, or the slow
// tool made one by its arguments (many short steps; one long step).

import (
	"fmt"
	"strings"
)

func floodCandidates(tools []Tool) []*candidate {
	var cs []*candidate
	for _, t := range tools {
		if !t.ReadOnlyHinted() || t.TaskSupport == "required" {
			continue
		}
		desc := strings.ToLower(t.Description)
		if !hasWord(words(t.Name), floodWords...) && !mentions(desc, "flood", "as fast as", "burst of") {
			continue
		}
		var count, pad Prop
		for _, p := range t.Input {
			ws := words(p.Name)
			switch {
			case !numeric(p.Type):
			case count.Name == "" && hasWord(ws, countWords...):
				count = p
			case pad.Name == "" && hasWord(ws, padWords...):
				pad = p
			}
		}
		if count.Name == "" {
			continue
		}
		c := &candidate{Proposal: &Proposal{Role: "flood", Tool: t.Name, Enabled: true}, score: 1}
		c.Why = append(c.Why, "annotated readOnlyHint: true", "its name or description says it floods", "count argument "+count.Name)
		args := map[string]any{count.Name: int64(clamp(floodCount, count))}
		if pad.Name != "" {
			args[pad.Name] = int64(clamp(floodPad, pad))
		}
		req, notes := fillRequired(t, keysOf(args)...)
		merge(args, req)
		c.Arguments = args
		c.Check = append(c.Check, "that a call sends a burst of notifications/progress for its token, then its result (FLOW-FINAL-ARRIVES reads them through a slow consumer)")
		c.Check = append(c.Check, notes...)
		c.probeTool, c.tagArg = tagProbe(tools, t)
		cs = append(cs, c)
	}
	if len(cs) == 0 {
		cs = slowAsFlood(tools)
	}
	return best(cs)
}

// floodSteps and floodStepMs make a slow tool that counts steps a burst of
// progress: many steps, each as short as its schema allows.
const (
	floodSteps  = 400
	floodStepMs = 1
)

// silentStepMs is the one step of a slow tool standing in for a silent
// call: 3 s, longer than the keep-alive interval of most servers (the
// reference's is 1 s; SDKs' are 10-30 s, so the check is then told by hand).
const silentStepMs = 3000

// slowAsSilent stands a slow tool in for a silent call on HTTP when no tool
// says it stays silent: one long step, called without a progress token,
// sends nothing until its result.
func slowAsSilent(tools []Tool) []*candidate {
	var cs []*candidate
	for _, t := range tools {
		if !t.ReadOnlyHinted() || t.TaskSupport == "required" {
			continue
		}
		tm, args, step, notes, ok := stepsCall(t, 1, silentStepMs)
		if !ok {
			continue
		}
		c := &candidate{Proposal: &Proposal{Role: "silent", Tool: t.Name, Enabled: true, Arguments: args}}
		c.Why = append(c.Why, "no tool says it stays silent: one long step of "+t.Name+", called without a progress token, sends nothing until its result")
		c.Check = append(c.Check, fmt.Sprintf("that one step of %v %s is longer than the server's keep-alive interval (SSE-HEARTBEAT warns when a silent stream carries no comment)", step, tm.unit))
		c.Check = append(c.Check, notes...)
		cs = append(cs, c)
	}
	return cs
}

// slowAsFlood stands a slow tool in for a flood when no tool says it floods:
// a read-only tool that sends progress per step and takes a steps count and
// a per-step duration, called with many short steps, is a burst of progress
// and then its result, which is what FLOW-FINAL-ARRIVES needs.
func slowAsFlood(tools []Tool) []*candidate {
	var cs []*candidate
	for _, t := range tools {
		if !t.ReadOnlyHinted() || t.TaskSupport == "required" || !mentions(strings.ToLower(t.Description), "progress") {
			continue
		}
		tm, args, step, notes, ok := stepsCall(t, floodSteps, floodStepMs)
		if !ok {
			continue
		}
		c := &candidate{Proposal: &Proposal{Role: "flood", Tool: t.Name, Enabled: true, Arguments: args}}
		c.Why = append(c.Why, "no tool says it floods: "+t.Name+" sends progress per step, so many short steps stand in for a burst")
		c.Check = append(c.Check, fmt.Sprintf("that %d steps of %v %s send a burst of notifications/progress for the token, then the result (FLOW-FINAL-ARRIVES reads them through a slow consumer)", floodSteps, step, tm.unit))
		c.Check = append(c.Check, notes...)
		c.probeTool, c.tagArg = tagProbe(tools, t)
		cs = append(cs, c)
	}
	return cs
}

// stepsCall builds the arguments of a call of a slow tool that counts
// steps (ok: its timing has a steps count and a per-step duration): n steps
// of stepMs each, clamped to the tool's bounds and in its unit, with its
// other required arguments filled in (notes say what to check of those).
func stepsCall(t Tool, n, stepMs float64) (tm timing, args map[string]any, step any, notes []string, ok bool) {
	tm, ok = timingOf(t)
	if !ok || tm.stepsArg == "" || !tm.perStep {
		return tm, nil, nil, nil, false
	}
	steps, _ := t.Prop(tm.stepsArg)
	per, _ := t.Prop(tm.timeArg)
	step = int64(clamp(stepMs, per))
	if tm.unit == "s" {
		step = clamp(stepMs/1000.0, per)
	}
	args = map[string]any{tm.stepsArg: int64(clamp(n, steps)), tm.timeArg: step}
	req, notes := fillRequired(t, keysOf(args)...)
	merge(args, req)
	return tm, args, step, notes, true
}

func silentCandidates(tools []Tool) []*candidate {
	var cs []*candidate
	for _, t := range tools {
		if !t.ReadOnlyHinted() || t.TaskSupport == "required" {
			continue
		}
		desc := strings.ToLower(t.Description)
		if !hasWord(words(t.Name), silentWords...) && !mentions(desc, "keep-alive", "keepalive", "heartbeat", "stays silent", "sends nothing") {
			continue
		}
		c := &candidate{Proposal: &Proposal{Role: "silent", Tool: t.Name, Enabled: true}, score: 1}
		c.Why = append(c.Why, "annotated readOnlyHint: true", "its name or description speaks of silence or keep-alives")
		args := map[string]any{}
		if tm, ok := timingOf(t); ok {
			args, _ = tm.args(t, 2*slowTotal, 2)
		}
		req, notes := fillRequired(t, keysOf(args)...)
		merge(args, req)
		c.Arguments = args
		c.Check = append(c.Check, "that a call sends nothing for longer than the server's SSE keep-alive interval (SSE-HEARTBEAT counts the comments on its stream)")
		c.Check = append(c.Check, notes...)
		cs = append(cs, c)
	}
	return best(cs)
}

package draft

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/mcp-conform/mcp-conform/protocol"
)

// msRound is the precision of the durations a draft reports.
const msRound = 10 * time.Millisecond

// maxTries bounds how many candidates of one role Confirm calls.
const maxTries = 3

// Confirm calls what the caller's policy allows to settle the proposals:
// whether the slow tool sends progress, which field of the probe counts,
// whether the mutation counts once per key (only when any tool may be
// called), whether the lookup and the instrumented probes answer. What it
// saw goes into each proposal's Seen; what refutes a proposal disables it,
// with the reason.
func Confirm(ctx context.Context, c *Caller, d *Draft) {
	confirmSlow(ctx, c, d)
	confirmMutation(ctx, c, d)
	confirmFlood(ctx, c, d)
	confirmTask(d)
	d.settle()
}

// replace makes cand the proposal for its role.
func (d *Draft) replace(cand *candidate) {
	for i, p := range d.Proposals {
		if p.Role == cand.Role {
			if p != cand.Proposal {
				cand.Others = append([]string{p.Tool}, without(p.Others, cand.Tool)...)
			}
			d.Proposals[i] = cand.Proposal
		}
	}
}

func without(l []string, s string) []string {
	var out []string
	for _, x := range l {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}

// notCalled notes, once, that a proposal's tool was not called and why.
func notCalled(p *Proposal, tool, why string) {
	p.Seen = append(p.Seen, fmt.Sprintf("%s was not called: %s", tool, why))
}

func confirmSlow(ctx context.Context, c *Caller, d *Draft) {
	cands := d.cands["slow"]
	if len(cands) == 0 {
		return
	}
	var chosen, quiet *candidate
	for i, cand := range cands {
		if i == maxTries {
			break
		}
		if ok, why := c.Allowed(cand.Tool); !ok {
			notCalled(cand.Proposal, cand.Tool, why)
			continue
		}
		r, err := c.Call(ctx, cand.Tool, cand.Arguments, true)
		switch {
		case err != nil:
			cand.Enabled, cand.Disabled = false, err.Error()
		case r.IsError:
			cand.Enabled, cand.Disabled = false, "a call with these arguments failed: "+r.Text()
		case r.Progress == 0:
			cand.Seen = append(cand.Seen, fmt.Sprintf("a call took %s and sent no notifications/progress for its token", r.Elapsed.Round(msRound)))
			if quiet == nil {
				quiet = cand
			}
		default:
			cand.Seen = append(cand.Seen, fmt.Sprintf("a call took %s and sent %d notifications/progress for its token", r.Elapsed.Round(msRound), r.Progress))
			chosen = cand
		}
		if chosen != nil {
			break
		}
	}
	switch {
	case chosen != nil:
		d.replace(chosen)
	case quiet != nil:
		quiet.Check = append(quiet.Check, "it sent no progress: the checks that act on the first progress notification will SKIP")
		d.replace(quiet)
	}
	confirmTagProbe(ctx, c, d, "slow")
}

// confirmTagProbe settles the instrumented probe of the slow or flood
// role: a tagged call, then the probe asked about the tag must report the
// call's steps as run and the call as finished (the probe contract some
// checks read: started, stepsRun, finished, cancelled).
func confirmTagProbe(ctx context.Context, c *Caller, d *Draft, role string) {
	p := d.Proposal(role)
	var cand *candidate
	for _, x := range d.cands[role] {
		if x.Proposal == p {
			cand = x
		}
	}
	if cand == nil || cand.probeTool == "" || !p.Enabled {
		return
	}
	want := fmt.Sprintf("probe: {tool: %s, tag: %s}", cand.probeTool, cand.tagArg)
	for _, tool := range []string{p.Tool, cand.probeTool} {
		if ok, why := c.Allowed(tool); !ok {
			p.ProbeNote = fmt.Sprintf("%s  # looks like an instrumented probe of tagged calls; not confirmed (%s was not called: %s)", want, tool, why)
			return
		}
	}
	tag := "mcp-conform-init-" + randomHex(8)
	args := maps.Clone(p.Arguments)
	args[cand.tagArg] = tag
	if role == "flood" {
		shrinkFlood(args, p.Arguments)
	}
	r, err := c.Call(ctx, p.Tool, args, false)
	if err == nil && !r.IsError {
		r, err = c.Call(ctx, cand.probeTool, map[string]any{cand.tagArg: tag}, false)
	}
	var st struct {
		Started  *bool    `json:"started"`
		StepsRun *float64 `json:"stepsRun"`
		Finished *bool    `json:"finished"`
	}
	if err == nil && !r.IsError && r.Object != nil {
		b, _ := json.Marshal(r.Object)
		_ = json.Unmarshal(b, &st)
	}
	if err != nil || r.IsError || st.Finished == nil || st.StepsRun == nil || !*st.Finished {
		why := "its answer has no finished: true and stepsRun for the tag"
		if err != nil {
			why = err.Error()
		} else if r.Msg.Raw != nil {
			why += ": " + r.Text()
		}
		p.ProbeNote = fmt.Sprintf("%s  # looks like an instrumented probe of tagged calls, but a tagged call did not show in it (%s)", want, why)
		return
	}
	p.Probe = map[string]any{"tool": cand.probeTool, "tag": cand.tagArg}
	p.Seen = append(p.Seen, fmt.Sprintf("probe %s reported a call tagged by %s: stepsRun %g, finished true", cand.probeTool, cand.tagArg, *st.StepsRun))
	p.Check = append(p.Check, fmt.Sprintf("that %s reports started, stepsRun, finished and cancelled per tag from every session (the HTTP checks read it to see whether work stopped)", cand.probeTool))
}

// shrinkFlood makes a confirming flood call small: a few notifications.
func shrinkFlood(args, orig map[string]any) {
	for k, v := range orig {
		if n, ok := v.(int64); ok && n > 10 {
			args[k] = int64(10)
		}
	}
}

func confirmFlood(ctx context.Context, c *Caller, d *Draft) {
	p := d.Proposal("flood")
	if p == nil {
		return
	}
	if ok, why := c.Allowed(p.Tool); !ok {
		notCalled(p, p.Tool, why)
		return
	}
	args := maps.Clone(p.Arguments)
	shrinkFlood(args, p.Arguments)
	r, err := c.Call(ctx, p.Tool, args, true)
	switch {
	case err != nil:
		p.Enabled, p.Disabled = false, err.Error()
	case r.IsError:
		p.Enabled, p.Disabled = false, "a small call failed: "+r.Text()
	case r.Progress == 0:
		p.Enabled, p.Disabled = false, "a small call sent no notifications/progress for its token: not a flood of progress"
	default:
		p.Seen = append(p.Seen, fmt.Sprintf("a small call (%s) sent %d notifications/progress, then its result", flowArgs(args), r.Progress))
	}
	confirmTagProbe(ctx, c, d, "flood")
}

func flowArgs(args map[string]any) string {
	var parts []string
	for _, k := range keysOf(args) {
		parts = append(parts, fmt.Sprintf("%s %v", k, args[k]))
	}
	return strings.Join(parts, ", ")
}

// confirmTask checks the capabilities the TASK checks need; it calls no
// task (a task-augmented call is not a plain tools/call).
func confirmTask(d *Draft) {
	p := d.Proposal("task")
	if p == nil {
		return
	}
	caps := d.capabilities
	switch {
	case bytes.Contains(caps, []byte(protocol.ExtensionTasks)):
		p.Seen = append(p.Seen, "the server declares the "+protocol.ExtensionTasks+" extension")
	case taskCapability(caps):
		p.Seen = append(p.Seen, "the server declares capabilities.tasks.requests.tools.call")
	default:
		p.Check = append(p.Check, "the server declares no task support in its capabilities for "+d.Version+": the TASK checks will SKIP")
	}
}

func taskCapability(caps json.RawMessage) bool {
	var c struct {
		Tasks struct {
			Requests struct {
				Tools struct {
					Call json.RawMessage `json:"call"`
				} `json:"tools"`
			} `json:"requests"`
		} `json:"tasks"`
	}
	return json.Unmarshal(caps, &c) == nil && c.Tasks.Requests.Tools.Call != nil
}

// newKey is a fresh operation key of 40 characters, as the checks send.
func newKey() string { return "mcpc-init-" + randomHex(15) }

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func confirmMutation(ctx context.Context, c *Caller, d *Draft) {
	p := d.Proposal("mutation")
	if p == nil {
		return
	}
	var cand *candidate
	for _, x := range d.cands["mutation"] {
		if x.Proposal == p {
			cand = x
		}
	}
	look := d.Proposal("lookup")
	if look != nil {
		confirmLookup(ctx, c, look, p.Key)
	}
	if cand.probeNamed == "" {
		return
	}
	if ok, why := c.Allowed(cand.probeNamed); !ok {
		notCalled(p, "probe "+cand.probeNamed, why)
		if p.Enabled {
			p.Check = append(p.Check, fmt.Sprintf("that %s's %s counts the executions for a key", cand.probeNamed, cand.probeField))
		}
		return
	}
	count := func(key string) (float64, Result, error) {
		args := map[string]any{}
		if key != "" {
			args[p.Key] = key
		}
		r, err := c.Call(ctx, cand.probeNamed, args, false)
		if err != nil {
			return 0, r, err
		}
		if r.IsError {
			return 0, r, errors.New("it answered " + r.Text())
		}
		if cand.probeField == "" {
			cand.probeField = countField(objectNumbers(r.Object))
		}
		n, ok := r.Number(cand.probeField)
		if !ok {
			return 0, r, fmt.Errorf("its answer has no number %q: %s", cand.probeField, r.Text())
		}
		return n, r, nil
	}
	key := newKey()
	before, _, err := count(key)
	if err != nil {
		p.Enabled = false
		p.Disabled = fmt.Sprintf("probe %s asked about a fresh key: %v", cand.probeNamed, err)
		if cand.probeField == "" {
			p.Probe = map[string]any{"tool": cand.probeNamed, "field": "FIELD"}
		}
		return
	}
	p.Probe = map[string]any{"tool": cand.probeNamed, "field": cand.probeField}
	if !p.Enabled {
		p.Enabled, p.Disabled = true, ""
		p.Why = append(p.Why, fmt.Sprintf("probe %s: read-only, takes %s; its answer counts in %s", cand.probeNamed, p.Key, cand.probeField))
	}
	p.Seen = append(p.Seen, fmt.Sprintf("probe %s answered a fresh key with %s %g", cand.probeNamed, cand.probeField, before))
	if total, _, err := count(""); err != nil {
		p.Check = append(p.Check, fmt.Sprintf("probe %s gives no total without a key (%v): IDEM-NAIVE and IDEM-ANNOTATION cannot count keyless calls", cand.probeNamed, err))
	} else {
		p.Seen = append(p.Seen, fmt.Sprintf("without a key it gave a total (%s %g)", cand.probeField, total))
	}
	if ok, why := c.Allowed(p.Tool); !ok {
		notCalled(p, p.Tool, why)
		p.Check = append(p.Check, "run mcp-conform init --try-tools against a test instance to see one keyed call counted once")
		return
	}
	args := maps.Clone(p.Arguments)
	args[p.Key] = key
	r, err := c.Call(ctx, p.Tool, args, false)
	if err != nil || r.IsError {
		why := ""
		if err != nil {
			why = err.Error()
		} else {
			why = r.Text()
		}
		p.Enabled, p.Disabled = false, "a call with a fresh key and these arguments failed: "+why
		return
	}
	after, _, err := count(key)
	if err != nil || after != before+1 {
		p.Enabled = false
		p.Disabled = fmt.Sprintf("after one call with a fresh key, probe %s counted %g executions (before: %g; %v): it does not count this tool's effect by key", cand.probeNamed, after, before, err)
		return
	}
	if _, err := c.Call(ctx, p.Tool, args, false); err != nil {
		p.Check = append(p.Check, "a replay with the same key failed: "+err.Error())
		return
	}
	again, _, err := count(key)
	switch {
	case err != nil:
		p.Check = append(p.Check, "after a replay the probe failed: "+err.Error())
	case again != after:
		p.Seen = append(p.Seen, fmt.Sprintf("with --try-tools: one call with a fresh key counted 1 execution, but a replay with the same key and arguments ran it again (%s %g): the IDEM checks will say so", cand.probeField, again))
	default:
		p.Seen = append(p.Seen, "with --try-tools: one call with a fresh key counted 1 execution; a replay with the same key and arguments counted none more")
	}
	if look != nil && (look.Enabled || look.Disabled == withMutation) {
		if ok, _ := c.Allowed(look.Tool); ok {
			r, err := c.Call(ctx, look.Tool, map[string]any{p.Key: key}, false)
			switch {
			case err != nil || r.IsError || string(r.Object["found"]) == "false":
				look.Check = append(look.Check, "with --try-tools it did not find the key just used: "+errText(err, r))
			default:
				look.Seen = append(look.Seen, "with --try-tools it found the key just used: "+shortResult(r, key))
			}
		}
	}
}

// confirmLookup asks the lookup about a key nobody used.
func confirmLookup(ctx context.Context, c *Caller, p *Proposal, key string) {
	if ok, why := c.Allowed(p.Tool); !ok {
		notCalled(p, p.Tool, why)
		return
	}
	k := newKey()
	r, err := c.Call(ctx, p.Tool, map[string]any{key: k}, false)
	switch {
	case err != nil:
		p.Enabled, p.Disabled = false, err.Error()
	case r.Msg.Env.Error != nil:
		p.Check = append(p.Check, "it answered an unknown key with a JSON-RPC error: "+r.Text())
	default:
		p.Seen = append(p.Seen, "asked about an unknown key it answered: "+shortResult(r, k))
	}
}

func errText(err error, r Result) string {
	if err != nil {
		return err.Error()
	}
	return r.Text()
}

// shortResult is the result's object (or its response) in a line, with
// the key the draft sent written KEY (it is random).
func shortResult(r Result, key string) string {
	s := r.Text()
	if r.Object != nil {
		b, _ := json.Marshal(r.Object)
		s = string(b)
	}
	s = strings.ReplaceAll(s, key, "KEY")
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

// objectNumbers lists the numeric fields of a result's object.
func objectNumbers(o map[string]json.RawMessage) []string {
	var out []string
	for _, k := range keysOfRaw(o) {
		var n float64
		if json.Unmarshal(o[k], &n) == nil {
			out = append(out, k)
		}
	}
	return out
}

func keysOfRaw(m map[string]json.RawMessage) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

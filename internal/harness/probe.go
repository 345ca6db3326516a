package harness

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcp-conform/mcp-conform/clients"
)

// ProbeState is what a slow or flood role's probe (probe: {tool, tag})
// reports about one tagged call. Only the fields the probe answered carry
// information: a probe that says nothing about a field must not be read as
// reporting its zero.
type ProbeState struct {
	Started   bool
	StepsRun  int
	Finished  bool
	Cancelled bool
	// BacklogPeak is the most messages the call's stream held unsent for
	// a slow consumer (the flood role's probe); nil when the probe does
	// not report it.
	BacklogPeak *int
}

// String is the state as a reason quotes it.
func (s ProbeState) String() string {
	peak := "not reported"
	if s.BacklogPeak != nil {
		peak = strconv.Itoa(*s.BacklogPeak)
	}
	return fmt.Sprintf("{started:%t stepsRun:%d finished:%t cancelled:%t backlogPeak:%s}", s.Started, s.StepsRun, s.Finished, s.Cancelled, peak)
}

// probeFields are the fields of the probe contract (README: probe: {tool, tag}).
var probeFields = []string{"started", "stepsRun", "finished", "cancelled", "backlogPeak"}

// ProbeArgs are the arguments that ask a probe about tag: the role's
// declared tag argument (the one name the role's tool and its probe take).
func ProbeArgs(tagArg, tag string) map[string]any {
	return map[string]any{tagArg: tag}
}

// ReadProbe reads a probe tool's answer about tag (asked by tagArg). An
// answer that refuses the call, carries no JSON object (structuredContent
// or JSON text), names another tag, or holds none of the contract's fields
// (started, stepsRun, finished, cancelled, backlogPeak) is an error: it
// tells nothing about the tagged work, and a check reading its zero values
// would take "the probe said nothing" for "no work ran".
func ReadProbe(m clients.Message, tagArg, tag string) (ProbeState, error) {
	o := ParseOutcome(m)
	if o.Failed() {
		return ProbeState{}, fmt.Errorf("the probe refused the call with %s: %s", tagArg+"="+strconv.Quote(tag), Clip(m.Raw))
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(o.Structured, &obj); err != nil || obj == nil {
		return ProbeState{}, fmt.Errorf("probe answered nothing usable (no JSON object in structuredContent or text): %s", Clip(m.Raw))
	}
	if raw, ok := obj[tagArg]; ok {
		var echo string
		if json.Unmarshal(raw, &echo) == nil && echo != tag {
			return ProbeState{}, fmt.Errorf("the probe was asked about %s %q and answered about %q: %s", tagArg, tag, echo, Clip(m.Raw))
		}
	}
	var s struct {
		Started     *bool    `json:"started"`
		StepsRun    *float64 `json:"stepsRun"`
		Finished    *bool    `json:"finished"`
		Cancelled   *bool    `json:"cancelled"`
		BacklogPeak *float64 `json:"backlogPeak"`
	}
	if err := json.Unmarshal(o.Structured, &s); err != nil {
		return ProbeState{}, fmt.Errorf("probe answered nothing usable (a field of the wrong type: %v): %s", err, Clip(m.Raw))
	}
	if s.Started == nil && s.StepsRun == nil && s.Finished == nil && s.Cancelled == nil && s.BacklogPeak == nil {
		return ProbeState{}, fmt.Errorf("probe answered nothing usable (none of %s for %s %q): %s", strings.Join(probeFields, ", "), tagArg, tag, Clip(m.Raw))
	}
	var st ProbeState
	if s.Started != nil {
		st.Started = *s.Started
	}
	if s.StepsRun != nil {
		st.StepsRun = int(*s.StepsRun)
	}
	if s.Finished != nil {
		st.Finished = *s.Finished
	}
	if s.Cancelled != nil {
		st.Cancelled = *s.Cancelled
	}
	if s.BacklogPeak != nil {
		n := int(*s.BacklogPeak)
		st.BacklogPeak = &n
	}
	return st, nil
}

// Probe asks the target's probe tool how much work ran for tag, passing the
// tag under the role's declared argument name tagArg. A probe that cannot
// be asked or answers nothing usable ends the check as an ERROR.
func (c *HConn) Probe(tool, tagArg, tag string) ProbeState {
	ctx, cancel := c.h.Op()
	defer cancel()
	m, err := c.W.Call(ctx, "tools/call", map[string]any{"name": tool, "arguments": ProbeArgs(tagArg, tag)})
	if err != nil {
		c.h.Errorf("probe tool %s: %v", tool, err)
	}
	st, err := ReadProbe(m, tagArg, tag)
	if err != nil {
		c.h.Errorf("probe tool %s: %v", tool, err)
	}
	return st
}

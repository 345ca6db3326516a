package reports

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mcp-conform/mcp-conform/protocol"
)

// BaselineEntry is one expected failure of a baseline file: a check id with
// the reason it is expected to fail, optionally narrowed to a transport, a
// protocol version or a target.
//
//   - id: SSE-HEARTBEAT
//     reason: our gateway strips SSE comments; tracked in OPS-123
//     transport: http          # optional: stdio, http or websocket
//     spec: 2025-11-25         # optional: protocol version
//     target: my-server        # optional: the report's target name, or mutant
type BaselineEntry struct {
	ID        string `yaml:"id" json:"id"`
	Reason    string `yaml:"reason" json:"reason"`
	Transport string `yaml:"transport,omitempty" json:"transport,omitempty"`
	Spec      string `yaml:"spec,omitempty" json:"spec,omitempty"`
	Target    string `yaml:"target,omitempty" json:"target,omitempty"`
}

// Baseline is an expected-failures list, as the official conformance
// suite's --expected-failures file: a listed FAIL or WARN does not fail the
// exit code, an unlisted one does, and a listed check that now passes is
// stale.
type Baseline struct {
	// File is where it was read from, for messages.
	File    string
	Entries []BaselineEntry
}

// BaselineResult is what a baseline did to a run.
type BaselineResult struct {
	// File is the baseline file.
	File string `json:"file"`
	// Expected counts the listed failures this run saw; they are marked on
	// their checks (Check.Expected) and do not fail the exit code.
	Expected int `json:"expected"`
	// Stale lists entries whose checks ran and all passed: the failure is
	// fixed and the entry should go. They fail the exit code under
	// --strict-baseline.
	Stale []BaselineEntry `json:"stale,omitempty"`
	// Unmatched lists entries that matched no check that ran to a verdict
	// (not selected, skipped): neither expected nor stale.
	Unmatched []BaselineEntry `json:"unmatched,omitempty"`
}

// LoadBaseline reads a baseline file: a YAML list of entries, each with an
// id and a reason.
func LoadBaseline(path string) (*Baseline, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read baseline: %w", err)
	}
	bl, err := ParseBaseline(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("baseline %s: %w", path, err)
	}
	bl.File = path
	return bl, nil
}

// ParseBaseline reads a baseline from r. Unknown fields, an entry without an
// id or a reason, and a duplicate entry are errors.
func ParseBaseline(r io.Reader) (*Baseline, error) {
	var entries []BaselineEntry
	dec := yaml.NewDecoder(r)
	dec.KnownFields(true)
	if err := dec.Decode(&entries); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("want a YAML list of {id, reason}: %w", err)
	}
	seen := map[BaselineEntry]bool{}
	for i, e := range entries {
		switch {
		case strings.TrimSpace(e.ID) == "":
			return nil, fmt.Errorf("entry %d: no id", i+1)
		case strings.TrimSpace(e.Reason) == "":
			return nil, fmt.Errorf("entry %d (%s): no reason: say why the failure is expected", i+1, e.ID)
		case e.Transport != "" && !protocol.Transport(e.Transport).Known():
			return nil, fmt.Errorf("entry %d (%s): transport %q: stdio, http or websocket", i+1, e.ID, e.Transport)
		}
		k := e
		k.Reason = ""
		if seen[k] {
			return nil, fmt.Errorf("entry %d (%s): listed twice", i+1, e.ID)
		}
		seen[k] = true
	}
	return &Baseline{Entries: entries}, nil
}

// matches reports whether e covers check c of report r.
func (e BaselineEntry) matches(r *Report, c Check) bool {
	return strings.EqualFold(e.ID, c.ID) &&
		(e.Transport == "" || e.Transport == c.Transport) &&
		(e.Spec == "" || e.Spec == c.ProtocolVersion) &&
		(e.Target == "" || e.Target == r.Target.Name || e.Target == r.Target.Mutant || e.Target == c.Target)
}

// Apply marks r's listed FAIL and WARN checks as expected (Check.Expected)
// and records the result in r.Baseline. An ERROR is never expected: the
// harness could not run the check, whatever the baseline says.
func (b *Baseline) Apply(r *Report) {
	res := &BaselineResult{File: b.File}
	for _, e := range b.Entries {
		matched, failing, passed := false, false, false
		for i := range r.Checks {
			c := &r.Checks[i]
			if !e.matches(r, *c) {
				continue
			}
			switch c.Status {
			case Fail, Warn:
				matched, failing = true, true
				if c.Expected == "" {
					c.Expected = e.Reason
					res.Expected++
				}
			case Error:
				matched, failing = true, true
			case Pass:
				matched, passed = true, true
			}
		}
		switch {
		case !matched:
			res.Unmatched = append(res.Unmatched, e)
		case passed && !failing:
			res.Stale = append(res.Stale, e)
		}
	}
	r.Baseline = res
}

// RunExitCode is the exit code of a run: ExitCode over the checks that are
// not expected failures, 1 at least when strictBaseline is set and the
// baseline has stale entries, and 2 when a target refused every protocol
// version the run asked it (nothing could be checked there).
func RunExitCode(r *Report, strict, strictBaseline bool) int {
	code := ExitCode(countedFailures(r), strict)
	if code == 0 && strictBaseline && r.Baseline != nil && len(r.Baseline.Stale) > 0 {
		code = 1
	}
	if code == 0 && refusedEverything(r) {
		code = 2 // nothing could be checked on that target
	}
	return code
}

// refusedEverything reports whether a target of r refused every protocol
// version the run probed (Target.Versions lists some, none accepted).
func refusedEverything(r *Report) bool {
	accepted := map[string]bool{}
	for _, v := range r.Target.Versions {
		accepted[v.Target] = accepted[v.Target] || v.Status == Accepted
	}
	for _, ok := range accepted {
		if !ok {
			return true
		}
	}
	return false
}

// writeBaseline writes the console lines of a baseline: each expected
// failure, each stale entry, each entry that matched nothing.
func writeBaseline(b *bytes.Buffer, r *Report, strictBaseline bool) {
	res := r.Baseline
	if res == nil {
		return
	}
	name := "baseline"
	if res.File != "" {
		name += " " + oneLine(res.File)
	}
	fmt.Fprintf(b, "%s: %d expected %s, %d stale\n", name, res.Expected,
		plural(res.Expected, "failure", "failures"), len(res.Stale))
	for _, c := range r.Checks {
		if c.Expected != "" {
			fmt.Fprintf(b, "  expected %s %s%s: %s\n", c.Status, oneLine(c.ID), transportSuffix(c), oneLine(c.Expected))
		}
	}
	for _, e := range res.Stale {
		note := "remove it"
		if strictBaseline {
			note = "fails the run under --strict-baseline"
		}
		fmt.Fprintf(b, "  stale    %s%s: listed as expected to fail but passed (%s)\n", oneLine(e.ID), qualifiers(e), note)
	}
	for _, e := range res.Unmatched {
		fmt.Fprintf(b, "  unused   %s%s: no check with a verdict in this run\n", oneLine(e.ID), qualifiers(e))
	}
}

// qualifiers renders an entry's transport, spec and target.
func qualifiers(e BaselineEntry) string {
	var q []string
	for _, s := range []string{e.Transport, e.Spec, e.Target} {
		if s != "" {
			q = append(q, oneLine(s))
		}
	}
	if len(q) == 0 {
		return ""
	}
	return " [" + strings.Join(q, " ") + "]"
}

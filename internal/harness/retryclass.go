package harness

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcp-conform/mcp-conform/internal/retryclass"
	"github.com/mcp-conform/mcp-conform/reports"
)

// classKey names one target on one transport in the retry-class table.
func classKey(m *Manifest) string { return m.Name + "\x00" + m.Transport }

// runEvidence is what the IDEM checks of a run observed about tools, for
// the retry-class table; reset by Configure.
type runEvidence struct {
	// idem lists, per target and tool, what the ledger checks proved.
	idem map[string]map[string][]string
	// annotations holds, per target and tool, the IDEM-ANNOTATION verdict;
	// lied marks the tools whose idempotentHint was caught lying.
	annotations map[string]map[string]string
	lied        map[string]map[string]bool
}

func newRunEvidence() *runEvidence {
	return &runEvidence{idem: map[string]map[string][]string{}, annotations: map[string]map[string]string{}, lied: map[string]map[string]bool{}}
}

var evidence = newRunEvidence()

// RecordIdem notes what a passing IDEM check proved about tool.
func (h *H) RecordIdem(tool, ev string) {
	cfgMu.Lock()
	defer cfgMu.Unlock()
	k := classKey(h.target)
	if evidence.idem[k] == nil {
		evidence.idem[k] = map[string][]string{}
	}
	if !slices.Contains(evidence.idem[k][tool], ev) {
		evidence.idem[k][tool] = append(evidence.idem[k][tool], ev)
		slices.Sort(evidence.idem[k][tool])
	}
}

// RecordAnnotation notes IDEM-ANNOTATION's verdict on tool.
func (h *H) RecordAnnotation(tool, ev string) {
	cfgMu.Lock()
	defer cfgMu.Unlock()
	k := classKey(h.target)
	if evidence.annotations[k] == nil {
		evidence.annotations[k] = map[string]string{}
		evidence.lied[k] = map[string]bool{}
	}
	evidence.annotations[k][tool] = ev
	evidence.lied[k][tool] = strings.Contains(ev, "ran again")
}

// retryClasses builds the retry-class table: for each tool each target
// listed when it was probed, the class retryclass.Classify gives from the
// manifest's roles, the tool's annotations and what this run's IDEM checks
// observed on that target's transport.
func retryClasses(cfg *Config, tools map[string][]map[string]any, ev *runEvidence, res []reports.Check) []reports.ToolClass {
	var out []reports.ToolClass
	seen := map[string]bool{}
	for _, t := range cfg.Targets {
		k := classKey(t)
		if seen[k] || tools[k] == nil {
			continue
		}
		seen[k] = true
		mut, hasMut := t.Roles["mutation"]
		look, hasLook := t.Roles["lookup"]
		var failed []string
		for _, c := range res {
			if c.Transport == t.Transport && slices.Contains(retryclass.LedgerChecks, c.ID) && c.Status == reports.Fail {
				failed = append(failed, fmt.Sprintf("%s FAIL: %s", c.ID, clipText(c.Reason, 160)))
			}
		}
		for _, tool := range tools[k] {
			name, _ := tool["name"].(string)
			f := retryclass.Facts{Lookup: hasLook && name == look.Tool, Run: &retryclass.Run{
				Annotation: ev.annotations[k][name], AnnotationLied: ev.lied[k][name]}}
			row := reports.ToolClass{Target: retryclass.TargetLabel(t.Name, t.Transport), Tool: name}
			if hasMut && name == mut.Tool {
				f.Mutation, f.Key = true, mut.Key
				f.Run.LedgerFailed, f.Run.LedgerProved = failed, ev.idem[k][name]
				row.Key = mut.Key
			}
			row.Class, row.Evidence = retryclass.Classify(retryclass.Tool{Name: name,
				ReadOnly: hint(tool, "readOnlyHint"), Destructive: hint(tool, "destructiveHint"),
				Idempotent: hint(tool, "idempotentHint")}, f)
			out = append(out, row)
		}
	}
	return out
}

// hint reads one boolean annotation of a tools/list entry (nil: absent).
func hint(tool map[string]any, name string) *bool {
	a, _ := tool["annotations"].(map[string]any)
	if v, ok := a[name].(bool); ok {
		return &v
	}
	return nil
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

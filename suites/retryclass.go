package suites

import (
	"fmt"
	"slices"
	"strings"

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

// recordIdem notes what a passing IDEM check proved about tool.
func (h *H) recordIdem(tool, ev string) {
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

// recordAnnotation notes IDEM-ANNOTATION's verdict on tool.
func (h *H) recordAnnotation(tool, ev string) {
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

// ledgerChecks are the IDEM checks whose failure makes a keyed mutation
// unsafe to retry even with its key.
var ledgerChecks = []string{"IDEM-LOST-RESPONSE", "IDEM-KEY-REUSE", "IDEM-CONCURRENT", "IDEM-RESTART", "IDEM-REPLAY-IDENTICAL"}

// retryClasses builds the retry-class table: for each tool each target
// listed when it was probed, Safe (read-only), Conditional (a keyed
// mutation: retry with the same key; or an idempotentHint the run
// confirmed), or Unsafe (a mutation without a key, or one whose IDEM checks
// failed: do not retry, reconcile first), with the evidence.
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
		var failed []string
		for _, c := range res {
			if c.Transport == t.Transport && slices.Contains(ledgerChecks, c.ID) && c.Status == reports.Fail {
				failed = append(failed, fmt.Sprintf("%s FAIL: %s", c.ID, clipText(c.Reason, 160)))
			}
		}
		for _, tool := range tools[k] {
			name, _ := tool["name"].(string)
			row := reports.ToolClass{Target: t.Name + " (" + t.Transport + ")", Tool: name}
			ro, roSet := annotation(tool, "readOnlyHint")
			idem, idemSet := annotation(tool, "idempotentHint")
			ann := annotationText(ro, roSet, idem, idemSet)
			switch {
			case hasMut && name == mut.Tool:
				row.Key = mut.Key
				row.Evidence = append(row.Evidence, "manifest: mutation role keyed by "+mut.Key, ann)
				if len(failed) > 0 {
					row.Class = reports.Unsafe
					row.Evidence = append(row.Evidence, failed...)
					row.Evidence = append(row.Evidence, "the key does not make retries safe here: reconcile (lookup) before any retry")
				} else {
					row.Class = reports.Conditional
					proved := ev.idem[k][name]
					row.Evidence = append(row.Evidence, proved...)
					row.Evidence = append(row.Evidence, fmt.Sprintf("retry with the same %s: %d of %d ledger checks proved it in this run", mut.Key, len(proved), len(ledgerChecks)))
				}
			case ro:
				row.Class = reports.Safe
				row.Evidence = []string{ann}
			case idem && ev.annotations[k][name] != "" && !ev.lied[k][name]:
				row.Class = reports.Conditional
				row.Evidence = []string{ann + " (retry with the same arguments)", ev.annotations[k][name]}
			default:
				row.Class = reports.Unsafe
				row.Evidence = []string{ann, "mutation without a declared key: do not retry blindly, reconcile first"}
				if e := ev.annotations[k][name]; e != "" {
					row.Evidence = append(row.Evidence, e)
				} else if idem {
					row.Evidence = append(row.Evidence, "idempotentHint not verified by the run; annotations are untrusted hints (tools.mdx)")
				}
			}
			out = append(out, row)
		}
	}
	return out
}

func annotationText(ro, roSet, idem, idemSet bool) string {
	var parts []string
	if roSet {
		parts = append(parts, fmt.Sprintf("readOnlyHint: %v", ro))
	}
	if idemSet {
		parts = append(parts, fmt.Sprintf("idempotentHint: %v", idem))
	}
	if len(parts) == 0 {
		return "tools/list: no annotations (defaults: not read-only, not idempotent)"
	}
	return "tools/list: " + strings.Join(parts, ", ")
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

package retryclass

import (
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/reports"
)

// TestClassify covers the cases of the two rule sets this package replaced
// (the review command's classify and the run's retry-class table), and the
// ones where they disagreed: a key-less mutation role (review: Unsafe; the
// table: Conditional with an empty key — Unsafe here), an idempotentHint a
// run confirmed (review: Unsafe; the table: Conditional — Conditional here,
// only with the run's evidence), a keyed mutation whose ledger check failed
// (review could not see it — Unsafe here, whoever asks).
func TestClassify(t *testing.T) {
	yes, no := true, false
	confirmed := &Run{Annotation: "IDEM-ANNOTATION: idempotentHint true confirmed"}
	for _, tc := range []struct {
		name string
		tool Tool
		f    Facts
		want reports.RetryClass
		// evidence must appear in some line; last in the deciding line.
		evidence, last string
	}{
		// From review's classify.
		{"read-only", Tool{ReadOnly: &yes}, Facts{}, reports.Safe, "readOnlyHint: true", "retry with a new JSON-RPC id"},
		{"no annotations", Tool{}, Facts{}, reports.Unsafe, "readOnlyHint absent", "reconcile first"},
		{"read-only false", Tool{ReadOnly: &no}, Facts{}, reports.Unsafe, "readOnlyHint: false", "reconcile first"},
		{"idempotent hint without key", Tool{Idempotent: &yes, Destructive: &no}, Facts{}, reports.Unsafe, "a hint, not a contract", "reconcile first"},
		{"keyed mutation", Tool{}, Facts{Mutation: true, Key: "operation_key"}, reports.Conditional, `key "operation_key"`, "no run verified it"},
		{"keyed mutation marked read-only", Tool{ReadOnly: &yes}, Facts{Mutation: true, Key: "k"}, reports.Conditional, "contradicts", "retry with the same k"},
		{"mutation without key", Tool{ReadOnly: &yes}, Facts{Mutation: true}, reports.Unsafe, "without a key", "reconcile first"},
		{"lookup role", Tool{ReadOnly: &yes}, Facts{Lookup: true}, reports.Safe, "manifest role lookup", "retry with a new JSON-RPC id"},
		// From the run's table.
		{"ledger checks pass", Tool{Idempotent: &yes}, Facts{Mutation: true, Key: "operation_key", Run: &Run{LedgerProved: []string{"IDEM-LOST-RESPONSE: ..."}}},
			reports.Conditional, "IDEM-LOST-RESPONSE: ...", "1 of 5 ledger checks proved it in this run"},
		{"a ledger check failed", Tool{}, Facts{Mutation: true, Key: "operation_key", Run: &Run{LedgerFailed: []string{"IDEM-CONCURRENT FAIL: ran the effect 2 times"}}},
			reports.Unsafe, "IDEM-CONCURRENT FAIL: ran the effect 2 times", "reconcile (lookup) before any retry"},
		{"idempotent hint confirmed", Tool{Idempotent: &yes}, Facts{Run: confirmed}, reports.Conditional, "confirmed", "retry with the same arguments"},
		{"idempotent hint caught lying", Tool{Idempotent: &yes}, Facts{Run: &Run{Annotation: "IDEM-ANNOTATION: ... ran again", AnnotationLied: true}},
			reports.Unsafe, "ran again", "reconcile first"},
		{"idempotent hint the run did not check", Tool{Idempotent: &yes}, Facts{Run: &Run{}}, reports.Unsafe, "no run confirmed it", "reconcile first"},
		{"read-only beats a confirmed hint", Tool{ReadOnly: &yes, Idempotent: &yes}, Facts{Run: confirmed}, reports.Safe, "idempotentHint: true", "retry with a new JSON-RPC id"},
		{"bare tool in a run", Tool{}, Facts{Run: &Run{}}, reports.Unsafe, "readOnlyHint absent", "do not retry blindly"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			class, ev := Classify(tc.tool, tc.f)
			if class != tc.want {
				t.Errorf("class %s %v, want %s", class, ev, tc.want)
			}
			if !strings.Contains(strings.Join(ev, "; "), tc.evidence) {
				t.Errorf("evidence %v lacks %q", ev, tc.evidence)
			}
			if len(ev) == 0 || !strings.Contains(ev[len(ev)-1], tc.last) {
				t.Errorf("deciding line of %v lacks %q", ev, tc.last)
			}
		})
	}
}

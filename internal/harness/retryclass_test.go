package harness

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/reports"
)

func TestRetryClasses(t *testing.T) {
	// The reference's stdio target, as far as the table reads it: its
	// mutation and lookup roles.
	m := &Manifest{Name: "mcp-conform-reference", Transport: "stdio", Roles: map[string]Role{
		"mutation": {Tool: "create_support_ticket", Key: "operation_key",
			Probe: map[string]any{"tool": "ticket_stats", "field": "executions"}},
		"lookup": {Tool: "lookup_ticket"},
	}}
	cfg := &Config{Targets: []*Manifest{m}}
	tool := func(name string, ann map[string]any) map[string]any {
		return map[string]any{"name": name, "annotations": ann}
	}
	tools := map[string][]map[string]any{classKey(m): {
		tool("lookup_ticket", map[string]any{"readOnlyHint": true}),
		tool("create_support_ticket", map[string]any{"idempotentHint": true}),
		tool("append_note", map[string]any{"idempotentHint": true}),
		tool("set_flag", map[string]any{"idempotentHint": true}),
		tool("bare", nil),
	}}
	ev := newRunEvidence()
	k := classKey(m)
	ev.idem[k] = map[string][]string{"create_support_ticket": {"IDEM-LOST-RESPONSE: ..."}}
	ev.annotations[k] = map[string]string{"append_note": "IDEM-ANNOTATION: ... ran again", "set_flag": "IDEM-ANNOTATION: confirmed"}
	ev.lied[k] = map[string]bool{"append_note": true}

	for _, tc := range []struct {
		name    string
		res     []reports.Check
		want    map[string]reports.RetryClass
		because string
	}{
		{name: "ledger checks pass", want: map[string]reports.RetryClass{
			"lookup_ticket": reports.Safe, "create_support_ticket": reports.Conditional,
			"append_note": reports.Unsafe, "set_flag": reports.Conditional, "bare": reports.Unsafe}},
		{name: "a ledger check failed",
			res:  []reports.Check{{ID: "IDEM-CONCURRENT", Transport: "stdio", Status: reports.Fail, Reason: "ran the effect 2 times"}},
			want: map[string]reports.RetryClass{"create_support_ticket": reports.Unsafe}, because: "IDEM-CONCURRENT FAIL: ran the effect 2 times"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := retryClasses(cfg, tools, ev, tc.res)
			if len(rows) != 5 {
				t.Fatalf("%d rows, want one per tool: %+v", len(rows), rows)
			}
			for _, r := range rows {
				if w, ok := tc.want[r.Tool]; ok && r.Class != w {
					t.Errorf("%s: %s (%v), want %s", r.Tool, r.Class, r.Evidence, w)
				}
				if len(r.Evidence) == 0 {
					t.Errorf("%s: no evidence", r.Tool)
				}
				if r.Tool == "create_support_ticket" && r.Key != "operation_key" {
					t.Errorf("key %q", r.Key)
				}
				if tc.because != "" && r.Tool == "create_support_ticket" &&
					!slices.ContainsFunc(r.Evidence, func(e string) bool { return strings.Contains(e, tc.because) }) {
					t.Errorf("evidence %v lacks %q", r.Evidence, tc.because)
				}
			}
		})
	}
}

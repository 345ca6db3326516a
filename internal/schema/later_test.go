package schema

import (
	"strings"
	"testing"
)

func TestLaterVersionMessage(t *testing.T) {
	v, err := For("2025-06-18")
	if err != nil {
		t.Fatal(err)
	}
	raw := []byte(`{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"t","status":"working","createdAt":"2025-01-01T00:00:00Z","lastUpdatedAt":"2025-01-01T00:00:00Z","ttl":null}}`)
	o := v.ValidateServerMessage(1, raw, nil)
	found := false
	for _, vi := range o.Violations {
		if vi.Clause == "lc#6" && strings.Contains(vi.Complaint, "2025-11-25") {
			found = true
		}
	}
	if !found {
		t.Errorf("a 2025-11-25 notification in 2025-06-18: violations %+v, want lc#6", o.Violations)
	}
	// An extension's notification, defined by no version, is not judged.
	o = v.ValidateServerMessage(2, []byte(`{"jsonrpc":"2.0","method":"notifications/x-example","params":{}}`), nil)
	for _, vi := range o.Violations {
		if vi.Clause == "lc#6" {
			t.Errorf("an unknown notification got %+v", vi)
		}
	}
	v2, _ := For("2025-11-25")
	if o := v2.ValidateServerMessage(3, raw, nil); len(o.Violations) > 0 {
		for _, vi := range o.Violations {
			if vi.Clause == "lc#6" {
				t.Errorf("its own version's notification got %+v", vi)
			}
		}
	}
}

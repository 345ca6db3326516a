package harness

import (
	"slices"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/mcp-conform/mcp-conform/reports"
)

// TestFocusSelects: a --focus regexp is matched against the check id (and
// the title, and "AREA ID TITLE" as before), so an anchored id names one
// check, and the label filter handed to Ginkgo runs exactly the checks
// selected (Ginkgo's own focus would match its longer spec text).
func TestFocusSelects(t *testing.T) {
	saved := catalog
	t.Cleanup(func() { catalog = saved })
	catalog = []*Check{
		{ID: "SSE-HEADERS", Title: "event streams carry X-Accel-Buffering: no", Transports: []string{"http"}},
		{ID: "SSE-HEARTBEAT", Title: "a silent event stream carries comment keep-alives", Transports: []string{"http"}},
		{ID: "PROGRESS-MONOTONIC", Title: "progress increases", Transports: []string{"stdio", "http"}},
		{ID: "PROGRESS-MONOTONIC-HTTP", Title: "progress increases over HTTP", Transports: []string{"http"}},
		{ID: "CANCEL-STDIO-SUPPRESS", Title: "no response after cancellation", Transports: []string{"stdio"}},
	}
	for _, tc := range []struct {
		focus []string
		label string
		want  []string
	}{
		{[]string{"^SSE-HEARTBEAT$"}, "", []string{"SSE-HEARTBEAT"}},
		{[]string{"^PROGRESS-MONOTONIC$"}, "", []string{"PROGRESS-MONOTONIC"}},
		{[]string{"^SSE-HEARTBEAT$", "^CANCEL-STDIO-SUPPRESS$"}, "", []string{"SSE-HEARTBEAT", "CANCEL-STDIO-SUPPRESS"}},
		// Unanchored uses keep working: a part of an id, an area, a title word.
		{[]string{"PROGRESS"}, "", []string{"PROGRESS-MONOTONIC", "PROGRESS-MONOTONIC-HTTP"}},
		{[]string{"SSE"}, "", []string{"SSE-HEADERS", "SSE-HEARTBEAT"}},
		{[]string{"keep-alives"}, "", []string{"SSE-HEARTBEAT"}},
		{[]string{"^a silent event"}, "", []string{"SSE-HEARTBEAT"}},
		{[]string{"SSE HEADERS"}, "", nil},
		{[]string{"^PROGRESS"}, "transport:stdio", []string{"PROGRESS-MONOTONIC"}},
		{[]string{"^NOPE$"}, "", nil},
	} {
		t.Run(strings.Join(tc.focus, ","), func(t *testing.T) {
			opts := RunOptions{Focus: tc.focus, LabelFilter: tc.label}
			sel, err := Selected(opts)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range sel {
				got = append(got, c.ID)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("Selected = %v, want %v", got, tc.want)
			}
			// The filter Ginkgo gets keeps exactly these checks, on the
			// transports the user's label filter keeps.
			f, err := types.ParseLabelFilter(focusFilter(tc.label, sel))
			if err != nil {
				t.Fatalf("focusFilter %q: %v", focusFilter(tc.label, sel), err)
			}
			for _, c := range catalog {
				for _, tr := range c.Transports {
					want := slices.Contains(tc.want, c.ID) && (tc.label == "" || "transport:"+tr == tc.label)
					if got := f(c.Labels(tr)); got != want {
						t.Errorf("filter %q on %s/%s = %v, want %v", focusFilter(tc.label, sel), c.ID, tr, got, want)
					}
				}
			}
		})
	}
}

// TestSchemaGaps: a transport whose checks left nothing to validate still
// gets its SCHEMA-VALID result — ERROR when no check there reached a verdict
// and one ERRORed (the target never started), SKIP otherwise — and one that
// has a result keeps only it.
func TestSchemaGaps(t *testing.T) {
	saved := schemaCheck
	t.Cleanup(func() { schemaCheck = saved })
	rule := Rule{Level: reports.Must, Spec: "specification/VERSION/basic/index.mdx", Clause: "c"}
	schemaCheck = &Check{ID: "SCHEMA-VALID", Passive: true, Transports: []string{"stdio", "http"},
		Rules: map[string]Rule{"2025-11-25": rule}}
	res := []reports.Check{
		{ID: "A", Transport: "stdio", ProtocolVersion: "2025-11-25", Status: reports.Error},
		{ID: "B", Transport: "stdio", ProtocolVersion: "2025-11-25", Status: reports.Error},
		{ID: "C", Transport: "stdio", ProtocolVersion: "2025-11-25", Status: reports.Skip},
		{ID: "A", Transport: "http", ProtocolVersion: "2025-11-25", Status: reports.Pass},
		{ID: "B", Transport: "http", ProtocolVersion: "2025-11-25", Status: reports.Error},
	}
	got := schemaGaps(res)
	if len(got) != 2 || got[0].Transport != "stdio" || got[0].Status != reports.Error || got[1].Transport != "http" || got[1].Status != reports.Skip {
		t.Fatalf("schemaGaps = %+v, want stdio ERROR then http SKIP", got)
	}
	if got[0].Reason == "" || got[1].Reason == "" || got[0].Level != reports.Must {
		t.Errorf("gap results lack a reason or the rule's level: %+v", got)
	}
	withResult := append(res, reports.Check{ID: "SCHEMA-VALID", Transport: "stdio", Status: reports.Pass})
	if got := schemaGaps(withResult); len(got) != 1 || got[0].Transport != "http" {
		t.Errorf("with a stdio result: %+v, want the http gap only", got)
	}
}

// TestSchemaCutShort: after an interrupted run, SCHEMA-VALID's PASS (it saw
// only the checks that ran) is an ERROR that says so; a FAIL stays.
func TestSchemaCutShort(t *testing.T) {
	saved := schemaCheck
	t.Cleanup(func() { schemaCheck = saved })
	schemaCheck = &Check{ID: "SCHEMA-VALID", Passive: true}
	res := []reports.Check{
		{ID: "A", Transport: "stdio", Status: reports.Error, Reason: "interrupted before the check could finish"},
		{ID: "SCHEMA-VALID", Transport: "stdio", Status: reports.Pass, Reason: "3 server messages of 1 check runs valid"},
		{ID: "SCHEMA-VALID", Transport: "http", Status: reports.Fail, Reason: "1 of 3 server messages break the schema"},
	}
	schemaCutShort(res)
	if res[1].Status != reports.Error || !strings.HasPrefix(res[1].Reason, "not run") {
		t.Errorf("PASS after an interrupt: %s %q, want ERROR not run ...", res[1].Status, res[1].Reason)
	}
	if res[2].Status != reports.Fail {
		t.Errorf("FAIL after an interrupt became %s", res[2].Status)
	}
	whole := []reports.Check{{ID: "A", Status: reports.Pass}, {ID: "SCHEMA-VALID", Status: reports.Pass}}
	schemaCutShort(whole)
	if whole[1].Status != reports.Pass {
		t.Errorf("a whole run's PASS became %s", whole[1].Status)
	}
}

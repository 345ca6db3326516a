package harness

import (
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/reports"
)

// TestRememberRecall: a remembered FAIL or SKIP ends a later check with the
// same status, naming what was seen; nothing remembered, or another
// version, lets the check run; the first verdict remembered is kept.
func TestRememberRecall(t *testing.T) {
	memory = map[rememberKey]remembered{}
	t.Cleanup(func() { memory = map[rememberKey]remembered{} })
	v1 := clients.Session{Version: "2025-11-25"}
	v2 := clients.Session{Version: "2025-06-18"}
	for _, tc := range []struct {
		name   string
		sess   clients.Session
		body   func(h *H)
		status reports.Status
		reason string
	}{
		{"nothing remembered", v1, func(h *H) { h.Recall("refused") }, reports.Pass, ""},
		{"remember", v1, func(h *H) {
			h.Remember("refused", reports.Fail, "error -32601")
			h.Remember("refused", reports.Skip, "a second verdict is not kept")
			h.FailServer("error -32601")
		}, reports.Fail, "error -32601"},
		{"recalled", v1, func(h *H) { h.Recall("refused"); h.Failf("asked again") }, reports.Fail, "refused in  of this run (not asked again): error -32601"},
		{"another version", v2, func(h *H) { h.Recall("refused") }, reports.Pass, ""},
		{"skip remembered", v2, func(h *H) { h.Remember("refused", reports.Skip, "no tools") }, reports.Pass, ""},
		{"skip recalled", v2, func(h *H) { h.Recall("refused") }, reports.Skip, "no tools"},
		{"only FAIL or SKIP", v2, func(h *H) { h.Remember("other", reports.Warn, "w") }, reports.Error, "only FAIL and SKIP"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, reason := Judge(tc.sess, tc.body)
			if status != tc.status || !strings.Contains(reason, tc.reason) {
				t.Errorf("got %s %q, want %s containing %q", status, reason, tc.status, tc.reason)
			}
		})
	}
}

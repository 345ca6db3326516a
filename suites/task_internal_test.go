package suites

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/internal/harness"
	"github.com/mcp-conform/mcp-conform/reports"
)

// TestTaskCapable: a server that does not declare tasks (2025-11-25:
// tasks.requests.tools.call; 2026-07-28: the tasks extension) makes the
// TASK checks SKIP with the reason.
func TestTaskCapable(t *testing.T) {
	for _, tc := range []struct {
		name string
		era  clients.Era
		caps string
		skip string
	}{
		{"legacy with tasks", clients.EraLegacy, `{"tasks":{"cancel":{},"requests":{"tools":{"call":{}}}}}`, ""},
		{"legacy without tasks", clients.EraLegacy, `{"tools":{}}`, "tasks.requests.tools.call"},
		{"legacy tasks without tools/call", clients.EraLegacy, `{"tasks":{"list":{}}}`, "tasks.requests.tools.call"},
		{"modern with the extension", clients.EraModern, `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`, ""},
		{"modern without", clients.EraModern, `{"tools":{}}`, "io.modelcontextprotocol/tasks"},
		{"no capabilities", clients.EraModern, ``, "io.modelcontextprotocol/tasks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, reason := harness.Judge(clients.Session{Era: tc.era, Capabilities: json.RawMessage(tc.caps)}, taskCapable)
			switch {
			case tc.skip == "" && status != reports.Pass:
				t.Errorf("got %s %q, want to run", status, reason)
			case tc.skip != "" && (status != reports.Skip || !strings.Contains(reason, tc.skip)):
				t.Errorf("got %s %q, want SKIP naming %s", status, reason, tc.skip)
			}
		})
	}
}

func TestParseTask(t *testing.T) {
	legacy := `{"taskId":"a","status":"working","ttl":null,"pollInterval":1000,"createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:40:00Z"}`
	s, err := parseTask(json.RawMessage(legacy), false)
	if err != nil || s.ID != "a" || s.Poll != time.Second || string(s.TTL) != "null" || !validTTL(s.TTL) || s.terminal() {
		t.Errorf("legacy: %+v %v", s, err)
	}
	modern := `{"taskId":"b","status":"cancelled","ttlMs":60000,"pollIntervalMs":50,"createdAt":"x","lastUpdatedAt":"y"}`
	s, err = parseTask(json.RawMessage(modern), true)
	if err != nil || s.Poll != 50*time.Millisecond || string(s.TTL) != "60000" || !s.terminal() || isTimestamp(s.CreatedAt) {
		t.Errorf("modern: %+v %v", s, err)
	}
	if s, _ := parseTask(json.RawMessage(modern), false); s.TTL != nil || s.Poll != 0 {
		t.Errorf("modern fields read as legacy: %+v", s)
	}
	if _, err := parseTask(json.RawMessage(`{"status":"working"}`), false); err == nil {
		t.Error("a task without taskId parsed")
	}
	if validTTL(json.RawMessage(`"60000"`)) || validTTL(json.RawMessage(`-1`)) || validTTL(nil) {
		t.Error("invalid ttl accepted")
	}
	if pollGap(taskState{}) != minTaskPoll || pollGap(taskState{Poll: time.Hour}) != maxTaskPoll {
		t.Error("poll gap not bounded")
	}
}

func TestIsEmptyAck(t *testing.T) {
	for raw, want := range map[string]bool{
		`{}`:                                   true,
		`{"resultType":"complete"}`:            true,
		`{"resultType":"complete","_meta":{}}`: true,
		`{"resultType":"task"}`:                false,
		`{"taskId":"a","status":"cancelled"}`:  false,
		`[]`:                                   false,
	} {
		if got, why := isEmptyAck(json.RawMessage(raw)); got != want {
			t.Errorf("isEmptyAck(%s) = %v (%s), want %v", raw, got, why, want)
		}
	}
}

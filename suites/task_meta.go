package suites

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/reports"
)

// Checks of what a 2025-11-25 task's status answers carry (registered with
// the other TASK checks in task.go's registerTask).

var checkTaskStatusNoRelatedMeta = register(&Check{
	ID:    "TASK-STATUS-NO-RELATED-META",
	Title: "tasks/get, tasks/cancel and tasks/list results carry no related-task _meta: the taskId is in the result itself",
	How: "Creates a task with the task role, then sends tasks/get for it, (when tasks.cancel is declared) tasks/cancel for it " +
		"and (when tasks.list is declared) tasks/list: no result's _meta may carry io.modelcontextprotocol/related-task.",
	Rules: map[string]Rule{
		v20251125: {Level: reports.Should, Spec: tasksLegacy,
			Clause: "Similarly, for the tasks/get, tasks/list, and tasks/cancel operations, receivers SHOULD NOT include io.modelcontextprotocol/related-task metadata in the result messages, as the taskId is already present in the response structure."},
	},
	Transports: []string{viaStdio, viaHTTP},
	Roles:      []string{"task"},
	Clauses:    []string{"task#23"},
})

// hasRelatedMeta reports whether a result's _meta carries the related-task
// key.
func hasRelatedMeta(result json.RawMessage) bool {
	var r struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(result, &r) != nil {
		return false
	}
	_, ok := r.Meta[relatedTaskMeta]
	return ok
}

func taskStatusNoRelatedMeta(h *H) {
	t := tasks(h)
	caps := declaredTaskCaps(h)
	a, _ := t.create()
	var seen, bad []string
	judge := func(method string, m clients.Message) {
		if hasRelatedMeta(m.Env.Result) {
			bad = append(bad, fmt.Sprintf("%s: %s", method, rawText(m)))
			return
		}
		seen = append(seen, method)
	}
	_, gm := t.get(a.ID, "right after it was created")
	judge("tasks/get", gm)
	if caps.list {
		m := t.exchange("tasks/list", map[string]any{}, h.Cfg().OpTimeout)
		if m.Env.Kind == jsonrpc.Response {
			judge("tasks/list", m)
		}
	}
	if caps.cancel {
		m := t.cancel(a.ID)
		if m.Env.Kind == jsonrpc.Response {
			judge("tasks/cancel", m)
		}
	}
	if len(bad) > 0 {
		h.Failf("result(s) carry _meta %q although the taskId is in the result itself: %s", relatedTaskMeta, strings.Join(bad, "; "))
	}
	h.Notef("no related-task _meta in the results of %s", strings.Join(seen, ", "))
}

package suites

import (
	"encoding/json"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/reports"
)

// A task-augmented request's first answer (registered with the other TASK
// checks in task.go's registerTask).

var checkTaskCreatePrompt = register(&Check{
	ID:    "TASK-CREATE-PROMPT",
	Title: "a task-augmented call the server accepts is answered with a CreateTaskResult while its task still works",
	How: "Calls the task role with params.task. An accepted call must be answered with a CreateTaskResult (a task object): " +
		"a CallToolResult, or any result without a task, breaks the MUST (FAIL); an error means the call was not accepted " +
		"(ERROR: the role does not create tasks). Then, as soon as that answer is in, tasks/get for the task: it must not be " +
		"terminal yet. The trigger is the answer itself, not a clock: a task the first poll after its CreateTaskResult already " +
		"finds completed or failed was answered only once its work had ended, not as soon as possible (WARN). The task role's " +
		"work is declared to outlast a round trip (the other TASK checks cancel it while it works).",
	Rules: map[string]Rule{
		v20251125: {Level: reports.Must, Spec: tasksLegacy,
			Clause: "Receivers that accept a task-augmented request MUST return a CreateTaskResult as the response. This result SHOULD be returned as soon as possible after accepting the task."},
	},
	Transports: []string{viaStdio, viaHTTP},
	Roles:      []string{"task"},
	Clauses:    []string{"task#16", "task#17"},
})

func taskCreatePrompt(h *H) {
	t := tasks(h)
	r := h.Role("task")
	params := roleParams(r, nil)
	params["task"] = map[string]any{"ttl": 60000}
	m := t.exchange("tools/call", params, h.Cfg().CallTimeout)
	if m.Env.Kind != jsonrpc.Response {
		h.Errorf("the task role %s did not accept the task-augmented call: %s", r.Tool, rawText(m))
	}
	var ct struct {
		Task json.RawMessage `json:"task"`
	}
	if json.Unmarshal(m.Env.Result, &ct) != nil || len(ct.Task) == 0 || string(ct.Task) == "null" {
		h.Failf("the task-augmented tools/call of %s was accepted (a result, not an error) but answered without a CreateTaskResult (no task object): %s", r.Tool, rawText(m))
	}
	s, err := parseTask(ct.Task, false)
	if err != nil {
		h.Failf("the CreateTaskResult's task is not a task (%v): %s", err, rawText(m))
	}
	g, gm := t.get(s.ID, "right after its CreateTaskResult")
	if g.terminal() {
		h.Warnf("tasks/get right after the CreateTaskResult (which said %s) already found task %s %s: the CreateTaskResult came only once the task's work had ended, not as soon as possible after accepting it: %s",
			s.Status, s.ID, g.Status, rawText(gm))
	}
	h.Notef("a CreateTaskResult (status %s), and tasks/get right after it found the task still %s", s.Status, g.Status)
}

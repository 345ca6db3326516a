package suites

import (
	"encoding/json"
	"strings"

	"github.com/mcp-conform/mcp-conform/reports"
)

// A failed task's diagnostics in tasks/get (registered with the other
// TASK checks in task.go's registerTask).

var checkTaskFailedStatusMessage = register(&Check{
	ID:    "TASK-FAILED-STATUS-MESSAGE",
	Title: "tasks/get of a failed task carries a statusMessage with diagnostic information",
	How: "2025-11-25, when the task role declares failArguments (the manifest's contract for making a task fail): creates " +
		"a task with them and polls it with tasks/get at its pollInterval until it is terminal, and one poll more. It must end " +
		"failed (else ERROR: the declared contract does not hold), and every tasks/get answer that reports it failed must carry " +
		"a non-empty statusMessage string; one without is WARN (SHOULD). The failure is provoked only through the declared " +
		"contract, so the level comes from it. Without failArguments: SKIP.",
	Rules: map[string]Rule{
		v20251125: {Level: reports.Should, Spec: tasksLegacy,
			Clause: "When the underlying request does not complete successfully, the task moves to the failed status. [...] The tasks/get response SHOULD include a statusMessage field with diagnostic information about the failure."},
	},
	Transports: []string{viaStdio, viaHTTP},
	Roles:      []string{"task"},
	Clauses:    []string{"task#32"},
})

func taskFailedStatusMessage(h *H) {
	fail := h.Role("task").FailArguments
	if fail == nil {
		h.Skip("the task role declares no failArguments: a failed task cannot be provoked")
	}
	t := tasks(h)
	a, _ := t.createOver("", fail)
	obs := t.watch([]taskState{a}, 1, "while waiting for it to fail")
	final := obs[0][len(obs[0])-1]
	if final.status != "failed" {
		h.Errorf("the task role's declared failArguments %s did not make the task fail: it ended %s (%s); the manifest's contract does not hold, so a failed task's tasks/get is not judged",
			jsonText(fail), final.status, final.raw)
	}
	var messages []string
	for _, o := range obs[0] {
		if o.status != "failed" {
			continue
		}
		var res struct {
			StatusMessage *json.RawMessage `json:"statusMessage"`
		}
		_ = json.Unmarshal(extractResult(o.raw), &res)
		var msg string
		if res.StatusMessage == nil || json.Unmarshal(*res.StatusMessage, &msg) != nil || strings.TrimSpace(msg) == "" {
			h.Failf("tasks/get reported the task (created with the declared failArguments %s) failed without a statusMessage giving diagnostic information about the failure: %s",
				jsonText(fail), o.raw)
		}
		messages = append(messages, msg)
	}
	h.Notef("the task (declared failArguments) went %s; %d tasks/get answer(s) reported it failed, each with a statusMessage: %q",
		strings.Join(statuses(obs[0]), " → "), len(messages), messages[0])
}

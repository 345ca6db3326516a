package suites

import (
	"fmt"
	"strings"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/reports"
)

// Whether a cancelled task's work stops (registered with the other TASK
// checks in task.go's registerTask).

var checkTaskCancelStops = register(&Check{
	ID:    "TASK-CANCEL-STOPS",
	Title: "a cancelled task's work stops: the task role's probe sees at most the step in flight once an uncancelled control task has finished",
	How: "2025-11-25, when the task role declares a probe (probe: {tool, tag}, the contract of the slow role's probe: the tool " +
		"reports started, stepsRun, finished for the work run with the tag): creates a task with the role's arguments and a fresh " +
		"tag, sends tasks/cancel for it at once, asks the probe (the state at the cancellation's reply), then creates an uncancelled " +
		"control task with the same work and polls it to a terminal status (the cancelled work, started first, has by then had all " +
		"the time it needs to finish), and asks the probe again. The work may have finished the step it was in when the cancellation " +
		"came and no more: a further step, or work that ran to its result, is WARN (SHOULD attempt to stop the task execution). The " +
		"work is observed only through the declared probe, so the level comes from it. Without a probe, or tasks.cancel: SKIP; a " +
		"tasks/cancel that is refused is TASK-CANCEL-TERMINAL's to judge (SKIP here).",
	Rules: map[string]Rule{
		v20251125: {Level: reports.Should, Spec: tasksLegacy,
			Clause: "Upon receiving a valid cancellation request, receivers SHOULD attempt to stop the task execution"},
	},
	Transports: []string{viaStdio, viaHTTP},
	Roles:      []string{"task"},
	Clauses:    []string{"task#28"},
})

// taskProbe asks the task role's probe tool about tag over t's connection;
// a probe that cannot be asked or answers nothing usable is the harness's
// ERROR (the declared contract does not hold).
func (t *tasker) taskProbe(tool, tagArg, tag string) probeState {
	m := t.exchange("tools/call", map[string]any{"name": tool, "arguments": probeArgs(tagArg, tag)}, t.h.Cfg().OpTimeout)
	st, err := readProbe(m, tagArg, tag)
	if err != nil {
		t.h.Errorf("the task role's probe tool %s: %v", tool, err)
	}
	return st
}

func taskCancelStops(h *H) {
	p := h.Role("task").Probe
	tool, _ := p["tool"].(string)
	tagArg, _ := p["tag"].(string)
	if tool == "" || tagArg == "" {
		h.Skip("the task role declares no probe (probe: {tool, tag}): whether a cancelled task's work stopped is not observable")
	}
	t := tasks(h)
	if !declaredTaskCaps(h).cancel {
		h.Skip("the server does not declare tasks.cancel")
	}
	tag := unique("task-stop")
	a, _ := t.createOver("", map[string]any{tagArg: tag})
	if m := t.cancel(a.ID); m.Env.Kind != jsonrpc.Response {
		h.Skip(fmt.Sprintf("tasks/cancel of the task %s was refused (TASK-CANCEL-TERMINAL judges that): %s", a.ID, rawText(m)))
	}
	before := t.taskProbe(tool, tagArg, tag)
	b, _ := t.create()
	obs := t.watch([]taskState{b}, 0, "(the uncancelled control task)")
	after := t.taskProbe(tool, tagArg, tag)
	control := strings.Join(statuses(obs[0]), " → ")
	h.Notef("probe of the cancelled task's work at the cancellation's reply: %s; once the control task went %s: %s", before, control, after)
	if after.Finished {
		h.Failf("the cancelled task's work ran on to its result after tasks/cancel was answered (probe at the reply: %s; once the uncancelled control task had finished: %s): receivers should attempt to stop the task execution",
			before, after)
	}
	if after.StepsRun > before.StepsRun+1 {
		h.Failf("the cancelled task's work went on after tasks/cancel was answered: %d step(s) at the reply, %d once the uncancelled control task had finished (more than the one in flight): receivers should attempt to stop the task execution",
			before.StepsRun, after.StepsRun)
	}
}

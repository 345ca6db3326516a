package suites

import (
	"fmt"
	"strings"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/reports"
)

// The progress of a 2025-11-25 task (registered with the other TASK checks
// in task.go's registerTask; TASK-PROGRESS-STOPS is in task.go).

var checkTaskProgressToken = register(&Check{
	ID:    "TASK-PROGRESS-TOKEN",
	Title: "a task's progress notifications carry the progressToken of its task-augmented request, after the CreateTaskResult too",
	How: "Creates a task with the task role, its tools/call carrying a progress token, and polls it with tasks/get to a " +
		"terminal status and two polls more, reading every stream (over Streamable HTTP the standalone GET stream is held " +
		"open: once the CreateTaskResult has ended the POST stream, the task's progress can only come there). Nothing else on " +
		"the connection carries a progress token, so every notifications/progress is the task's: each must carry the request's " +
		"token. A task that sends no progress after its CreateTaskResult makes the check SKIP (progress is optional).",
	Rules: map[string]Rule{
		v20251125: {Level: reports.Must, Spec: "specification/2025-11-25/basic/utilities/progress.mdx",
			Clause: "For task-augmented requests, the progressToken provided in the original request MUST continue to be used for progress notifications throughout the task's lifetime, even after the CreateTaskResult has been returned. [...] Progress notifications for tasks MUST use the same progressToken that was provided in the initial task-augmented request"},
	},
	Transports: []string{viaStdio, viaHTTP},
	Roles:      []string{"task"},
	Clauses:    []string{"prg#3"},
})

func taskProgressToken(h *H) {
	c, t := taskProgressConn(h)
	token := jsonrpc.StringID("task-progress-token")
	a, cm := t.createWith(token)
	obs := t.watch([]taskState{a}, 2, "while watching its progress")
	var own, after int
	var other []string
	for _, m := range progressSince(c, 0) {
		if m.Env.ProgressToken != token {
			other = append(other, rawText(m))
			continue
		}
		own++
		if m.Seq > cm.Seq {
			after++
		}
	}
	if len(other) > 0 {
		h.Failf("%d progress notification(s) on the connection carry another token than the progressToken %s of the task's request (%d carry it): %s",
			len(other), token, own, strings.Join(other, "; "))
	}
	final := obs[0][len(obs[0])-1].status
	if after == 0 {
		h.Skip(fmt.Sprintf("the task sent no progress after its CreateTaskResult before it was %s (%d before it; progress is optional)", final, own))
	}
	h.Notef("%d progress notification(s) for the task, %d after its CreateTaskResult, all with its request's token %s; the task ended %s",
		own, after, token, final)
}

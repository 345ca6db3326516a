package suites

import (
	"encoding/json"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// taskResultFailed is TASK-RESULT's second half, on a target whose task
// role declares failArguments: a task created with them must end failed,
// and its tasks/result must return the final result of the underlying
// tools/call — a JSON-RPC error, or a CallToolResult (content, no Task
// object) with the related-task _meta — and the same when asked again
// (2025-11-25 tasks.mdx §Result Retrieval: "whether that is a successful
// result or a JSON-RPC error"). The failure is provoked only through the
// manifest's declared contract; a task that does not fail with it is the
// manifest's ERROR, not the server's FAIL. It returns what to add to the
// PASS reason ("" without failArguments).
func taskResultFailed(h *H, t *tasker) string {
	fail := h.Role("task").FailArguments
	if fail == nil {
		return ""
	}
	a, _ := t.createOver("", fail)
	first := t.exchange("tasks/result", map[string]any{"taskId": a.ID}, h.Cfg().CallTimeout)
	g, gm := t.get(a.ID, "right after tasks/result answered")
	if !g.terminal() {
		h.Failf("tasks/result for the failing task %s answered while the task was still %s (tasks/get right after it: %s): it must block until the task is terminal; it answered %s",
			a.ID, g.Status, rawText(gm), rawText(first))
	}
	if g.Status != "failed" {
		h.Errorf("the task role's declared failArguments %s did not make the task fail: it ended %s (%s); the manifest's contract does not hold, so a failed task's result is not judged",
			jsonText(fail), g.Status, rawText(gm))
	}
	if first.Env.Kind == jsonrpc.ErrorReply {
		again := t.exchange("tasks/result", map[string]any{"taskId": a.ID}, h.Cfg().OpTimeout)
		if again.Env.Kind != jsonrpc.ErrorReply || again.Env.Error == nil || first.Env.Error == nil || again.Env.Error.Code != first.Env.Error.Code {
			h.Failf("a second tasks/result for the failed task answered %s; the first answered %s: a terminal task's tasks/result must return its final result",
				rawText(again), rawText(first))
		}
		return "; the failed task (declared failArguments) answered the JSON-RPC error " + rawText(first) + ", and again"
	}
	judgeFinalResult(h, t, a.ID, first, "failed")
	return "; the failed task (declared failArguments) returned a CallToolResult with the related-task _meta, and the same again"
}

// jsonText is v as JSON text, for a reason.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return string(b)
}

// judgeFinalResult holds first, tasks/result's answer for task id that
// ended (completed or failed) with a result, to the final result of the
// underlying tools/call: a CallToolResult (a content array, no Task
// member) with the related-task _meta naming the task, and the same when
// asked again. It returns the number of content items.
func judgeFinalResult(h *H, t *tasker, id string, first clients.Message, ended string) int {
	if first.Env.Kind != jsonrpc.Response {
		h.Failf("the task %s, but tasks/result answered %s: it must return the final result of the tools/call", ended, rawText(first))
	}
	var res map[string]json.RawMessage
	if json.Unmarshal(first.Env.Result, &res) != nil {
		h.Failf("the %s task's tasks/result is not an object: %s", ended, rawText(first))
	}
	var content []json.RawMessage
	if res["content"] == nil || json.Unmarshal(res["content"], &content) != nil {
		h.Failf("the task %s, but tasks/result's result has no content array, so it is not what the tools/call would have returned (a CallToolResult, or the JSON-RPC error it raised: a Task's status is not its result): %s",
			ended, rawText(first))
	}
	if _, ok := res["task"]; ok {
		h.Failf("the %s task's tasks/result carries a task member (a CreateTaskResult), not what the tools/call would have returned: %s", ended, rawText(first))
	}
	if resultRelatedTask(first) != id {
		h.Failf("the %s task's tasks/result must carry _meta %q with the taskId %q: %s", ended, relatedTaskMeta, id, rawText(first))
	}
	again := t.exchange("tasks/result", map[string]any{"taskId": id}, h.Cfg().OpTimeout)
	if again.Env.Kind != jsonrpc.Response || !sameJSON(again.Env.Result, first.Env.Result) {
		h.Failf("a second tasks/result for the %s task answered %s; the first answered %s: a terminal task's tasks/result must return its final result",
			ended, rawText(again), rawText(first))
	}
	return len(content)
}

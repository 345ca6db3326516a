package suites

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/protocol"
	"github.com/mcp-conform/mcp-conform/reports"
)

// The task contract of 2025-11-25 beyond cancellation: the errors for an
// unknown task and what tasks/result returns (registered with the other
// TASK checks in task.go's registerTask).

// relatedTaskMeta is the _meta key naming the task a message belongs to
// (2025-11-25 tasks.mdx §Related Task Metadata).
const relatedTaskMeta = "io.modelcontextprotocol/related-task"

var checkTaskUnknownID = register(&Check{
	ID:    "TASK-UNKNOWN-ID",
	Title: "tasks/get, tasks/result and tasks/cancel of a taskId never issued, and tasks/list with a bogus cursor, get -32602",
	How: "On a negotiated connection of a server that declares tasks, sends tasks/get, tasks/result and (when tasks.cancel " +
		"is declared) tasks/cancel for a random taskId the server never issued, and (when tasks.list is declared) tasks/list " +
		"with a random cursor it never issued: each must be answered with the error -32602 (Invalid params). No task is " +
		"created, so no task role is needed.",
	Rules: map[string]Rule{
		v20251125: {Level: reports.Must, Spec: tasksLegacy,
			Clause: "Receivers MUST return standard JSON-RPC errors for the following protocol error cases: Invalid or nonexistent taskId in tasks/get, tasks/result, or tasks/cancel: -32602 (Invalid params); Invalid or nonexistent cursor in tasks/list: -32602 (Invalid params)"},
	},
	Transports: []string{viaStdio, viaHTTP},
	Clauses:    []string{"task#31"},
})

var checkTaskResult = register(&Check{
	ID:    "TASK-RESULT",
	Title: "tasks/result of a working task blocks until the task is terminal, then returns the call's final result with the related-task _meta, and again the same when asked again",
	How: "Creates a task with the task role and at once sends tasks/result for it (the wait bounded by the call timeout). " +
		"When it answers, tasks/get must report the task terminal (an answer while it is still working did not block). A " +
		"completed task's answer must be a CallToolResult (content, no Task object), as the tools/call itself would have " +
		"returned, whose _meta carries io.modelcontextprotocol/related-task with the task's id. A second tasks/result, now " +
		"for a terminal task, must return the same final result. When the task role declares failArguments (the manifest's " +
		"contract for making a task fail), a task created with them must end failed (else ERROR: the contract does not hold) and " +
		"its tasks/result, blocking as before, must return the final result of the tools/call — a JSON-RPC error, or a " +
		"CallToolResult with the related-task _meta, not the Task's status — and the same when asked again; a failed task is " +
		"judged only through that declared contract.",
	Rules: map[string]Rule{
		v20251125: {Level: reports.Must, Spec: tasksLegacy,
			Clause: "When a receiver receives a tasks/result request for a task in a terminal status (completed, failed, or cancelled), it MUST return the final result of the underlying request, whether that is a successful result or a JSON-RPC error. When a receiver receives a tasks/result request for a task in any other non-terminal status (working or input_required), it MUST block the response until the task reaches a terminal status. For tasks in a terminal status, receivers MUST return from tasks/result exactly what the underlying request would have returned [...] The tasks/result operation MUST include this metadata in its response, as the result structure itself does not contain the task ID."},
	},
	Transports: []string{viaStdio, viaHTTP},
	Roles:      []string{"task"},
	Clauses:    []string{"task#18", "task#19", "task#20", "task#21"},
	Limits: map[string]string{
		"task#20": "a CallToolResult's shape and its repetition only: the tool cannot be called without a task to compare",
		"task#21": "tasks/result's response only",
	},
})

// taskCaps is what a 2025-11-25 server's tasks capability declares.
type taskCaps struct {
	list, cancel bool
}

func declaredTaskCaps(h *H) taskCaps {
	var caps struct {
		Tasks *struct {
			List   json.RawMessage `json:"list"`
			Cancel json.RawMessage `json:"cancel"`
		} `json:"tasks"`
	}
	_ = json.Unmarshal(h.Session().Capabilities, &caps)
	if caps.Tasks == nil {
		return taskCaps{}
	}
	return taskCaps{list: caps.Tasks.List != nil, cancel: caps.Tasks.Cancel != nil}
}

// unissued is a random id or cursor no server has issued.
func unissued(what string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "mcp-conform-unknown-" + what + "-" + hex.EncodeToString(b[:])
}

func taskUnknownID(h *H) {
	t := tasks(h)
	caps := declaredTaskCaps(h)
	id := unissued("task")
	methods := []string{"tasks/get", "tasks/result"}
	if caps.cancel {
		methods = append(methods, "tasks/cancel")
	}
	var seen, bad []string
	for _, method := range methods {
		m := t.exchange(method, map[string]any{"taskId": id}, h.Cfg().OpTimeout)
		if m.Env.Kind != jsonrpc.ErrorReply || m.Env.Error == nil || m.Env.Error.Code != jsonrpc.CodeInvalidParams {
			bad = append(bad, fmt.Sprintf("%s answered %s", method, rawText(m)))
			continue
		}
		seen = append(seen, method)
	}
	if caps.list {
		m := t.exchange("tasks/list", map[string]any{"cursor": unissued("cursor")}, h.Cfg().OpTimeout)
		if m.Env.Kind != jsonrpc.ErrorReply || m.Env.Error == nil || m.Env.Error.Code != jsonrpc.CodeInvalidParams {
			bad = append(bad, fmt.Sprintf("tasks/list with a cursor it never issued answered %s", rawText(m)))
		} else {
			seen = append(seen, "tasks/list (bogus cursor)")
		}
	}
	if len(bad) > 0 {
		h.Failf("for the taskId %q it never issued, %s; want the error -32602 (Invalid params)", id, strings.Join(bad, "; "))
	}
	var not []string
	if !caps.cancel {
		not = append(not, "tasks/cancel (tasks.cancel not declared)")
	}
	if !caps.list {
		not = append(not, "tasks/list (tasks.list not declared)")
	}
	note := ""
	if len(not) > 0 {
		note = "; not sent: " + strings.Join(not, ", ")
	}
	h.Notef("-32602 for %s%s", strings.Join(seen, ", "), note)
}

func taskResult(h *H) {
	t := tasks(h)
	a, _ := t.create()
	if a.terminal() {
		h.Notef("the task was already %s in its CreateTaskResult: the blocking of tasks/result is not judged", a.Status)
	}
	first := t.exchange("tasks/result", map[string]any{"taskId": a.ID}, h.Cfg().CallTimeout)
	g, gm := t.get(a.ID, "right after tasks/result answered")
	if !g.terminal() {
		h.Failf("tasks/result for task %s answered while the task was still %s (tasks/get right after it: %s): it must block until the task is terminal; it answered %s",
			a.ID, g.Status, rawText(gm), rawText(first))
	}
	if g.Status != "completed" {
		// A failed or cancelled task's final result may be a result or an
		// error: what the call would have returned is not known here.
		h.Notef("the task ended %s; tasks/result answered %s (only a completed task's result is judged)", g.Status, rawText(first))
		return
	}
	items := judgeFinalResult(h, t, a.ID, first, "completed") // task_fail.go
	failed := taskResultFailed(h, t)                          // task_fail.go
	h.Notef("tasks/result blocked until the task was %s, returned a CallToolResult (%d content item(s)) with the related-task _meta, and the same again%s",
		g.Status, items, failed)
}

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

var checkTaskRequiredUnaugmented = register(&Check{
	ID:    "TASK-REQUIRED-UNAUGMENTED",
	Title: "a tool whose taskSupport is \"required\", called without a task, gets the error -32601",
	How: "Reads the task role's tool in tools/list: when its execution.taskSupport is \"required\", calls it with the role's " +
		"arguments and no params.task; the answer must be the JSON-RPC error -32601 (Method not found) — a result, even an " +
		"isError one, is not. Another taskSupport, or a tools/list that does not list the tool: SKIP.",
	Rules: map[string]Rule{
		v20251125: {Level: reports.Must, Spec: tasksLegacy,
			Clause: "If execution.taskSupport is \"required\", clients MUST invoke the tool as a task. Servers MUST return a -32601 (Method not found) error if a client does not attempt to do so."},
	},
	Transports: []string{viaStdio, viaHTTP},
	Roles:      []string{"task"},
	Clauses:    []string{"task#3"},
})

// listTools returns every tool of tools/list, following nextCursor (at
// most 20 pages). A tools/list the server refuses leaves the tool's
// taskSupport unknown: SKIP (the TOOLS checks judge tools/list itself).
func (t *tasker) listTools() []map[string]any {
	var all []map[string]any
	params := map[string]any{}
	for range 20 {
		m := t.exchange("tools/list", params, t.h.Cfg().OpTimeout)
		var page struct {
			Tools      []map[string]any `json:"tools"`
			NextCursor string           `json:"nextCursor"`
		}
		if m.Env.Kind != jsonrpc.Response || json.Unmarshal(m.Env.Result, &page) != nil {
			t.h.Skip("tools/list failed, so the task role's tool's taskSupport is unknown: " + rawText(m))
		}
		all = append(all, page.Tools...)
		if page.NextCursor == "" {
			break
		}
		params = map[string]any{"cursor": page.NextCursor}
	}
	return all
}

// taskSupportOf is a tools/list entry's execution.taskSupport ("" when
// absent).
func taskSupportOf(tool map[string]any) string {
	ex, _ := tool["execution"].(map[string]any)
	s, _ := ex["taskSupport"].(string)
	return s
}

func taskRequiredUnaugmented(h *H) {
	t := tasks(h)
	r := h.Role("task")
	tool, ok := findTool(t.listTools(), r.Tool)
	if !ok {
		h.Skip(fmt.Sprintf("the task role's tool %s is not in tools/list: its taskSupport is unknown", r.Tool))
	}
	if s := taskSupportOf(tool); s != "required" {
		h.Skip(fmt.Sprintf("the task role's tool %s declares taskSupport %q, not \"required\"", r.Tool, s))
	}
	args := map[string]any{}
	for k, v := range r.Arguments {
		args[k] = v
	}
	m := t.exchange("tools/call", map[string]any{"name": r.Tool, "arguments": args}, h.Cfg().CallTimeout)
	if m.Env.Kind != jsonrpc.ErrorReply || m.Env.Error == nil || m.Env.Error.Code != jsonrpc.CodeMethodNotFound {
		h.Failf("tools/call of %s (taskSupport \"required\") without params.task answered %s; want the error -32601 (Method not found)", r.Tool, rawText(m))
	}
	h.Notef("tools/call of %s (taskSupport \"required\") without params.task: %s", r.Tool, describeError(m.Env.Error))
}

var checkTaskCreatedWorking = register(&Check{
	ID:    "TASK-CREATED-WORKING",
	Title: "a new task begins in status working, with a string taskId distinct from every other task's",
	How: "Creates two tasks with the task role, one after the other on one connection, and over Streamable HTTP a third " +
		"on a second connection (its own session): each CreateTaskResult must carry a taskId that is a JSON string (a " +
		"number, even one of digits, is not) and the status working, and all the ids must differ. Over stdio the " +
		"connection is the whole server process, so its tasks are all the receiver controls; over HTTP the second " +
		"session's task shows whether ids are unique beyond one session.",
	Rules: map[string]Rule{
		v20251125: {Level: reports.Must, Spec: tasksLegacy,
			Clause: "Task IDs MUST be a string value. Task IDs MUST be unique among all tasks controlled by the receiver. [...] Tasks MUST begin in the working status when created."},
	},
	Transports: []string{viaStdio, viaHTTP},
	Roles:      []string{"task"},
	Clauses:    []string{"task#5", "task#6", "task#7"},
})

func taskCreatedWorking(h *H) {
	t := tasks(h)
	makers := []*tasker{t, t}
	if h.Target().Via() == protocol.TransportHTTP {
		c := h.ConnectHTTP()
		makers = append(makers, httpTasker(h, c, c.W))
	}
	var ids []string
	for i, mk := range makers {
		s, m := mk.create()
		if s.Status != "working" {
			h.Failf("task %d's CreateTaskResult says status %q: a task must begin in working: %s", i+1, s.Status, rawText(m))
		}
		for k, prev := range ids {
			if s.ID == prev {
				h.Failf("tasks %d and %d got the same taskId %q: task ids must be unique among all the server's tasks: %s", k+1, i+1, s.ID, rawText(m))
			}
		}
		ids = append(ids, s.ID)
	}
	h.Notef("%d tasks began working, with string ids, all distinct: %s", len(ids), strings.Join(ids, ", "))
}

var checkTaskMetaIgnored = register(&Check{
	ID:    "TASK-META-IGNORED",
	Title: "tasks/get, tasks/cancel and tasks/result act on their taskId parameter, not on a related-task _meta naming another task",
	How: "Creates two tasks A and B with the task role. tasks/get for A with params._meta io.modelcontextprotocol/related-task " +
		"naming B must answer A (its taskId). When tasks.cancel is declared: tasks/cancel for A with the _meta naming B must " +
		"not cancel B (tasks/get for B right after it must not say cancelled) and, when its reply is a task, that task is A. " +
		"tasks/result for B with the _meta naming A (which is cancelled, or still working) must answer exactly what a plain " +
		"tasks/result for B answers next (the same result, or the same error): the _meta must change nothing.",
	Rules: map[string]Rule{
		v20251125: {Level: reports.Must, Spec: tasksLegacy,
			Clause: "For the tasks/get, tasks/result, and tasks/cancel operations, the taskId parameter in the request MUST be used as the source of truth for identifying the target task. Requestors SHOULD NOT include io.modelcontextprotocol/related-task metadata in these requests, and receivers MUST ignore such metadata if present in favor of the RPC method parameter."},
	},
	Transports: []string{viaStdio, viaHTTP},
	Roles:      []string{"task"},
	Clauses:    []string{"task#22"},
})

// withRelatedMeta sends method for the task id with a related-task _meta
// naming the task other; a server that does not answer within d fails.
func (t *tasker) withRelatedMeta(method, id, other string, d time.Duration) clients.Message {
	h := t.h
	ctx, cancel := context.WithTimeout(h.Ctx(), d)
	defer cancel()
	t.n++
	rid := jsonrpc.StringID(fmt.Sprintf("task-%d", t.n))
	m, err := t.start(ctx, rid, method, map[string]any{"taskId": id,
		"_meta": map[string]any{relatedTaskMeta: map[string]any{"taskId": other}}})
	if err != nil {
		h.FailServer("%s (id %s) for task %s with a related-task _meta naming task %s got no response within %s (%v): the _meta must be ignored, the taskId parameter decides%s",
			method, rid, id, other, d, err, t.exitHint())
	}
	return m
}

// resultRelatedTask is the taskId of the related-task _meta of m's
// result, or "" (no result, or none said).
func resultRelatedTask(m clients.Message) string {
	if m.Env.Kind != jsonrpc.Response {
		return ""
	}
	var res struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	var related struct {
		TaskID string `json:"taskId"`
	}
	if json.Unmarshal(m.Env.Result, &res) != nil || json.Unmarshal(res.Meta[relatedTaskMeta], &related) != nil {
		return ""
	}
	return related.TaskID
}

func taskMetaIgnored(h *H) {
	t := tasks(h)
	a, _ := t.create()
	b, _ := t.create()
	if a.ID == b.ID {
		h.Skip(fmt.Sprintf("both tasks got the id %s (TASK-CREATED-WORKING judges that): a _meta naming the other task names the same one", a.ID))
	}
	m := t.withRelatedMeta("tasks/get", a.ID, b.ID, h.Cfg().OpTimeout)
	if m.Env.Kind != jsonrpc.Response {
		h.Failf("tasks/get for task %s with a related-task _meta naming task %s answered %s: the _meta must be ignored", a.ID, b.ID, rawText(m))
	}
	g, perr := parseTask(m.Env.Result, t.modern)
	if perr != nil {
		h.Failf("tasks/get for task %s is not a task (%v): %s", a.ID, perr, rawText(m))
	}
	if g.ID != a.ID {
		h.Failf("tasks/get for taskId %s with a related-task _meta naming %s answered the task %s: the taskId parameter must decide: %s", a.ID, b.ID, g.ID, rawText(m))
	}
	done := []string{"tasks/get"}
	if declaredTaskCaps(h).cancel {
		c := t.withRelatedMeta("tasks/cancel", a.ID, b.ID, h.Cfg().OpTimeout)
		if c.Env.Kind == jsonrpc.Response {
			if r, err := parseTask(c.Env.Result, t.modern); err == nil && r.ID != a.ID {
				h.Failf("tasks/cancel for taskId %s with a related-task _meta naming %s answered the task %s: the taskId parameter must decide: %s", a.ID, b.ID, r.ID, rawText(c))
			}
		}
		gb, gm := t.get(b.ID, "right after tasks/cancel of the other task")
		if gb.Status == "cancelled" {
			h.Failf("tasks/cancel for taskId %s with a related-task _meta naming %s (answered %s) cancelled task %s: the taskId parameter must decide: %s", a.ID, b.ID, rawText(c), b.ID, rawText(gm))
		}
		done = append(done, "tasks/cancel")
	}
	r1 := t.withRelatedMeta("tasks/result", b.ID, a.ID, h.Cfg().CallTimeout)
	switch resultRelatedTask(r1) {
	case a.ID:
		h.Failf("tasks/result for taskId %s with a related-task _meta naming %s answered the result of task %s: the _meta must be ignored, the taskId parameter decides: %s",
			b.ID, a.ID, a.ID, rawText(r1))
	case b.ID:
		// The result says it is task b's: the taskId decided. A second
		// tasks/result may differ for another reason (a result served
		// once: TASK-RESULT's repetition), not this clause's.
		done = append(done, "tasks/result")
		h.Notef("%s acted on the taskId parameter, ignoring a related-task _meta naming the other task", strings.Join(done, ", "))
		return
	}
	// A result that does not say whose it is: compared with a plain
	// tasks/result for the same task.
	r2 := t.exchange("tasks/result", map[string]any{"taskId": b.ID}, h.Cfg().CallTimeout)
	same := r1.Env.Kind == r2.Env.Kind && errorCode(r1.Env.Error) == errorCode(r2.Env.Error) &&
		(r1.Env.Kind != jsonrpc.Response || sameJSON(r1.Env.Result, r2.Env.Result))
	if !same {
		h.Failf("tasks/result for taskId %s with a related-task _meta naming %s answered %s, but without the _meta it answered %s: the _meta must be ignored, the taskId parameter decides",
			b.ID, a.ID, rawText(r1), rawText(r2))
	}
	done = append(done, "tasks/result")
	h.Notef("%s acted on the taskId parameter, ignoring a related-task _meta naming the other task", strings.Join(done, ", "))
}

package suites

import (
	"encoding/json"
	"fmt"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/protocol"
	"github.com/mcp-conform/mcp-conform/reports"
)

// Checks of the 2025-11-25 negotiation of task augmentation: which
// requests a server accepts as tasks (registered with the other TASK checks
// in task.go's registerTask).

var checkTaskUnsupportedToolAugmented = register(&Check{
	ID:    "TASK-UNSUPPORTED-TOOL-AUGMENTED",
	Title: "a task-augmented tools/call of a tool whose taskSupport is absent or \"forbidden\" gets the error -32601",
	How: "On a server that declares tasks.requests.tools.call, picks a tool tools/list lists without execution.taskSupport " +
		"or with \"forbidden\": the log or slow role's tool (with the role's arguments) when it is one, else the first such tool " +
		"annotated readOnlyHint: true whose inputSchema accepts {} (called with {}), so that a server that ignores the task runs " +
		"nothing harmful; none: SKIP. Calls it with params.task {ttl: 60000}: the answer should be the JSON-RPC error -32601 " +
		"(Method not found). A result (the tool run as a normal call, or a CreateTaskResult) or another error code WARNs.",
	Rules: map[string]Rule{
		v20251125: {Level: reports.Should, Spec: tasksLegacy,
			Clause: "If execution.taskSupport is not present or \"forbidden\", clients MUST NOT attempt to invoke the tool as a task. Servers SHOULD return a -32601 (Method not found) error if a client attempts to do so. This is the default behavior."},
	},
	Transports: []string{viaStdio, viaHTTP},
	Clauses:    []string{"task#2"},
})

// unsupportedRoles are the roles whose tool (with the role's arguments) a
// check may call as a task it does not support, best first: their calls
// are harmless.
var unsupportedRoles = []string{"log", "slow"}

// unsupportedTaskTool picks a listed tool whose taskSupport is absent or
// "forbidden" that may be called safely: its arguments, why it was picked
// and its taskSupport ("" when absent), or ok false.
func unsupportedTaskTool(h *H, tools []map[string]any) (tool unsupportedPick, ok bool) {
	return safeTaskTool(h, tools, func(t map[string]any) bool {
		s := taskSupportOf(t)
		return s == "" || s == "forbidden"
	})
}

// safeTaskTool picks, among the tools that pass unsupported, one that may be
// called safely: the log or slow role's tool, else a read-only tool whose
// inputSchema accepts {}.
func safeTaskTool(h *H, tools []map[string]any, unsupported func(map[string]any) bool) (tool unsupportedPick, ok bool) {
	for _, role := range unsupportedRoles {
		r, declared := h.Target().Roles[role]
		if !declared {
			continue
		}
		if t, listed := findTool(tools, r.Tool); listed && unsupported(t) {
			args := map[string]any{}
			for k, v := range r.Arguments {
				args[k] = v
			}
			return unsupportedPick{r.Tool, args, "the " + role + " role's tool", taskSupportOf(t)}, true
		}
	}
	for _, t := range tools {
		ro, _ := annotation(t, "readOnlyHint")
		raw, _ := json.Marshal(t["inputSchema"])
		if n, _ := t["name"].(string); ro && unsupported(t) && acceptsEmpty(raw) {
			return unsupportedPick{n, map[string]any{}, "read-only, takes {}", taskSupportOf(t)}, true
		}
	}
	return unsupportedPick{}, false
}

// unsupportedPick is a tool without task support a check calls.
type unsupportedPick struct {
	name    string
	args    map[string]any
	why     string
	support string // "" when absent
}

// supportWord is the pick's taskSupport for a reason.
func (p unsupportedPick) supportWord() string {
	if p.support == "" {
		return "taskSupport absent"
	}
	return fmt.Sprintf("taskSupport %q", p.support)
}

func taskUnsupportedToolAugmented(h *H) {
	t := tasks(h)
	p, ok := unsupportedTaskTool(h, t.listTools())
	if !ok {
		h.Skip("no tool without task support can be called safely: neither the log nor the slow role's tool lacks execution.taskSupport (or has \"forbidden\"), and no such tool is annotated readOnlyHint: true with an inputSchema that accepts {}")
	}
	m := t.exchange("tools/call", map[string]any{"name": p.name, "arguments": p.args, "task": map[string]any{"ttl": 60000}}, h.Cfg().CallTimeout)
	if m.Env.Kind != jsonrpc.ErrorReply || m.Env.Error == nil || m.Env.Error.Code != jsonrpc.CodeMethodNotFound {
		var what string
		switch {
		case m.Env.Kind == jsonrpc.ErrorReply:
			what = "the error " + describeError(m.Env.Error)
		case hasTaskMember(m.Env.Result):
			what = "a CreateTaskResult (the tool run as a task)"
		default:
			what = "a result (the tool run as a normal call)"
		}
		h.Failf("tools/call of %s (%s, %s) with params.task answered %s: %s; want the error -32601 (Method not found)",
			p.name, p.why, p.supportWord(), what, rawText(m))
	}
	h.Notef("tools/call of %s (%s, %s) with params.task: %s", p.name, p.why, p.supportWord(), describeError(m.Env.Error))
}

// hasTaskMember reports whether a result is a 2025-11-25 CreateTaskResult
// (it carries a task object).
func hasTaskMember(result json.RawMessage) bool {
	var r struct {
		Task json.RawMessage `json:"task"`
	}
	return json.Unmarshal(result, &r) == nil && len(r.Task) > 0 && string(r.Task) != "null"
}

var checkTaskCapabilityDeclared = register(&Check{
	ID:    "TASK-CAPABILITY-DECLARED",
	Title: "a server that answers a task-augmented tools/call with a CreateTaskResult declared tasks.requests.tools.call at initialization",
	How: "Calls the task role's tool with params.task {ttl: 60000} on a negotiated connection, whatever the server declared " +
		"(the other TASK checks SKIP on a server that declares no tasks): when the answer is a CreateTaskResult, the " +
		"capabilities of its InitializeResult must hold tasks with requests.tools.call (the set of tasks.requests is " +
		"exhaustive: a request type it lacks does not support task augmentation). An answer that creates no task: SKIP.",
	Rules: map[string]Rule{
		v20251125: {Level: reports.Must, Spec: tasksLegacy,
			Clause: "Servers and clients that support task-augmented requests MUST declare a tasks capability during initialization. The tasks capability is structured by request category, with boolean properties indicating which specific request types support task augmentation. [...] The set of capabilities in capabilities.tasks.requests is exhaustive. If a request type is not present, it does not support task-augmentation."},
	},
	Transports: []string{viaStdio, viaHTTP},
	Roles:      []string{"task"},
	Clauses:    []string{"task#1"},
})

// anyTasker connects to the target on its transport, whatever tasks it
// declares.
func anyTasker(h *H) *tasker {
	if h.Target().Via() == protocol.TransportHTTP {
		c := h.ConnectHTTP()
		return httpTasker(h, c, c.W)
	}
	return stdioTasker(h, h.Connect())
}

func taskCapabilityDeclared(h *H) {
	t := anyTasker(h)
	r := h.Role("task")
	args := map[string]any{}
	for k, v := range r.Arguments {
		args[k] = v
	}
	m := t.exchange("tools/call", map[string]any{"name": r.Tool, "arguments": args, "task": map[string]any{"ttl": 60000}}, h.Cfg().CallTimeout)
	if m.Env.Kind != jsonrpc.Response || !hasTaskMember(m.Env.Result) {
		h.Skip(fmt.Sprintf("the task role's tool %s answered a task-augmented tools/call without a CreateTaskResult: %s", r.Tool, rawText(m)))
	}
	var caps struct {
		Tasks *struct {
			Requests *struct {
				Tools *struct {
					Call json.RawMessage `json:"call"`
				} `json:"tools"`
			} `json:"requests"`
		} `json:"tasks"`
	}
	declared := string(h.Session().Capabilities)
	_ = json.Unmarshal(h.Session().Capabilities, &caps)
	switch {
	case caps.Tasks == nil:
		h.Failf("tools/call of %s with params.task created a task (%s), but the server declared no tasks capability at initialization (capabilities %s)",
			r.Tool, rawText(m), declared)
	case caps.Tasks.Requests == nil || caps.Tasks.Requests.Tools == nil || caps.Tasks.Requests.Tools.Call == nil:
		h.Failf("tools/call of %s with params.task created a task (%s), but the tasks capability declared at initialization lacks requests.tools.call (capabilities %s)",
			r.Tool, rawText(m), declared)
	}
	h.Notef("tools/call of %s with params.task created a task; tasks.requests.tools.call is declared", r.Tool)
}

var checkTaskUndeclaredNormal = register(&Check{
	ID:    "TASK-UNDECLARED-NORMAL",
	Title: "a request of a type whose task augmentation the server does not declare is processed normally, params.task ignored",
	How: "Sends tools/list with params.task {ttl: 60000} (a server's tasks capability can declare task augmentation of tools/call " +
		"only): the answer must be a ListToolsResult (a tools array, no task). On a server that declares no " +
		"tasks.requests.tools.call it also calls the log or slow role's tool (with the role's arguments), else the first tool " +
		"annotated readOnlyHint: true whose inputSchema accepts {}, once plainly and once with params.task: the second must be " +
		"answered as the first (no CreateTaskResult; a result where the plain call got one, the same error code where it got an " +
		"error).",
	Rules: map[string]Rule{
		v20251125: {Level: reports.Must, Spec: tasksLegacy,
			Clause: "Receivers that do not declare the task capability for a request type MUST process requests of that type normally, ignoring any task-augmentation metadata if present."},
	},
	Transports: []string{viaStdio, viaHTTP},
	Clauses:    []string{"task#4"},
})

func taskUndeclaredNormal(h *H) {
	t := anyTasker(h)
	lm := t.exchange("tools/list", map[string]any{"task": map[string]any{"ttl": 60000}}, h.Cfg().OpTimeout)
	var list struct {
		Tools json.RawMessage `json:"tools"`
	}
	if lm.Env.Kind != jsonrpc.Response || json.Unmarshal(lm.Env.Result, &list) != nil || len(list.Tools) == 0 || list.Tools[0] != '[' || hasTaskMember(lm.Env.Result) {
		h.Failf("tools/list with params.task answered %s: the server declares no task support for tools/list, so it must list its tools, the task metadata ignored", rawText(lm))
	}
	var caps struct {
		Tasks *struct {
			Requests *struct {
				Tools *struct {
					Call json.RawMessage `json:"call"`
				} `json:"tools"`
			} `json:"requests"`
		} `json:"tasks"`
	}
	_ = json.Unmarshal(h.Session().Capabilities, &caps)
	if caps.Tasks != nil && caps.Tasks.Requests != nil && caps.Tasks.Requests.Tools != nil && caps.Tasks.Requests.Tools.Call != nil {
		h.Notef("tools/list with params.task listed the tools; tools/call not judged (tasks.requests.tools.call is declared)")
		return
	}
	p, ok := safeTaskTool(h, t.listTools(), func(map[string]any) bool { return true })
	if !ok {
		h.Notef("tools/list with params.task listed the tools; tools/call not judged: no tool can be called safely (no log or slow role, no read-only tool that takes {})")
		return
	}
	plain := t.exchange("tools/call", map[string]any{"name": p.name, "arguments": p.args}, h.Cfg().CallTimeout)
	args := map[string]any{}
	for k, v := range p.args {
		args[k] = v
	}
	aug := t.exchange("tools/call", map[string]any{"name": p.name, "arguments": args, "task": map[string]any{"ttl": 60000}}, h.Cfg().CallTimeout)
	switch {
	case aug.Env.Kind == jsonrpc.Response && hasTaskMember(aug.Env.Result):
		h.Failf("tools/call of %s (%s) with params.task created a task (%s) although the server declares no tasks.requests.tools.call", p.name, p.why, rawText(aug))
	case plain.Env.Kind == jsonrpc.Response && aug.Env.Kind != jsonrpc.Response:
		h.Failf("tools/call of %s (%s) answered a result without params.task, but %s with it: the task metadata must be ignored", p.name, p.why, rawText(aug))
	case plain.Env.Kind == jsonrpc.ErrorReply && (aug.Env.Kind != jsonrpc.ErrorReply || errorCode(aug.Env.Error) != errorCode(plain.Env.Error)):
		h.Failf("tools/call of %s (%s) answered %s without params.task, but %s with it: the task metadata must be ignored", p.name, p.why, rawText(plain), rawText(aug))
	}
	answer := "a result"
	if aug.Env.Kind == jsonrpc.ErrorReply {
		answer = "the error " + describeError(aug.Env.Error)
	}
	h.Notef("tools/list with params.task listed the tools; tools/call of %s (%s) answered alike with and without params.task: %s", p.name, p.why, answer)
}

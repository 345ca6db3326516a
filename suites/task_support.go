package suites

import (
	"encoding/json"
	"fmt"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
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
	unsupported := func(t map[string]any) bool {
		s := taskSupportOf(t)
		return s == "" || s == "forbidden"
	}
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

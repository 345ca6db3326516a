package suites

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/reports"
)

// A task that needs its requestor's input (registered with the other TASK
// checks in task.go's registerTask).
//
//	harness ──initialize {capabilities: {elicitation}}──▶ server
//	harness ──tools/call {inputArguments, task}──▶ CreateTaskResult
//	harness ──tasks/result (blocks)──▶
//	        ◀── elicitation/create {_meta: related-task}   (task#11)
//	harness ──tasks/get──▶ input_required?                 (task#10)
//	harness ──answer (accept)──▶
//	harness ──tasks/get … until terminal: not input_required (task#12)
//	        ◀── tasks/result answer; the task completed

var checkTaskInputRequired = register(&Check{
	ID:    "TASK-INPUT-REQUIRED",
	Title: "a task that asks its requestor for input is input_required meanwhile, relates the request to the task, and leaves input_required once answered",
	How: "2025-11-25 on stdio, when the task role declares inputArguments (the manifest's contract: with them the task asks " +
		"its requestor for input with an elicitation/create request and completes once answered): initializes declaring the " +
		"elicitation client capability, creates a task with them, sends tasks/result (which blocks; its answer is TASK-RESULT's) and " +
		"waits for the elicitation/create (one before the CreateTaskResult is answered, and the check SKIPs: the status " +
		"could not be polled). Its params must carry _meta io.modelcontextprotocol/related-task with the taskId (else FAIL, MUST). " +
		"A tasks/get sent at once must say input_required (else WARN, SHOULD). The harness answers with action accept and " +
		"content valid for the requestedSchema (each property a value of its type, enum or minimum), then polls tasks/get at " +
		"the task's pollInterval until it is terminal: a task seen input_required in every such tasks/get, two or more (so " +
		"still one pollInterval after the answer), before it was terminal is WARN (SHOULD). The task must end completed (else ERROR: the declared contract " +
		"does not hold). The request is provoked only through the declared contract, so the level comes from it. Without " +
		"inputArguments: SKIP.",
	Rules: sameRule(Rule{Level: reports.Must, Spec: tasksLegacy,
		Clause: "When the task receiver has messages for the requestor that are necessary to complete the task, the receiver SHOULD move the task to the input_required status. [...] The receiver MUST include the io.modelcontextprotocol/related-task metadata in the request to associate it with the task. [...] When the receiver receives all required input, the task SHOULD transition out of input_required status (typically back to working)."},
		v20251125),
	Transports: []string{viaStdio},
	Roles:      []string{"task"},
	Clauses:    []string{"task#10", "task#11", "task#12"},
	Limits: map[string]string{"task#10": "over stdio only: the reference sends no server request over Streamable HTTP, so no mutant shows the HTTP side, which the check does not provoke", "task#11": "over stdio only: the reference sends no server request over Streamable HTTP, so no mutant shows the HTTP side, which the check does not provoke",
		"task#12": "over stdio only: the reference sends no server request over Streamable HTTP, so no mutant shows the HTTP side, which the check does not provoke"},
})

func taskInputRequired(h *H) {
	in := h.Role("task").InputArguments
	if in == nil {
		h.Skip("the task role declares no inputArguments: a task that asks its requestor for input cannot be provoked")
	}
	taskCapable(h)
	c := h.ConnectBare()
	ctx, cancel := context.WithTimeout(h.Ctx(), h.Cfg().StartTimeout)
	init, err := c.W.Call(ctx, "initialize", map[string]any{
		"protocolVersion": h.Version(),
		"capabilities":    map[string]any{"elicitation": map[string]any{}},
		"clientInfo":      map[string]any{"name": "mcp-conform", "version": clients.DefaultClientVersion},
	})
	cancel()
	if err != nil {
		h.FailServer("initialize declaring elicitation: no response: %v%s", err, c.ExitHint())
	}
	if init.Env.Kind != jsonrpc.Response {
		h.Errorf("initialize in %s declaring elicitation was refused, the check cannot go on: %s", h.Version(), rawText(init))
	}
	ctx, cancel = h.Op()
	err = c.W.Notify(ctx, "notifications/initialized", nil)
	cancel()
	if err != nil {
		h.FailServer("notifications/initialized: %v%s", err, c.ExitHint())
	}
	t := &tasker{h: h, exitHint: c.ExitHint,
		start: func(ctx context.Context, id jsonrpc.ID, method string, params map[string]any) (clients.Message, error) {
			p, err := c.W.Start(ctx, id, method, params)
			if err != nil {
				return clients.Message{}, err
			}
			return p.Wait(ctx)
		}}
	isAsk := func(m clients.Message) bool {
		return m.Env.Kind == jsonrpc.Request && m.Env.Method == "elicitation/create"
	}
	reply := func(m clients.Message) {
		ctx, cancel := h.Op()
		err := c.W.Reply(ctx, m.Env.ID, map[string]any{"action": "accept", "content": elicitContent(m.Env.Params)})
		cancel()
		if err != nil {
			h.FailServer("answer the elicitation/create: %v%s", err, c.ExitHint())
		}
	}
	// The task is created with the request sent alone, so that an input
	// request before the CreateTaskResult can be answered.
	r := h.Role("task")
	args := map[string]any{}
	for k, v := range r.Arguments {
		args[k] = v
	}
	for k, v := range in {
		args[k] = v
	}
	from := c.W.Len()
	createID := jsonrpc.StringID(unique("input-create"))
	cctx, ccancel := context.WithTimeout(h.Ctx(), h.Cfg().CallTimeout)
	defer ccancel()
	if _, err := c.W.Start(cctx, createID, "tools/call", map[string]any{"name": r.Tool, "arguments": args, "task": map[string]any{"ttl": 60000}}); err != nil {
		h.FailServer("tools/call: %v%s", err, c.ExitHint())
	}
	created, ok := c.WaitFirst(from, h.Cfg().CallTimeout, func(m clients.Message) bool {
		return isAsk(m) || (m.Env.Kind.IsReply() && m.Env.ID == createID)
	})
	if !ok {
		h.FailServer("tools/call of the task role %s with inputArguments: no response %s", r.Tool, c.Silence(h.Cfg().OpTimeout))
	}
	if isAsk(created) {
		reply(created)
		h.Skip("the task asked for input (" + rawText(created) + ") before the tools/call that creates it returned its CreateTaskResult: the requestor could not poll its status while it waited")
	}
	var ct struct {
		Task json.RawMessage `json:"task"`
	}
	if created.Env.Kind != jsonrpc.Response || json.Unmarshal(created.Env.Result, &ct) != nil || ct.Task == nil {
		h.Errorf("the task role %s with inputArguments %s did not create a task: %s", r.Tool, jsonText(in), rawText(created))
	}
	a, err := parseTask(ct.Task, false)
	if err != nil {
		h.Failf("CreateTaskResult is not a task (%v): %s", err, rawText(created))
	}
	// tasks/result (which blocks) is where the requestor receives the
	// input requests; what it answers is TASK-RESULT's to judge.
	resultID := jsonrpc.StringID(unique("input-result"))
	rctx, rcancel := context.WithTimeout(h.Ctx(), h.Cfg().CallTimeout)
	defer rcancel()
	if _, err := c.W.Start(rctx, resultID, "tasks/result", map[string]any{"taskId": a.ID}); err != nil {
		h.FailServer("tasks/result: %v%s", err, c.ExitHint())
	}
	ask, ok := c.WaitFirst(from, h.Cfg().CallTimeout, isAsk)
	if !ok {
		g, gm := t.get(a.ID, "while waiting for its input request")
		if g.terminal() {
			h.Errorf("the task role's declared inputArguments %s did not make task %s ask for input: it ended %s without an elicitation/create request (%s); the manifest's contract does not hold",
				jsonText(in), a.ID, g.Status, rawText(gm))
		}
		h.Errorf("the task role's declared inputArguments %s: no elicitation/create request for task %s arrived within %s (tasks/get: %s)",
			jsonText(in), a.ID, h.Cfg().CallTimeout, rawText(gm))
	}
	if got := paramsRelatedTask(ask.Env.Params); got != a.ID {
		h.Failf("task %s asked its requestor for input with a request whose params lack _meta %q naming the task (taskId %q found): %s",
			a.ID, relatedTaskMeta, got, rawText(ask))
	}
	var warns []string
	g, gm := t.get(a.ID, "while its elicitation/create was unanswered")
	if g.Status != "input_required" {
		warns = append(warns, fmt.Sprintf("while task %s waited for the answer to its elicitation/create, tasks/get said %s, not input_required: %s",
			a.ID, g.Status, rawText(gm)))
	}
	reply(ask)
	var after []string
	deadline := time.Now().Add(h.Cfg().CallTimeout)
	for {
		g, gm = t.get(a.ID, "after its elicitation/create was answered")
		if g.terminal() {
			break
		}
		after = append(after, g.Status)
		if time.Now().After(deadline) {
			h.Errorf("the task role's declared inputArguments %s: task %s was still %s %s after its input was given: %s",
				jsonText(in), a.ID, g.Status, h.Cfg().CallTimeout, rawText(gm))
		}
		h.Sleep(pollGap(g))
	}
	if g.Status != "completed" {
		h.Errorf("the task role's declared inputArguments %s: task %s ended %s, not completed, once its input was given (%s); the manifest's contract does not hold",
			jsonText(in), a.ID, g.Status, rawText(gm))
	}
	if len(after) >= 2 && !slicesContainOther(after, "input_required") {
		warns = append(warns, fmt.Sprintf("after its input was given, task %s stayed input_required in every tasks/get, one pollInterval apart, until it was completed (%s)",
			a.ID, strings.Join(after, " → ")))
	}
	if len(warns) > 0 {
		h.Warnf("%s", strings.Join(warns, "; "))
	}
	h.Notef("task %s (declared inputArguments) asked for input with elicitation/create carrying the related-task _meta while input_required; after the answer: %s → completed",
		a.ID, strings.Join(after, " → "))
}

// slicesContainOther reports whether s holds a value other than v.
func slicesContainOther(s []string, v string) bool {
	for _, x := range s {
		if x != v {
			return true
		}
	}
	return false
}

// paramsRelatedTask is the taskId of a request's params._meta
// io.modelcontextprotocol/related-task, "" when absent.
func paramsRelatedTask(params json.RawMessage) string {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	var related struct {
		TaskID string `json:"taskId"`
	}
	if json.Unmarshal(params, &p) != nil || json.Unmarshal(p.Meta[relatedTaskMeta], &related) != nil {
		return ""
	}
	return related.TaskID
}

// elicitContent is an accept's content for an elicitation/create's
// requestedSchema: every property a value of its type (its first enum
// value, its minimum, a string of its format).
func elicitContent(params json.RawMessage) map[string]any {
	var p struct {
		Schema struct {
			Properties map[string]struct {
				Type   string            `json:"type"`
				Format string            `json:"format"`
				Enum   []json.RawMessage `json:"enum"`
				OneOf  []struct {
					Const json.RawMessage `json:"const"`
				} `json:"oneOf"`
				Minimum   *float64 `json:"minimum"`
				MinLength int      `json:"minLength"`
				Items     struct {
					Enum []json.RawMessage `json:"enum"`
				} `json:"items"`
			} `json:"properties"`
		} `json:"requestedSchema"`
	}
	_ = json.Unmarshal(params, &p)
	content := map[string]any{}
	for name, s := range p.Schema.Properties {
		switch {
		case len(s.Enum) > 0:
			content[name] = s.Enum[0]
		case len(s.OneOf) > 0 && s.OneOf[0].Const != nil:
			content[name] = s.OneOf[0].Const
		case s.Type == "boolean":
			content[name] = true
		case s.Type == "number" || s.Type == "integer":
			n := 1.0
			if s.Minimum != nil {
				n = *s.Minimum
			}
			content[name] = n
		case s.Type == "array":
			content[name] = s.Items.Enum[:min(1, len(s.Items.Enum))]
		default:
			content[name] = elicitString(s.Format, s.MinLength)
		}
	}
	return content
}

// elicitString is a string of format (at least minLength long).
func elicitString(format string, minLength int) string {
	v := map[string]string{"email": "mcp-conform@example.com", "uri": "https://example.com/mcp-conform",
		"date": "2025-11-25", "date-time": "2025-11-25T00:00:00Z"}[format]
	if v == "" {
		v = "mcp-conform"
	}
	for len(v) < minLength {
		v += "-"
	}
	return v
}

package suites

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/protocol"
)

// taskState is what a Task object (CreateTaskResult, tasks/get, tasks/cancel
// in 2025-11-25) says, in either era's shape.
type taskState struct {
	ID      string
	Status  string
	Message string
	// TTL is the raw ttl (ttlMs) member; nil when absent.
	TTL json.RawMessage
	// Poll is the suggested polling interval; 0 when absent.
	Poll          time.Duration
	CreatedAt     string
	LastUpdatedAt string
}

func (s taskState) terminal() bool {
	return s.Status == "completed" || s.Status == "failed" || s.Status == "cancelled"
}

// parseTask reads a Task object in the era's field names.
func parseTask(raw json.RawMessage, modern bool) (taskState, error) {
	var t struct {
		TaskID        json.RawMessage `json:"taskId"`
		Status        string          `json:"status"`
		StatusMessage string          `json:"statusMessage"`
		TTL           json.RawMessage `json:"ttl"`
		TTLMs         json.RawMessage `json:"ttlMs"`
		Poll          *float64        `json:"pollInterval"`
		PollMs        *float64        `json:"pollIntervalMs"`
		CreatedAt     string          `json:"createdAt"`
		LastUpdatedAt string          `json:"lastUpdatedAt"`
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return taskState{}, err
	}
	var id string
	if len(t.TaskID) > 0 && json.Unmarshal(t.TaskID, &id) != nil {
		return taskState{}, fmt.Errorf("its taskId %s is not a string (task ids MUST be strings)", t.TaskID)
	}
	s := taskState{ID: id, Status: t.Status, Message: t.StatusMessage, TTL: t.TTL, CreatedAt: t.CreatedAt, LastUpdatedAt: t.LastUpdatedAt}
	poll := t.Poll
	if modern {
		s.TTL, poll = t.TTLMs, t.PollMs
	}
	if poll != nil && *poll > 0 {
		s.Poll = time.Duration(*poll * float64(time.Millisecond))
	}
	if s.ID == "" || s.Status == "" {
		return s, fmt.Errorf("no taskId or status")
	}
	return s, nil
}

// tasker drives the task methods over one connection of either transport.
type tasker struct {
	h *H
	// start sends a request with an explicit id and waits for its reply.
	start func(ctx context.Context, id jsonrpc.ID, method string, params map[string]any) (clients.Message, error)
	// exitHint says how the server ended, when it has.
	exitHint func() string
	modern   bool
	n        int
}

// stdioTasker drives tasks over a stdio connection.
func stdioTasker(h *H, c *Conn) *tasker {
	return &tasker{h: h, modern: c.W.Session().Era == clients.EraModern, exitHint: c.ExitHint,
		start: func(ctx context.Context, id jsonrpc.ID, method string, params map[string]any) (clients.Message, error) {
			p, err := c.W.Start(ctx, id, method, params)
			if err != nil {
				return clients.Message{}, err
			}
			return p.Wait(ctx)
		}}
}

// httpTasker drives tasks through one HTTP wire client of c.
func httpTasker(h *H, c *HConn, w *clients.HTTPWire) *tasker {
	return &tasker{h: h, modern: w.Session().Era == clients.EraModern, exitHint: c.ExitHint,
		start: func(ctx context.Context, id jsonrpc.ID, method string, params map[string]any) (clients.Message, error) {
			call, err := w.Start(ctx, id, method, params)
			if err != nil {
				return clients.Message{}, err
			}
			return call.Wait(ctx)
		}}
}

// taskCapable skips unless the negotiated server declares tasks for
// tools/call (2025-11-25) or the tasks extension (2026-07-28).
func taskCapable(h *H) {
	var caps struct {
		Tasks *struct {
			Requests struct {
				Tools struct {
					Call json.RawMessage `json:"call"`
				} `json:"tools"`
			} `json:"requests"`
		} `json:"tasks"`
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	_ = json.Unmarshal(h.Session().Capabilities, &caps)
	if h.Session().Era == clients.EraModern {
		if _, ok := caps.Extensions[tasksExtension]; !ok {
			h.Skip("the server does not declare the " + tasksExtension + " extension in its server/discover capabilities")
		}
		return
	}
	if caps.Tasks == nil || caps.Tasks.Requests.Tools.Call == nil {
		h.Skip("the server does not declare the tasks.requests.tools.call capability")
	}
}

// tasks connects to the target on its transport and returns a tasker.
func tasks(h *H) *tasker {
	taskCapable(h)
	if h.Target().Via() == protocol.TransportHTTP {
		c := h.ConnectHTTP()
		return httpTasker(h, c, c.W)
	}
	return stdioTasker(h, h.Connect())
}

// params adds, in 2026-07-28, the tasks extension to the request's client
// capabilities (the wire client fills the rest of the _meta).
func (t *tasker) params(p map[string]any) map[string]any {
	if t.modern {
		p["_meta"] = map[string]any{clients.MetaClientCapabilities: map[string]any{
			"extensions": map[string]any{tasksExtension: map[string]any{}}}}
	}
	return p
}

// exchange sends a request and waits up to d for its reply; a server that
// does not answer fails the check.
func (t *tasker) exchange(method string, params map[string]any, d time.Duration) clients.Message {
	ctx, cancel := context.WithTimeout(t.h.Ctx(), d)
	defer cancel()
	t.n++
	id := jsonrpc.StringID(fmt.Sprintf("task-%d", t.n))
	m, err := t.start(ctx, id, method, t.params(params))
	if err != nil {
		t.h.FailServer("%s: no response for id %s: %v%s", method, id, err, t.exitHint())
	}
	return m
}

// create calls the task role as a task and returns the task created.
func (t *tasker) create() (taskState, clients.Message) { return t.createWith("") }

// createWith is create with a progress token (legacy era) when token is
// not zero.
func (t *tasker) createWith(token jsonrpc.ID) (taskState, clients.Message) {
	return t.createOver(token, nil)
}

// createOver is createWith with overlay's arguments added to (or
// replacing) the role's (e.g. the role's failArguments).
func (t *tasker) createOver(token jsonrpc.ID, overlay map[string]any) (taskState, clients.Message) {
	r := t.h.Role("task")
	args := map[string]any{}
	for k, v := range r.Arguments {
		args[k] = v
	}
	for k, v := range overlay {
		args[k] = v
	}
	params := map[string]any{"name": r.Tool, "arguments": args}
	if !t.modern {
		params["task"] = map[string]any{"ttl": 60000}
		if !token.IsZero() {
			params["_meta"] = map[string]any{clients.MetaProgressToken: json.RawMessage(token)}
		}
	}
	m := t.exchange("tools/call", params, t.h.Cfg().CallTimeout)
	if m.Env.Kind != jsonrpc.Response {
		t.h.Errorf("the task role %s did not create a task: %s", r.Tool, rawText(m))
	}
	raw := m.Env.Result
	if t.modern {
		var rt struct {
			ResultType string `json:"resultType"`
		}
		_ = json.Unmarshal(raw, &rt)
		if rt.ResultType != "task" {
			t.h.Errorf("the task role %s answered without a task (resultType %q): %s", r.Tool, rt.ResultType, rawText(m))
		}
	} else {
		var ct struct {
			Task json.RawMessage `json:"task"`
		}
		if json.Unmarshal(raw, &ct) != nil || ct.Task == nil {
			t.h.Errorf("the task role %s answered without a CreateTaskResult: %s", r.Tool, rawText(m))
		}
		raw = ct.Task
	}
	s, err := parseTask(raw, t.modern)
	if err != nil {
		t.h.Failf("CreateTaskResult is not a task (%v): %s", err, rawText(m))
	}
	return s, m
}

// get sends tasks/get; a JSON-RPC error (the task is gone) fails the check,
// with why in the reason.
func (t *tasker) get(id, why string) (taskState, clients.Message) {
	m := t.exchange("tasks/get", map[string]any{"taskId": id}, t.h.Cfg().OpTimeout)
	if m.Env.Kind != jsonrpc.Response {
		t.h.Failf("tasks/get for task %s %s answered %s", id, why, rawText(m))
	}
	s, err := parseTask(m.Env.Result, t.modern)
	if err != nil {
		t.h.Failf("tasks/get for task %s is not a task (%v): %s", id, err, rawText(m))
	}
	return s, m
}

// cancel sends tasks/cancel.
func (t *tasker) cancel(id string) clients.Message {
	return t.exchange("tasks/cancel", map[string]any{"taskId": id}, t.h.Cfg().OpTimeout)
}

// pollGap is the wait before the next poll of s: its pollInterval, within
// bounds.
func pollGap(s taskState) time.Duration {
	return min(max(s.Poll, minTaskPoll), maxTaskPoll)
}

// observation is one tasks/get answer.
type observation struct {
	status string
	raw    string
	seq    int // the answer's position among the connection's inbound messages
}

// watch polls tasks ids (with their latest states) at their pollInterval
// until every one is terminal, then `extra` more rounds; it returns every
// observation per task, in order. A task still not terminal after the call
// timeout fails the check.
func (t *tasker) watch(states []taskState, extra int, why string) [][]observation {
	out := make([][]observation, len(states))
	deadline := time.Now().Add(t.h.Cfg().CallTimeout)
	rounds := -1
	for {
		gap := maxTaskPoll
		all := true
		for i, s := range states {
			g, m := t.get(s.ID, why)
			states[i] = g
			out[i] = append(out[i], observation{g.Status, rawText(m), m.Seq})
			all = all && g.terminal()
			gap = min(gap, pollGap(g))
		}
		if all && rounds < 0 {
			rounds = extra
		}
		if rounds == 0 {
			return out
		}
		if rounds > 0 {
			rounds--
		}
		if time.Now().After(deadline) {
			var last []string
			for i := range out {
				last = append(last, out[i][len(out[i])-1].status)
			}
			t.h.Failf("tasks not terminal %s after %s (last statuses %v)", why, t.h.Cfg().CallTimeout, last)
		}
		t.h.Sleep(gap)
	}
}

func statuses(obs []observation) []string {
	var s []string
	for _, o := range obs {
		if len(s) == 0 || s[len(s)-1] != o.status {
			s = append(s, o.status)
		}
	}
	return s
}

// isEmptyAck reports whether a result is an empty acknowledgement (only
// resultType "complete" and _meta).
func isEmptyAck(raw json.RawMessage) (bool, string) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return false, "not an object"
	}
	var extra []string
	for k := range m {
		if k != "resultType" && k != "_meta" {
			extra = append(extra, k)
		}
	}
	slices.Sort(extra)
	if len(extra) > 0 {
		return false, "it carries " + strings.Join(extra, ", ")
	}
	if rt, ok := m["resultType"]; ok && string(rt) != `"complete"` {
		return false, "resultType is " + string(rt)
	}
	return true, ""
}

// extractResult returns the result member of a response.
func extractResult(raw string) []byte {
	var r struct {
		Result json.RawMessage `json:"result"`
	}
	_ = json.Unmarshal([]byte(raw), &r)
	return r.Result
}

// validTTL: a non-negative number, or null.
func validTTL(raw json.RawMessage) bool {
	if raw == nil {
		return false
	}
	if string(raw) == "null" {
		return true
	}
	var f float64
	return json.Unmarshal(raw, &f) == nil && f >= 0
}

// isTimestamp accepts an RFC 3339 timestamp.
func isTimestamp(s string) bool {
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}

// rawText is a message as received, without surrounding white space (an
// HTTP body's trailing newline), for reasons.
func rawText(m clients.Message) string { return strings.TrimSpace(string(m.Raw)) }

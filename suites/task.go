package suites

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/reports"
)

// Bounds of task polling: the interval a server suggests is honoured but
// kept within these, so that a server suggesting 0 is not hammered and one
// suggesting an hour does not stall the run.
const (
	minTaskPoll = 10 * time.Millisecond
	maxTaskPoll = time.Second
)

var checkTaskCancelTerminal = register(&Check{
	ID:    "TASK-CANCEL-TERMINAL",
	Title: "tasks/cancel of a working task: cancelled before the reply (2025-11-25); an empty acknowledgement, then a terminal status (2026-07-28)",
	How: "Creates a task with the task role and cancels it at once, while its worker is mid-step. 2025-11-25: the reply " +
		"must carry status cancelled and a tasks/get sent right after it must say cancelled. 2026-07-28: the reply must be " +
		"an empty result (resultType complete), and tasks/get, polled at the task's pollInterval, must reach a terminal " +
		"status (any: cancellation is cooperative) by the time an uncancelled control task started with it has finished.",
	Rules: map[string]Rule{
		"2025-11-25": {Level: reports.Must, Spec: tasksLegacy,
			Clause: "Upon receiving a valid cancellation request, receivers SHOULD attempt to stop the task execution and MUST transition the task to cancelled status before sending the response."},
		"2026-07-28": {Level: reports.Should, Spec: tasksModern, Source: reports.SourceReading,
			Clause: "Handle tasks/cancel: Acknowledge cancellation requests with an empty result. Honor them when possible, but cancellation is cooperative — the task may still reach a non-cancelled terminal status. (The extension page has no RFC 2119 keyword: mcp-conform's reading, WARN at most.)"},
	},
	Transports: []string{"stdio", "http"},
	Roles:      []string{"task"},
})

var checkTaskTerminalFinal = register(&Check{
	ID:    "TASK-TERMINAL-FINAL",
	Title: "a terminal task status never changes, even when the worker notices the cancellation only at its next checkpoint",
	How: "Creates a task and an uncancelled control task, cancels the first at once (mid-step), and polls both with " +
		"tasks/get at their pollInterval until the control has finished and a few polls more: from the first terminal " +
		"status tasks/get reports for either task, every later tasks/get must report the same (a cancelled task that " +
		"turns completed because its worker finished the step is the bug).",
	Rules: map[string]Rule{
		"2025-11-25": {Level: reports.Must, Spec: tasksLegacy,
			Clause: "Tasks with a completed, failed, or cancelled status are in a terminal state and MUST NOT transition to any other status [...] Once a task is cancelled, it MUST remain in cancelled status even if execution continues to completion or fails."},
		"2026-07-28": {Level: reports.Should, Spec: tasksModern, Source: reports.SourceReading,
			Clause: "completed, failed, and cancelled are terminal — once reached, the task's state does not change. (The extension page has no RFC 2119 keyword: mcp-conform's reading, WARN at most.)"},
	},
	Transports: []string{"stdio", "http"},
	Roles:      []string{"task"},
})

var checkTaskCancelTerminalError = register(&Check{
	ID:    "TASK-CANCEL-TERMINAL-ERROR",
	Title: "tasks/cancel of a finished task: -32602 (2025-11-25); acknowledged with the status unchanged (2026-07-28)",
	How: "Creates a task, polls it to a terminal status, sends tasks/cancel for it, then tasks/get. 2025-11-25: the " +
		"cancel must be rejected with -32602 (Invalid params); both eras: the task's status must be unchanged afterwards.",
	Rules: map[string]Rule{
		"2025-11-25": {Level: reports.Must, Spec: tasksLegacy,
			Clause: "Receivers MUST reject cancellation requests for tasks already in a terminal status (completed, failed, or cancelled) with error code -32602 (Invalid params)."},
		"2026-07-28": {Level: reports.Should, Spec: tasksModern, Source: reports.SourceReading,
			Clause: "completed, failed, and cancelled are terminal — once reached, the task's state does not change (a tasks/cancel of a finished task is acknowledged, or rejected, and changes nothing). (The extension page has no RFC 2119 keyword: mcp-conform's reading, WARN at most.)"},
	},
	Transports: []string{"stdio", "http"},
	Roles:      []string{"task"},
})

var checkTaskSurvivesDisconnect = register(&Check{
	ID:    "TASK-SURVIVES-DISCONNECT",
	Title: "a task outlives the HTTP connection that created it: polled from a new connection, it runs to completion",
	How: "Creates a task over Streamable HTTP, closes every stream and connection of that client, then polls tasks/get " +
		"from a new client (2025-11-25: the same session) until the task is terminal: every poll must find it and it " +
		"must end completed, not cancelled nor deleted.",
	Rules: map[string]Rule{
		"2025-11-25": {Level: reports.Should, Spec: tasksLegacy, Also: []string{"specification/2025-11-25/basic/transports.mdx"},
			Clause: "Tasks are durable state machines [...] [transports.mdx] Disconnection SHOULD NOT be interpreted as the client cancelling its request."},
		"2026-07-28": {Level: reports.Should, Spec: tasksModern, Source: reports.SourceReading,
			Clause: "Crash resilience. A task ID is a durable handle. If the client disconnects or restarts, it can resume polling with the same ID. (The extension page has no RFC 2119 keyword: mcp-conform's reading, WARN at most.)"},
	},
	Transports: []string{"http"},
	Roles:      []string{"task"},
})

var checkTaskTTLReported = register(&Check{
	ID:    "TASK-TTL-REPORTED",
	Title: "CreateTaskResult and tasks/get report the task's ttl (and timestamps); the harness polls at the reported pollInterval",
	How: "Creates a task and polls it to a terminal status at its pollInterval: the CreateTaskResult and every tasks/get " +
		"must carry the actual ttl (2025-11-25: ttl, 2026-07-28: ttlMs; a number, or null for unlimited), createdAt and " +
		"lastUpdatedAt; pollInterval is reported in the PASS reason when given.",
	Rules: map[string]Rule{
		"2025-11-25": {Level: reports.Must, Spec: tasksLegacy,
			Clause: "Receivers MUST include a createdAt ISO 8601-formatted timestamp in all task responses to indicate when the task was created. Receivers MUST include a lastUpdatedAt ISO 8601-formatted timestamp in all task responses to indicate when the task was last updated. [...] Receivers MUST include the actual ttl duration (or null for unlimited) in tasks/get responses."},
		"2026-07-28": {Level: reports.Should, Spec: tasksModern, Source: reports.SourceReading,
			Clause: "Return CreateTaskResult: When a request will be long-running, respond with resultType: \"task\" and a Task object containing a unique taskId, initial status, ttlMs, and pollIntervalMs. (Task: ttlMs: number | null; createdAt; lastUpdatedAt. The extension page has no RFC 2119 keyword: mcp-conform's reading, WARN at most.)"},
	},
	Transports: []string{"stdio", "http"},
	Roles:      []string{"task"},
})

var checkTaskProgressStops = register(&Check{
	ID:    "TASK-PROGRESS-STOPS",
	Title: "a task's progress notifications stop at its terminal status",
	How: "Creates a task and an uncancelled control task, each with a progress token; once the first task " +
		"has reported progress it is cancelled, and both are polled to a terminal status and a few polls more: no " +
		"notifications/progress with a task's token may follow the tasks/get answer that first reported it terminal. " +
		"A task that sends no progress before it is terminal makes the check SKIP (progress is optional). Over Streamable HTTP the " +
		"task's progress can only come on the standalone GET stream once the CreateTaskResult has ended the POST stream: it is held " +
		"open during the check and read with every other stream.",
	Rules: map[string]Rule{
		"2025-11-25": {Level: reports.Must, Spec: "specification/2025-11-25/basic/utilities/progress.mdx",
			Clause: "Progress notifications for tasks MUST stop after the task reaches a terminal status (completed, failed, or cancelled)."},
	},
	Transports: []string{"stdio", "http"},
	Roles:      []string{"task"},
})

func registerTask() {
	ginkgo.Describe("TASK", ginkgo.Label("area:task"), func() {
		define(checkTaskCancelTerminal, taskCancelTerminal)
		define(checkTaskTerminalFinal, taskTerminalFinal)
		define(checkTaskCancelTerminalError, taskCancelTerminalError)
		define(checkTaskSurvivesDisconnect, taskSurvivesDisconnect)
		define(checkTaskTTLReported, taskTTLReported)
		define(checkTaskProgressStops, taskProgressStops)
	})
}

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
		TaskID        string          `json:"taskId"`
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
	s := taskState{ID: t.TaskID, Status: t.Status, Message: t.StatusMessage, TTL: t.TTL, CreatedAt: t.CreatedAt, LastUpdatedAt: t.LastUpdatedAt}
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
	if h.Target().Transport == "http" {
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
	r := t.h.Role("task")
	args := map[string]any{}
	for k, v := range r.Arguments {
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

func taskCancelTerminal(h *H) {
	t := tasks(h)
	a, _ := t.create()
	m := t.cancel(a.ID)
	if m.Env.Kind != jsonrpc.Response {
		h.Failf("tasks/cancel of the working task %s was rejected: %s", a.ID, rawText(m))
	}
	if !t.modern {
		reply, err := parseTask(m.Env.Result, false)
		if err != nil || reply.Status != "cancelled" {
			h.Failf("tasks/cancel answered %s: the reply must carry the task in status cancelled", rawText(m))
		}
		g, gm := t.get(a.ID, "right after tasks/cancel")
		if g.Status != "cancelled" {
			h.Failf("tasks/cancel answered status cancelled, but tasks/get right after it said %q: the task was not moved to cancelled before the response (%s)", g.Status, rawText(gm))
		}
		h.Notef("tasks/cancel answered cancelled and tasks/get right after it agreed")
		return
	}
	if ok, why := isEmptyAck(m.Env.Result); !ok {
		h.Failf("tasks/cancel must be acknowledged with an empty result, but %s: %s", why, rawText(m))
	}
	b, _ := t.create()
	obs := t.watch([]taskState{a, b}, 0, "after tasks/cancel")
	h.Notef("after the empty acknowledgement the cancelled task went %s (control: %s)",
		strings.Join(statuses(obs[0]), " → "), strings.Join(statuses(obs[1]), " → "))
}

func taskTerminalFinal(h *H) {
	t := tasks(h)
	a, _ := t.create()
	b, _ := t.create()
	if m := t.cancel(a.ID); m.Env.Kind != jsonrpc.Response {
		h.Failf("tasks/cancel of the working task %s was rejected: %s", a.ID, rawText(m))
	}
	obs := t.watch([]taskState{a, b}, 3, "while watching for terminal statuses")
	for i, name := range []string{"the cancelled task", "the control task"} {
		first := ""
		for _, o := range obs[i] {
			terminal := taskState{Status: o.status}.terminal()
			switch {
			case first == "" && terminal:
				first = o.status
			case first != "" && o.status != first:
				h.Failf("%s was %s, then tasks/get said %q: a terminal status changed (%s)", name, first, o.status, o.raw)
			}
		}
	}
	h.Notef("cancelled task: %s; control: %s", strings.Join(statuses(obs[0]), " → "), strings.Join(statuses(obs[1]), " → "))
}

func taskCancelTerminalError(h *H) {
	t := tasks(h)
	a, _ := t.create()
	obs := t.watch([]taskState{a}, 0, "while waiting for it to finish")
	final := obs[0][len(obs[0])-1].status
	m := t.cancel(a.ID)
	if !t.modern {
		if m.Env.Kind != jsonrpc.ErrorReply || m.Env.Error == nil || m.Env.Error.Code != -32602 {
			h.Failf("tasks/cancel of the %s task %s answered %s; want the error -32602 (Invalid params)", final, a.ID, rawText(m))
		}
	}
	g, gm := t.get(a.ID, "after tasks/cancel of the finished task")
	if g.Status != final {
		h.Failf("the task was %s; after tasks/cancel (answered %s) tasks/get said %q: %s", final, rawText(m), g.Status, rawText(gm))
	}
	h.Notef("tasks/cancel of the %s task answered %s; its status stayed %s", final, rawText(m), g.Status)
}

func taskSurvivesDisconnect(h *H) {
	taskCapable(h)
	c := h.ConnectHTTP()
	sess, sid := c.W.Session(), c.W.SessionID()
	first := httpTasker(h, c, c.W)
	a, _ := first.create()
	_ = c.W.Close() // every stream and connection of the creating client
	w := clients.NewHTTPWire(c.Proxy.URL(), clients.HTTPOptions{ClientName: "mcp-conform"})
	defer w.Close()
	w.SetSession(sess)
	if sid != "" {
		w.SetSessionID(sid)
	}
	h.Notef("task %s created, then its client closed every connection; polling from a new client", a.ID)
	second := httpTasker(h, c, w)
	second.n = first.n
	obs := second.watch([]taskState{a}, 0, "from a new connection, after the connection that created it closed")
	final := obs[0][len(obs[0])-1]
	if final.status != "completed" {
		h.Failf("after the connection that created it closed, the task ended %s instead of completing: %s", final.status, final.raw)
	}
	h.Notef("polled %d times from the new connection: %s", len(obs[0]), strings.Join(statuses(obs[0]), " → "))
}

func taskTTLReported(h *H) {
	t := tasks(h)
	a, cm := t.create()
	ttlName := "ttl"
	if t.modern {
		ttlName = "ttlMs"
	}
	check := func(s taskState, where string, raw string) {
		if !validTTL(s.TTL) {
			h.Failf("%s carries no valid %s (a number of milliseconds, or null): %s", where, ttlName, raw)
		}
		if !isTimestamp(s.CreatedAt) || !isTimestamp(s.LastUpdatedAt) {
			h.Failf("%s lacks an ISO 8601 createdAt or lastUpdatedAt: %s", where, raw)
		}
	}
	check(a, "CreateTaskResult", rawText(cm))
	obs := t.watch([]taskState{a}, 0, "while polling it at its pollInterval")
	for _, o := range obs[0] {
		s, _ := parseTask(json.RawMessage(extractResult(o.raw)), t.modern)
		check(s, "tasks/get", o.raw)
	}
	poll := "no pollInterval"
	if a.Poll > 0 {
		poll = "pollInterval " + a.Poll.String()
	}
	h.Notef("%s %s, %s; polled %d times to %s", ttlName, a.TTL, poll, len(obs[0]), obs[0][len(obs[0])-1].status)
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

func taskProgressStops(h *H) {
	taskCapable(h)
	var (
		c msgConn
		t *tasker
	)
	if h.Target().Transport == "http" {
		// Once its CreateTaskResult has ended the POST stream, a task's
		// progress can only come on the standalone GET stream, held open.
		hc := h.ConnectHTTP()
		m := &httpMsg{HConn: hc}
		m.openStandalone()
		c, t = m, httpTasker(h, hc, hc.W)
	} else {
		sc := h.Connect()
		c, t = stdioMsg{sc}, stdioTasker(h, sc)
	}
	_, crossStream := c.(*httpMsg)
	tokens := []jsonrpc.ID{jsonrpc.StringID("task-progress-cancelled"), jsonrpc.StringID("task-progress-control")}
	a, _ := t.createWith(tokens[0])
	b, _ := t.createWith(tokens[1])
	progressFor := func(tok jsonrpc.ID, after int) []clients.Message {
		var out []clients.Message
		for _, m := range progressSince(c, after+1) {
			if m.Env.ProgressToken == tok {
				out = append(out, m)
			}
		}
		return out
	}
	// Cancel the first task once it has shown it reports progress.
	deadline := time.Now().Add(h.Cfg().CallTimeout)
	for len(progressFor(tokens[0], -1)) == 0 {
		g, _ := t.get(a.ID, "while waiting for its first progress")
		if g.terminal() {
			h.Skip(fmt.Sprintf("the task sent no progress for its token before it was %s (progress is optional)", g.Status))
		}
		if time.Now().After(deadline) {
			h.Skip(fmt.Sprintf("the task sent no progress for its token within %s (progress is optional)", h.Cfg().CallTimeout))
		}
		h.Sleep(pollGap(g))
	}
	if m := t.cancel(a.ID); m.Env.Kind != jsonrpc.Response {
		h.Failf("tasks/cancel of the working task %s was rejected: %s", a.ID, rawText(m))
	}
	obs := t.watch([]taskState{a, b}, 2, "while watching its progress")
	for i, name := range []string{"the cancelled task", "the control task"} {
		for k, o := range obs[i] {
			if !(taskState{Status: o.status}).terminal() {
				continue
			}
			barrier := o.seq
			if crossStream && k+1 < len(obs[i]) {
				// Over HTTP the progress (GET stream) and the tasks/get
				// answers (their POSTs) are different streams: what the
				// server wrote before it answered may arrive just after.
				// The next poll's answer, a round trip later, is the barrier.
				barrier = obs[i][k+1].seq
			}
			if late := progressFor(tokens[i], barrier); len(late) > 0 {
				var raws []string
				for _, m := range late {
					raws = append(raws, rawText(m))
				}
				h.Failf("%d progress notification(s) for %s after tasks/get reported it %s: %s",
					len(late), name, o.status, strings.Join(raws, "; "))
			}
			break
		}
	}
	h.Notef("progress for the cancelled task: %d, all before it was reported %s; for the control: %d, all before it was reported %s",
		len(progressFor(tokens[0], -1)), obs[0][len(obs[0])-1].status, len(progressFor(tokens[1], -1)), obs[1][len(obs[1])-1].status)
}

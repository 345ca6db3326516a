package suites

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/protocol"
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
		v20251125: {Level: reports.Must, Spec: tasksLegacy,
			Clause: "Upon receiving a valid cancellation request, receivers SHOULD attempt to stop the task execution and MUST transition the task to cancelled status before sending the response."},
		v20260728: {Level: reports.Should, Spec: tasksModern, Source: reports.SourceReading,
			Clause: "Handle tasks/cancel: Acknowledge cancellation requests with an empty result. Honor them when possible, but cancellation is cooperative — the task may still reach a non-cancelled terminal status. (The extension page has no RFC 2119 keyword: mcp-conform's reading, WARN at most.)"},
	},
	Transports: []string{viaStdio, viaHTTP},
	Roles:      []string{"task"},
})

var checkTaskTerminalFinal = register(&Check{
	ID:    "TASK-TERMINAL-FINAL",
	Title: "a terminal task status never changes, even when the worker notices the cancellation only at its next checkpoint",
	How: "Creates a task and an uncancelled control task, cancels the first at once (mid-step), and polls both with " +
		"tasks/get at their pollInterval until the control has finished and a few polls more: from the first terminal " +
		"status tasks/get reports for either task, every later tasks/get must report the same (a cancelled task that " +
		"turns completed because its worker finished the step is the bug). 2025-11-25, when the task role declares failArguments: " +
		"a third task created with them, watched alike, gives the third terminal status (failed), so that every terminal status is " +
		"watched — the only statuses the valid paths do not leave (working and input_required may go to any status, an " +
		"unknown status is SCHEMA-VALID's). Without failArguments, completed and cancelled only.",
	Rules: map[string]Rule{
		v20251125: {Level: reports.Must, Spec: tasksLegacy,
			Clause: "Receivers MUST only transition tasks through the following valid paths: [...] Tasks with a completed, failed, or cancelled status are in a terminal state and MUST NOT transition to any other status [...] Once a task is cancelled, it MUST remain in cancelled status even if execution continues to completion or fails."},
		v20260728: {Level: reports.Should, Spec: tasksModern, Source: reports.SourceReading,
			Clause: "completed, failed, and cancelled are terminal — once reached, the task's state does not change. (The extension page has no RFC 2119 keyword: mcp-conform's reading, WARN at most.)"},
	},
	Transports: []string{viaStdio, viaHTTP},
	Roles:      []string{"task"},
})

var checkTaskCancelTerminalError = register(&Check{
	ID:    "TASK-CANCEL-TERMINAL-ERROR",
	Title: "tasks/cancel of a finished task: -32602 (2025-11-25); acknowledged with the status unchanged (2026-07-28)",
	How: "Creates a task, polls it to a terminal status, sends tasks/cancel for it, then tasks/get. 2025-11-25: the " +
		"cancel must be rejected with -32602 (Invalid params); both eras: the task's status must be unchanged afterwards.",
	Rules: map[string]Rule{
		v20251125: {Level: reports.Must, Spec: tasksLegacy,
			Clause: "Receivers MUST reject cancellation requests for tasks already in a terminal status (completed, failed, or cancelled) with error code -32602 (Invalid params)."},
		v20260728: {Level: reports.Should, Spec: tasksModern, Source: reports.SourceReading,
			Clause: "completed, failed, and cancelled are terminal — once reached, the task's state does not change (a tasks/cancel of a finished task is acknowledged, or rejected, and changes nothing). (The extension page has no RFC 2119 keyword: mcp-conform's reading, WARN at most.)"},
	},
	Transports: []string{viaStdio, viaHTTP},
	Roles:      []string{"task"},
})

var checkTaskSurvivesDisconnect = register(&Check{
	ID:    "TASK-SURVIVES-DISCONNECT",
	Title: "a task outlives the HTTP connection that created it: polled from a new connection, it runs to completion",
	How: "Creates a task over Streamable HTTP, closes every stream and connection of that client, then polls tasks/get " +
		"from a new client (2025-11-25: the same session) until the task is terminal: every poll must find it and it " +
		"must end completed, not cancelled nor deleted.",
	Rules: map[string]Rule{
		v20251125: {Level: reports.Should, Spec: tasksLegacy, Also: []string{"specification/2025-11-25/basic/transports.mdx"},
			Clause: "Tasks are durable state machines [...] [transports.mdx] Disconnection SHOULD NOT be interpreted as the client cancelling its request."},
		v20260728: {Level: reports.Should, Spec: tasksModern, Source: reports.SourceReading,
			Clause: "Crash resilience. A task ID is a durable handle. If the client disconnects or restarts, it can resume polling with the same ID. (The extension page has no RFC 2119 keyword: mcp-conform's reading, WARN at most.)"},
	},
	Transports: []string{viaHTTP},
	Roles:      []string{"task"},
})

var checkTaskTTLReported = register(&Check{
	ID:    "TASK-TTL-REPORTED",
	Title: "CreateTaskResult and tasks/get report the task's ttl (and timestamps); the harness polls at the reported pollInterval",
	How: "Creates a task and polls it to a terminal status at its pollInterval: the CreateTaskResult and every tasks/get " +
		"must carry the actual ttl (2025-11-25: ttl, 2026-07-28: ttlMs; a number, or null for unlimited), createdAt and " +
		"lastUpdatedAt; pollInterval is reported in the PASS reason when given.",
	Rules: map[string]Rule{
		v20251125: {Level: reports.Must, Spec: tasksLegacy,
			Clause: "Receivers MUST include a createdAt ISO 8601-formatted timestamp in all task responses to indicate when the task was created. Receivers MUST include a lastUpdatedAt ISO 8601-formatted timestamp in all task responses to indicate when the task was last updated. [...] Receivers MUST include the actual ttl duration (or null for unlimited) in tasks/get responses."},
		v20260728: {Level: reports.Should, Spec: tasksModern, Source: reports.SourceReading,
			Clause: "Return CreateTaskResult: When a request will be long-running, respond with resultType: \"task\" and a Task object containing a unique taskId, initial status, ttlMs, and pollIntervalMs. (Task: ttlMs: number | null; createdAt; lastUpdatedAt. The extension page has no RFC 2119 keyword: mcp-conform's reading, WARN at most.)"},
	},
	Transports: []string{viaStdio, viaHTTP},
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
		v20251125: {Level: reports.Must, Spec: "specification/2025-11-25/basic/utilities/progress.mdx",
			Clause: "Progress notifications for tasks MUST stop after the task reaches a terminal status (completed, failed, or cancelled)."},
	},
	Transports: []string{viaStdio, viaHTTP},
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
		define(checkTaskUnknownID, taskUnknownID)
		define(checkTaskResult, taskResult)
		define(checkTaskRequiredUnaugmented, taskRequiredUnaugmented)
		define(checkTaskCreatedWorking, taskCreatedWorking)
		define(checkTaskMetaIgnored, taskMetaIgnored)
		define(checkTaskStatusNoRelatedMeta, taskStatusNoRelatedMeta)
		define(checkTaskUnsupportedToolAugmented, taskUnsupportedToolAugmented) // task_support.go
		define(checkTaskGetNoSSE, taskGetNoSSE)                                 // task_http.go
		define(checkTaskProgressToken, taskProgressToken)                       // task_progress.go
		define(checkTaskCapabilityDeclared, taskCapabilityDeclared)             // task_support.go
		define(checkTaskUndeclaredNormal, taskUndeclaredNormal)                 // task_support.go
		define(checkTaskList, taskList)                                         // task_list.go
		define(checkTaskCreatePrompt, taskCreatePrompt)                         // task_create.go
		define(checkTaskIDEntropy, taskIDEntropy)                               // task_ids.go
		define(checkTaskAuthBound, taskAuthBound)                               // task_auth.go
		define(checkTaskFailedStatusMessage, taskFailedStatusMessage)           // task_failmsg.go
		define(checkTaskCancelStops, taskCancelStops)                           // task_stop.go
		define(checkTaskInputRequired, taskInputRequired)                       // task_input.go
	})
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
	watched, names := []taskState{a, b}, []string{"the cancelled task", "the control task"}
	if fail := h.Role("task").FailArguments; fail != nil && !t.modern {
		// The declared failArguments give the third terminal status,
		// failed (task_fail.go).
		c, _ := t.createOver("", fail)
		watched, names = append(watched, c), append(names, "the failing task (declared failArguments)")
	}
	obs := t.watch(watched, 3, "while watching for terminal statuses")
	for i, name := range names {
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
	failing := ""
	if len(obs) > 2 {
		failing = "; failing task: " + strings.Join(statuses(obs[2]), " → ")
	}
	h.Notef("cancelled task: %s; control: %s%s", strings.Join(statuses(obs[0]), " → "), strings.Join(statuses(obs[1]), " → "), failing)
}

func taskCancelTerminalError(h *H) {
	t := tasks(h)
	a, _ := t.create()
	obs := t.watch([]taskState{a}, 0, "while waiting for it to finish")
	final := obs[0][len(obs[0])-1].status
	m := t.cancel(a.ID)
	if !t.modern {
		if m.Env.Kind != jsonrpc.ErrorReply || m.Env.Error == nil || m.Env.Error.Code != jsonrpc.CodeInvalidParams {
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

// taskProgressConn connects for watching a task's progress: on Streamable
// HTTP with the standalone GET stream held open (once its CreateTaskResult
// has ended the POST stream, a task's progress can only come there).
func taskProgressConn(h *H) (msgConn, *tasker) {
	taskCapable(h)
	if h.Target().Via() == protocol.TransportHTTP {
		hc := h.ConnectHTTP()
		m := &httpMsg{HConn: hc}
		m.openStandalone()
		return m, httpTasker(h, hc, hc.W)
	}
	sc := h.Connect()
	return stdioMsg{sc}, stdioTasker(h, sc)
}

func taskProgressStops(h *H) {
	c, t := taskProgressConn(h)
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

package suites

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/reports"
)

// What a 2025-11-25 task's polling looks like on Streamable HTTP
// (registered with the other TASK checks in task.go's registerTask).

var checkTaskGetNoSSE = register(&Check{
	ID:    "TASK-GET-NO-SSE",
	Title: "tasks/get over Streamable HTTP is answered with one application/json body, not upgraded to an SSE stream",
	How: "Over Streamable HTTP, creates a task with the task role and polls it with tasks/get (each a POST that accepts both " +
		"application/json and text/event-stream, as every client POST must) at its pollInterval until it is terminal: every " +
		"answer should come as Content-Type application/json; a tasks/get answered on text/event-stream WARNs.",
	Rules: map[string]Rule{
		v20251125: {Level: reports.Should, Spec: tasksLegacy,
			Clause: "Where possible, servers SHOULD NOT upgrade to an SSE stream in response to a tasks/get request, as the client has indicated it wishes to poll for a result."},
	},
	Transports: []string{viaHTTP},
	Roles:      []string{"task"},
	Clauses:    []string{"task#37"},
})

// maxTaskGetPolls bounds the polls of TASK-GET-NO-SSE.
const maxTaskGetPolls = 40

func taskGetNoSSE(h *H) {
	taskCapable(h)
	c := h.ConnectHTTP()
	t := httpTasker(h, c, c.W)
	a, _ := t.create()
	var sse []string
	polls, status := 0, a.Status
	deadline := time.Now().Add(h.Cfg().CallTimeout)
	for polls < maxTaskGetPolls {
		polls++
		t.n++
		id := jsonrpc.StringID(fmt.Sprintf("task-%d", t.n))
		ctx, cancel := context.WithTimeout(h.Ctx(), h.Cfg().OpTimeout)
		call, err := c.W.Start(ctx, id, "tasks/get", map[string]any{"taskId": a.ID})
		var m clients.Message
		if err == nil {
			m, err = call.Wait(ctx)
		}
		cancel()
		if err != nil {
			h.FailServer("tasks/get (id %s) for task %s: no response within %s: %v%s", id, a.ID, h.Cfg().OpTimeout, err, c.ExitHint())
		}
		if call.IsSSE() {
			sse = append(sse, fmt.Sprintf("tasks/get %s (HTTP %d, Content-Type %q, stream %s)", id, call.Status(), call.Header().Get("Content-Type"), call.Stream()))
		}
		s, perr := parseTask(m.Env.Result, false)
		if m.Env.Kind != jsonrpc.Response || perr != nil {
			h.Notef("tasks/get %s answered %s: polling stopped", id, rawText(m))
			break
		}
		status = s.Status
		if s.terminal() || time.Now().After(deadline) {
			break
		}
		h.Sleep(pollGap(s))
	}
	if len(sse) > 0 {
		h.Failf("%d of %d tasks/get answered on an SSE stream instead of one application/json body: %s",
			len(sse), polls, strings.Join(sse, "; "))
	}
	h.Notef("%d tasks/get answered with application/json (the task went from %s to %s)", polls, a.Status, status)
}

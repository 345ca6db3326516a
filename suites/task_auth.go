package suites

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/reports"
)

// Whom a 2025-11-25 task belongs to when an authorization context is given
// (registered with the other TASK checks in task.go's registerTask).

var checkTaskAuthBound = register(&Check{
	ID:    "TASK-AUTH-BOUND",
	Title: "a task is bound to the authorization context that created it: another principal can neither get, read, cancel nor list it",
	How: "Needs the manifest's auth: header sets of two principals. Over Streamable HTTP, initializes one session as each " +
		"principal (its credential on every request), creates a task with the task role as the first and checks it can " +
		"tasks/get it. As the second principal, in its own session: tasks/get, tasks/cancel (when tasks.cancel is declared) " +
		"and, last, tasks/result for that taskId must each be rejected with a JSON-RPC error (any code: the spec names none " +
		"for another context's task), and tasks/list (when tasks.list is declared, every nextCursor followed) must not list " +
		"it. The first principal must still find it with tasks/get (and tasks/list) afterwards. Without two principals: SKIP.",
	Rules: map[string]Rule{
		v20251125: {Level: reports.Must, Spec: tasksLegacy,
			Clause: "When an authorization context is provided, receivers MUST bind tasks to said context. [...] If context-binding is available, receivers MUST reject tasks/get, tasks/result, and tasks/cancel requests for tasks that do not belong to the same authorization context as the requestor. For tasks/list requests, receivers MUST ensure the returned task list includes only tasks associated with the requestor's authorization context."},
	},
	Transports: []string{viaHTTP},
	Roles:      []string{"task"},
	Clauses:    []string{"task#33"},
})

// principalTasker initializes a new session whose every request carries
// creds (one principal's headers, from the manifest's auth:) and returns a
// tasker driving it, and the wire to close.
func principalTasker(h *H, c *HConn, creds map[string]string, who string) (*tasker, *clients.HTTPWire) {
	hd := http.Header{}
	for k, v := range creds {
		hd.Set(k, v)
	}
	w := clients.NewHTTPWire(c.Proxy.URL(), clients.HTTPOptions{ClientName: "mcp-conform", Header: hd})
	ctx, cancel := h.Op()
	defer cancel()
	if _, err := w.Negotiate(ctx, c.W.Session().Version); err != nil {
		_ = w.Close()
		h.Errorf("initialize a session as the %s principal (its auth: credential): %v%s", who, err, c.ExitHint())
	}
	return httpTasker(h, c, w), w
}

// listedTaskIDs follows tasks/list's nextCursor to the last page (at most
// taskListMaxPages) and returns the task ids listed; what a page that is
// not a tasks/list result says, when one is not.
func (t *tasker) listedTaskIDs() (map[string]bool, string) {
	ids := map[string]bool{}
	params := map[string]any{}
	for pages := 1; ; pages++ {
		m := t.exchange("tasks/list", params, t.h.Cfg().OpTimeout)
		var page taskListPage
		if m.Env.Kind != jsonrpc.Response || json.Unmarshal(m.Env.Result, &page) != nil {
			return ids, fmt.Sprintf("tasks/list (page %d) answered %s", pages, rawText(m))
		}
		for _, raw := range page.Tasks {
			if s, err := parseTask(raw, false); err == nil {
				ids[s.ID] = true
			}
		}
		if page.NextCursor == nil || *page.NextCursor == "" || pages >= taskListMaxPages {
			return ids, ""
		}
		params = map[string]any{"cursor": *page.NextCursor}
	}
}

func taskAuthBound(h *H) {
	if len(h.Target().Auth) < 2 {
		h.Skip("the target manifest declares no credentials for two principals (auth): another authorization context cannot be tried")
	}
	taskCapable(h)
	c := h.ConnectHTTP()
	caps := declaredTaskCaps(h)
	first, wa := principalTasker(h, c, h.Target().Auth[0], "first")
	defer wa.Close()
	second, wb := principalTasker(h, c, h.Target().Auth[1], "second")
	defer wb.Close()
	s, _ := first.create()
	first.get(s.ID, "by the principal that created it")
	var bad, refused []string
	reject := func(method string, blocks bool) {
		d := h.Cfg().OpTimeout
		if blocks {
			d = h.Cfg().CallTimeout
		}
		m := second.exchange(method, map[string]any{"taskId": s.ID}, d)
		if m.Env.Kind != jsonrpc.ErrorReply || m.Env.Error == nil {
			bad = append(bad, fmt.Sprintf("%s answered %s", method, rawText(m)))
			return
		}
		refused = append(refused, fmt.Sprintf("%s (%d)", method, m.Env.Error.Code))
	}
	reject("tasks/get", false)
	if caps.cancel {
		reject("tasks/cancel", false)
	}
	if caps.list {
		ids, broken := second.listedTaskIDs()
		switch {
		case broken != "":
			h.Failf("as the second principal, %s", broken)
		case ids[s.ID]:
			bad = append(bad, fmt.Sprintf("tasks/list listed it (among %d task(s))", len(ids)))
		default:
			refused = append(refused, fmt.Sprintf("tasks/list (%d other task(s) listed)", len(ids)))
		}
	}
	// Last: a server that serves it blocks until the task is terminal.
	reject("tasks/result", true)
	if len(bad) > 0 {
		h.Failf("task %s, created by the first principal, was served to the second principal (its own session and credential): %s; want each rejected, and the task left out of its tasks/list",
			s.ID, strings.Join(bad, "; "))
	}
	after, _ := first.get(s.ID, "by the principal that created it, after the second principal's requests")
	note := ""
	if caps.list {
		ids, broken := first.listedTaskIDs()
		if broken != "" {
			h.Failf("as the first principal, %s", broken)
		}
		if !ids[s.ID] {
			h.Failf("tasks/list of the principal that created task %s does not list it, though tasks/get finds it", s.ID)
		}
		note = " and tasks/list"
	}
	var not []string
	if !caps.cancel {
		not = append(not, "tasks/cancel (tasks.cancel not declared)")
	}
	if !caps.list {
		not = append(not, "tasks/list (tasks.list not declared)")
	}
	if len(not) > 0 {
		note += "; not sent: " + strings.Join(not, ", ")
	}
	h.Notef("the second principal was refused %s for task %s; the first still finds it (%s) with tasks/get%s",
		strings.Join(refused, ", "), s.ID, after.Status, note)
}

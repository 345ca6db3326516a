package suites

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/reports"
)

// taskListTasks is how many tasks TASK-LIST creates: enough that a server
// paging by two or more shows more than one page boundary.
const taskListTasks = 5

// taskListMaxPages bounds the pages TASK-LIST follows.
const taskListMaxPages = 100

// taskListMaxTasks bounds the tasks TASK-LIST creates for a declared page
// size (pageSize + 1, to need a second page).
const taskListMaxTasks = 25

var checkTaskList = register(&Check{
	ID:    "TASK-LIST",
	Title: "tasks/list, its nextCursor followed to the end, lists every task tasks/get finds, each once",
	How: fmt.Sprintf("On a server that declares tasks.list, creates %d tasks with the task role on one connection and polls them "+
		"to a terminal status (a terminal task changes no more, so the list cannot shift under the cursor), then sends tasks/list "+
		"and follows each nextCursor to the last page (at most %d pages). No task may be listed twice, and every created task that "+
		"tasks/get still finds must have been listed: a page without nextCursor while one of them was not yet listed, or a "+
		"cursor that passes over one, is the bug. When the task role declares pageSize (the manifest's tasks/list page size), "+
		"it creates pageSize+1 tasks (at least %d, at most %d) and WARNs a page that holds more than pageSize: the level of that "+
		"judgement comes from the declared page size (SHOULD use cursor-based pagination to limit the number of tasks returned). "+
		"Without pageSize a server listing every task in one page is not faulted. Without tasks.list: SKIP.", taskListTasks, taskListMaxPages, taskListTasks, taskListMaxTasks),
	Rules: map[string]Rule{
		v20251125: {Level: reports.Must, Spec: tasksLegacy,
			Clause: "Receivers SHOULD use cursor-based pagination to limit the number of tasks returned in a single response. Receivers MUST include a nextCursor in the response if more tasks are available. [...] If a task is retrievable via tasks/get for a requestor, it MUST be retrievable via tasks/list for that requestor."},
	},
	Transports: []string{viaStdio, viaHTTP},
	Roles:      []string{"task"},
	Clauses:    []string{"task#24", "task#25", "task#26"},
})

// taskListPage is one tasks/list result.
type taskListPage struct {
	Tasks      []json.RawMessage `json:"tasks"`
	NextCursor *string           `json:"nextCursor"`
}

func taskList(h *H) {
	t := tasks(h)
	if !declaredTaskCaps(h).list {
		h.Skip("the server does not declare tasks.list")
	}
	pageSize := h.Role("task").PageSize
	n := taskListTasks
	if pageSize > 0 {
		n = min(max(n, pageSize+1), taskListMaxTasks)
	}
	states := make([]taskState, 0, n)
	for range n {
		s, _ := t.create()
		states = append(states, s)
	}
	t.watch(states, 0, "before listing them")
	listed := map[string]int{} // task id -> page (1-based) that listed it
	pages, withCursor := 0, 0
	var oversize []string // pages larger than the declared pageSize
	params := map[string]any{}
	for {
		pages++
		m := t.exchange("tasks/list", params, h.Cfg().OpTimeout)
		if m.Env.Kind != jsonrpc.Response {
			h.Failf("tasks/list (page %d) answered %s", pages, rawText(m))
		}
		var page taskListPage
		if json.Unmarshal(m.Env.Result, &page) != nil || page.Tasks == nil {
			h.Failf("tasks/list (page %d) has no tasks array: %s", pages, rawText(m))
		}
		for _, raw := range page.Tasks {
			s, err := parseTask(raw, false)
			if err != nil {
				h.Failf("tasks/list (page %d) holds an entry that is not a task (%v): %s", pages, err, rawText(m))
			}
			if p, dup := listed[s.ID]; dup {
				h.Failf("following nextCursor, tasks/list listed task %s twice (pages %d and %d): each task is visited once: %s", s.ID, p, pages, rawText(m))
			}
			listed[s.ID] = pages
		}
		if pageSize > 0 && len(page.Tasks) > pageSize {
			oversize = append(oversize, fmt.Sprintf("page %d held %d", pages, len(page.Tasks)))
		}
		if page.NextCursor == nil || *page.NextCursor == "" {
			break
		}
		withCursor++
		if pages >= taskListMaxPages {
			h.Errorf("tasks/list still gave a nextCursor after %d pages", pages)
		}
		params = map[string]any{"cursor": *page.NextCursor}
	}
	var missing []string
	for _, s := range states {
		if _, ok := listed[s.ID]; ok {
			continue
		}
		g, gm := t.exchangeGet(s.ID)
		if gm.Env.Kind != jsonrpc.Response {
			continue // gone (expired or deleted): tasks/get does not find it either
		}
		missing = append(missing, fmt.Sprintf("%s (%s)", s.ID, g.Status))
	}
	if len(missing) > 0 {
		h.Failf("tasks/list, its nextCursor followed through %d page(s), the last without one, never listed %s, which tasks/get finds: a nextCursor must be given while more tasks are available, and a task tasks/get finds must be listed",
			pages, strings.Join(missing, ", "))
	}
	if len(oversize) > 0 {
		h.Warnf("the manifest declares a tasks/list page size of %d (task role pageSize), but %s task(s): receivers should use cursor-based pagination to limit the tasks of a response (the level comes from the declared page size)",
			pageSize, strings.Join(oversize, ", "))
	}
	declared := ""
	if pageSize > 0 {
		declared = fmt.Sprintf(", none over the declared pageSize %d", pageSize)
	}
	h.Notef("%d task(s) listed over %d page(s) (%d nextCursor followed), every one of the %d created, each once%s", len(listed), pages, withCursor, n, declared)
}

// exchangeGet sends tasks/get and returns its answer, an error included
// (get fails the check on one).
func (t *tasker) exchangeGet(id string) (taskState, clients.Message) {
	m := t.exchange("tasks/get", map[string]any{"taskId": id}, t.h.Cfg().OpTimeout)
	s, _ := parseTask(m.Env.Result, t.modern)
	return s, m
}

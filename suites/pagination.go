package suites

import (
	"fmt"
	"slices"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/reports"
)

const paginationPage = "specification/VERSION/server/utilities/pagination.mdx"

// The pagination checks, on tools/list (the one list every tool server
// has). Each declares the docs/CLAUSES.md ids it enforces (Clauses).
var (
	checkPaginationInvalidCursor = register(&Check{
		ID:    "PAGINATION-INVALID-CURSOR",
		Title: "a tools/list cursor the server never issued gets the error -32602",
		How: "Sends tools/list with a cursor the server never issued (a random string) and expects a JSON-RPC error with " +
			"code -32602; a result (a page served from a cursor the server cannot have made) or another code WARNs. Then " +
			"the barrier request.",
		Rules: sameRule(Rule{Level: reports.Should, Spec: paginationPage,
			Clause: "Servers SHOULD: [...] Handle invalid cursors gracefully [...] Invalid cursors SHOULD result in an error with code -32602 (Invalid params)."},
			"2026-07-28", "2025-11-25", "2025-06-18"),
		Transports: []string{"stdio", "http"},
		Clauses:    []string{"pag#2", "pag#3"},
		Limits:     map[string]string{"pag#2": "tools/list only", "pag#3": "tools/list only"},
	})
	checkPaginationWalk = register(&Check{
		ID:    "PAGINATION-WALK",
		Title: "following tools/list's nextCursor visits every tool once, and a cursor gives the same page again",
		How: "Follows nextCursor from the first page of tools/list to the last (at most 50 pages; a cursor given twice " +
			"FAILs the walk as endless), checks that no tool is listed on two pages, then asks for every cursor's page once " +
			"more: the same tools must come back. A server that returns its tools in one page: SKIP (nothing to follow).",
		Rules: sameRule(Rule{Level: reports.Should, Spec: paginationPage,
			Clause: "Servers SHOULD: Provide stable cursors [a cursor names a position in the list: following them visits each item once, and asking for a cursor again gives the same page]"},
			"2026-07-28", "2025-11-25", "2025-06-18"),
		Transports: []string{"stdio", "http"},
		Clauses:    []string{"pag#1"},
		Limits:     map[string]string{"pag#1": "tools/list only"},
	})
)

func registerPagination() {
	ginkgo.Describe("PAGINATION", ginkgo.Label("area:pagination"), func() {
		define(checkPaginationInvalidCursor, paginationInvalidCursor)
		define(checkPaginationWalk, paginationWalk)
	})
}

func paginationInvalidCursor(h *H) {
	recallToolsList(h)
	onEither(h, func(r rpc) {
		r.listPage("") // the server lists tools at all
		bogus := unique("mcp-conform-never-issued-cursor")
		m := r.call("tools/list", map[string]any{"cursor": bogus}, h.Cfg().OpTimeout)
		switch {
		case m.Env.Kind == jsonrpc.Response:
			h.Failf("tools/list with the cursor %q, which the server never issued, was answered with a page (id %s), not the error -32602", bogus, m.Env.ID)
		case errorCode(m.Env.Error) != jsonrpc.CodeInvalidParams:
			h.Failf("tools/list with the cursor %q, which the server never issued, got the error %s (id %s), want -32602", bogus, describeError(m.Env.Error), m.Env.ID)
		}
		r.ping("after an invalid cursor")
		h.Notef("an invalid cursor got -32602 (id %s)", m.Env.ID)
	})
}

func paginationWalk(h *H) {
	recallToolsList(h)
	onEither(h, func(r rpc) {
		pages := r.walkTools()
		if len(pages) == 1 {
			h.Skip(fmt.Sprintf("tools/list returned its %d tools in one page (no nextCursor): nothing to follow", len(pages[0].tools)))
		}
		seen := map[string]int{}
		for i, p := range pages {
			for _, t := range p.tools {
				if j, dup := seen[t.Name]; dup {
					h.Failf("tool %q is on page %d (id %s) and page %d: following nextCursor visited it twice", t.Name, j+1, pages[j].id, i+1)
				}
				seen[t.Name] = i
			}
		}
		for i, p := range pages[1:] {
			again := r.listPage(p.cursor)
			if a, b := toolNamesOf(p.tools), toolNamesOf(again.tools); !slices.Equal(a, b) {
				h.Failf("the cursor %q gave page %d as %v (id %s), asked again %v (id %s): the cursor is not stable", p.cursor, i+2, a, p.id, b, again.id)
			}
		}
		h.Notef("%d tools over %d pages, each once; every cursor gave the same page again", len(seen), len(pages))
	})
}

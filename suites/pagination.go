package suites

import (
	"fmt"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/reports"
)

const paginationPage = "specification/VERSION/server/utilities/pagination.mdx"

// The pagination checks, on tools/list (the one list every tool server
// has) and the other paginated lists the server declares
// (pagination_lists.go). Each declares the docs/CLAUSES.md ids it enforces (Clauses).
var (
	checkPaginationInvalidCursor = register(&Check{
		ID:    "PAGINATION-INVALID-CURSOR",
		Title: "a list cursor the server never issued gets the error -32602 (tools/list, and the prompts and resources lists it declares)",
		How: "Sends tools/list, and each of prompts/list, resources/list and resources/templates/list whose capability the " +
			"server declares (the paginated operations pagination.mdx names), with a cursor the server never issued (a random " +
			"string) and expects a JSON-RPC error with code -32602; a result (a page served from a cursor the server cannot have " +
			"made) or another code WARNs, each list named. Then the barrier request.",
		Rules: sameRule(Rule{Level: reports.Should, Spec: paginationPage,
			Clause: "Servers SHOULD: [...] Handle invalid cursors gracefully [...] Invalid cursors SHOULD result in an error with code -32602 (Invalid params)."},
			v20260728, v20251125, v20250618),
		Transports: []string{viaStdio, viaHTTP},
		Clauses:    []string{"pag#2", "pag#3"},
	})
	checkPaginationWalk = register(&Check{
		ID:    "PAGINATION-WALK",
		Title: "following a list's nextCursor visits every item once, and a cursor gives the same page again (tools/list, and the prompts and resources lists it declares)",
		How: "For tools/list, and each of prompts/list, resources/list and resources/templates/list whose capability the " +
			"server declares: follows nextCursor from the first page to the last (at most 50 pages; a cursor given twice " +
			"FAILs the walk as endless), checks that no item (by name, uri or uriTemplate) is listed on two pages (an item " +
			"listed twice within one page is noted, not judged: no cursor lies between the copies; TOOLS-NAMES judges a tool " +
			"name listed twice), then asks " +
			"for every cursor's page once more: the same items must come back. A declared list whose first page is refused is " +
			"noted and not judged. Every list in one page: SKIP (nothing to follow).",
		Rules: sameRule(Rule{Level: reports.Should, Spec: paginationPage,
			Clause: "Servers SHOULD: Provide stable cursors [a cursor names a position in the list: following them visits each item once, and asking for a cursor again gives the same page]"},
			v20260728, v20251125, v20250618),
		Transports: []string{viaStdio, viaHTTP},
		Clauses:    []string{"pag#1"},
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
		var bad []string
		judge := func(method string, m clients.Message, bogus string) {
			switch {
			case m.Env.Kind == jsonrpc.Response:
				bad = append(bad, fmt.Sprintf("%s with the cursor %q, which the server never issued, was answered with a page (id %s), not the error -32602", method, bogus, m.Env.ID))
			case errorCode(m.Env.Error) != jsonrpc.CodeInvalidParams:
				bad = append(bad, fmt.Sprintf("%s with the cursor %q, which the server never issued, got the error %s (id %s), want -32602", method, bogus, describeError(m.Env.Error), m.Env.ID))
			}
		}
		bogus := unique("mcp-conform-never-issued-cursor")
		first := r.call("tools/list", map[string]any{"cursor": bogus}, h.Cfg().OpTimeout)
		judge("tools/list", first, bogus)
		methods := []string{"tools/list"}
		for _, l := range declaredLists(r.sess.Capabilities) {
			bogus := unique("mcp-conform-never-issued-cursor")
			judge(l.method, r.call(l.method, map[string]any{"cursor": bogus}, h.Cfg().OpTimeout), bogus)
			methods = append(methods, l.method)
		}
		r.ping("after invalid cursors")
		if len(bad) > 0 {
			h.Failf("%s", strings.Join(bad, "; "))
		}
		if len(methods) == 1 {
			h.Notef("an invalid cursor got -32602 (id %s)", first.Env.ID)
			return
		}
		h.Notef("an invalid cursor got -32602 on %s", strings.Join(methods, ", "))
	})
}

func paginationWalk(h *H) {
	recallToolsList(h)
	onEither(h, func(r rpc) {
		var walked, single []string
		pages := r.walkTools()
		if len(pages) == 1 {
			single = append(single, fmt.Sprintf("tools/list (%d tools)", len(pages[0].tools)))
		} else {
			keys := make([][]string, len(pages))
			ids := make([]jsonrpc.ID, len(pages))
			for i, p := range pages {
				keys[i], ids[i] = toolNamesOf(p.tools), p.id
			}
			seen := visitedOnce(h, "tools/list", "name", keys, ids)
			for i, p := range pages[1:] {
				again := r.listPage(p.cursor)
				if a, b := toolNamesOf(p.tools), toolNamesOf(again.tools); !slices.Equal(a, b) {
					h.Failf("the cursor %q gave page %d as %v (id %s), asked again %v (id %s): the cursor is not stable", p.cursor, i+2, a, p.id, b, again.id)
				}
			}
			walked = append(walked, fmt.Sprintf("%d tools over %d pages", len(seen), len(pages)))
		}
		for _, l := range declaredLists(r.sess.Capabilities) {
			items, why := r.walkItems(l)
			switch {
			case why != "":
				h.Notef("not judged: %s", why)
				continue
			case len(items) == 1:
				single = append(single, fmt.Sprintf("%s (%d items)", l.method, len(items[0].keys)))
				continue
			}
			walkedOnce(h, r, l, items)
			walked = append(walked, fmt.Sprintf("%s: %d pages", l.method, len(items)))
		}
		switch {
		case len(walked) == 0 && len(single) == 1:
			h.Skip(fmt.Sprintf("tools/list returned its %d tools in one page (no nextCursor): nothing to follow", len(pages[0].tools)))
		case len(walked) == 0:
			h.Skip(fmt.Sprintf("every list came in one page (no nextCursor): %s: nothing to follow", strings.Join(single, ", ")))
		}
		h.Notef("%s, each item once; every cursor gave the same page again", strings.Join(walked, "; "))
	})
}

// walkedOnce judges the pages of l: no item on two pages, and every
// cursor's page the same when asked for again.
func walkedOnce(h *H, r rpc, l pagedList, pages []itemPage) {
	keys := make([][]string, len(pages))
	ids := make([]jsonrpc.ID, len(pages))
	for i, p := range pages {
		keys[i], ids[i] = p.keys, p.id
	}
	visitedOnce(h, l.method, "item", keys, ids)
	for i, p := range pages[1:] {
		again, why := r.itemPageOf(l, p.cursor)
		if why != "" {
			h.Failf("%s refused the cursor %q asked again: %s", l.method, p.cursor, why)
		}
		if !slices.Equal(p.keys, again.keys) {
			h.Failf("%s: the cursor %q gave page %d as %v (id %s), asked again %v (id %s): the cursor is not stable", l.method, p.cursor, i+2, p.keys, p.id, again.keys, again.id)
		}
	}
}

// visitedOnce judges the walk of one list, whose page i (answered with
// ids[i]) holds the items keys[i]: an item on two pages FAILs (following
// nextCursor visited it twice); an item listed twice within one page is
// not the cursors' doing and only noted (for tools/list, TOOLS-NAMES
// judges that names are unique, tl#7). It returns the page each item was
// first seen on.
func visitedOnce(h *H, method, what string, keys [][]string, ids []jsonrpc.ID) map[string]int {
	seen := map[string]int{}
	var repeated []string
	for i, page := range keys {
		for _, k := range page {
			j, dup := seen[k]
			switch {
			case dup && j == i:
				repeated = append(repeated, fmt.Sprintf("%q (page %d, id %s)", k, i+1, ids[i]))
				continue
			case dup:
				h.Failf("%s: the %s %q is on page %d (id %s) and page %d (id %s): following nextCursor visited it twice", method, what, k, j+1, ids[j], i+1, ids[i])
			}
			seen[k] = i
		}
	}
	if len(repeated) > 0 {
		h.Notef("%s repeats within one page the %s %s (not a cursor's doing, not judged here)", method, what, strings.Join(repeated, ", "))
	}
	return seen
}

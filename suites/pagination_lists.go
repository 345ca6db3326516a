package suites

import (
	"encoding/json"
	"fmt"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// The paginated lists besides tools/list that the pagination checks judge
// when the server declares their capability: pagination.mdx, "Operations
// Supporting Pagination", names resources/list, resources/templates/list,
// prompts/list and tools/list, the same four in every version.

// pagedList is one paginated list method: the capability that declares
// it, the result member holding its items and the member naming an item.
type pagedList struct {
	method, capability, items, key string
}

var otherPagedLists = []pagedList{
	{method: "prompts/list", capability: "prompts", items: "prompts", key: "name"},
	{method: "resources/list", capability: "resources", items: "resources", key: "uri"},
	{method: "resources/templates/list", capability: "resources", items: "resourceTemplates", key: "uriTemplate"},
}

// declaredLists returns the lists of otherPagedLists whose capability the
// server declares.
func declaredLists(caps json.RawMessage) []pagedList {
	var c map[string]json.RawMessage
	_ = json.Unmarshal(caps, &c)
	var out []pagedList
	for _, l := range otherPagedLists {
		if _, ok := c[l.capability]; ok {
			out = append(out, l)
		}
	}
	return out
}

// itemPage is one page of a paginated list: the keys of its items, in
// order.
type itemPage struct {
	cursor string
	id     jsonrpc.ID
	keys   []string
	next   string
}

// itemPageOf asks for one page of l; an error answer gives ok false and
// the reason.
func (r rpc) itemPageOf(l pagedList, cursor string) (p itemPage, why string) {
	var params map[string]any
	if cursor != "" {
		params = map[string]any{"cursor": cursor}
	}
	m := r.call(l.method, params, r.h.Cfg().OpTimeout)
	if m.Env.Kind != jsonrpc.Response {
		return p, fmt.Sprintf("%s (cursor %q) answered with the error %s (id %s)", l.method, cursor, describeError(m.Env.Error), m.Env.ID)
	}
	var res map[string]json.RawMessage
	var items []map[string]json.RawMessage
	if json.Unmarshal(m.Env.Result, &res) != nil || json.Unmarshal(res[l.items], &items) != nil {
		r.h.Failf("%s (id %s) gave a result without a readable %s array: %s", l.method, m.Env.ID, l.items, clip(m.Raw))
	}
	p = itemPage{cursor: cursor, id: m.Env.ID}
	if raw, ok := res["nextCursor"]; ok {
		_ = json.Unmarshal(raw, &p.next)
	}
	for _, it := range items {
		var k string
		_ = json.Unmarshal(it[l.key], &k)
		p.keys = append(p.keys, k)
	}
	return p, ""
}

// walkItems follows l's nextCursor from its first page to its last; a
// cursor given twice, more than maxToolPages pages, or a later page
// refused FAILs. A refused first page gives no pages and the reason.
func (r rpc) walkItems(l pagedList) ([]itemPage, string) {
	p, why := r.itemPageOf(l, "")
	if why != "" {
		return nil, why
	}
	var pages []itemPage
	seen := map[string]bool{}
	for {
		pages = append(pages, p)
		if p.next == "" {
			return pages, ""
		}
		if seen[p.next] {
			r.h.Failf("%s gave the nextCursor %q twice (page %d, id %s): following it never ends", l.method, p.next, len(pages), p.id)
		}
		if len(pages) >= maxToolPages {
			r.h.Failf("%s still gave a nextCursor after %d pages", l.method, maxToolPages)
		}
		seen[p.next] = true
		next := p.next
		if p, why = r.itemPageOf(l, next); why != "" {
			r.h.Failf("%s refused the nextCursor %q it had issued: %s", l.method, next, why)
		}
	}
}

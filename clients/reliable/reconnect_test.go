package reliable

import (
	"fmt"
	"testing"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

func TestReconnectPlan(t *testing.T) {
	n := 10
	r := Reconnector{
		NewID:  func() jsonrpc.ID { n++; return jsonrpc.IntID(int64(n)) },
		Filter: map[string]any{"filter": "open"},
		List:   []string{"tools/list"},
	}
	p := r.Plan([]Op{
		{Method: "tools/call", Params: map[string]any{"name": "search"}, Safe: true},
		{Method: "tools/call", Params: map[string]any{"name": "open_ticket"}, Safe: false},
	})
	if len(p.Reissue) != 1 || p.Reissue[0].ID != jsonrpc.IntID(11) || p.Reissue[0].Params["filter"] != "open" || p.Reissue[0].Params["name"] != "search" {
		t.Fatalf("reissue %+v: want the safe call, new id, filter re-sent", p.Reissue)
	}
	if len(p.Refetch) != 1 || p.Refetch[0].Method != "tools/list" || p.Refetch[0].ID != jsonrpc.IntID(12) {
		t.Fatalf("refetch %+v", p.Refetch)
	}
	if len(p.Unresolved) != 1 || p.Unresolved[0].Params["name"] != "open_ticket" {
		t.Fatalf("the unsafe mutation must be left unresolved, never replayed: %+v", p)
	}
}

func TestDedupe(t *testing.T) {
	type item struct{ ID, V string }
	held := []item{{"a", "1"}, {"b", "1"}}
	fetched := []item{{"b", "2"}, {"c", "1"}, {"a", "2"}, {"c", "2"}}
	got := Dedupe(held, fetched, func(i item) string { return i.ID })
	if fmt.Sprint(got) != "[{a 2} {b 2} {c 2}]" {
		t.Fatalf("got %v", got)
	}
}

package suites

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/reports"
)

// TOOLS-LIST-CHANGED: a server that declared tools.listChanged announces a
// change of its tool list. The listChanged role is a tool whose call adds a
// tool to tools/list or removes one, for every client of the server; the
// checks that call it call it a second time, so that a toggle leaves the
// list as they found it.

// methodToolsListChanged is the notification of a changed tool list.
const methodToolsListChanged = "notifications/tools/list_changed"

// listChangedClause is tools.mdx's List Changed Notification in the 2025
// versions.
const listChangedClause = "When the list of available tools changes, servers that declared the listChanged capability SHOULD send a notification: {\"method\": \"notifications/tools/list_changed\"}"

var checkToolsListChanged = register(&Check{
	ID:    "TOOLS-LIST-CHANGED",
	Title: "a server that declared tools.listChanged sends notifications/tools/list_changed when its tool list changes",
	How: "With the listChanged role and tools.listChanged declared in the handshake's capabilities (else SKIP). 2026-07-28 " +
		"first opens a subscriptions/listen stream with {toolsListChanged: true} and waits for its acknowledgment (an error " +
		"answer: SKIP); 2025 over HTTP holds the session's standalone GET stream open when the server offers one. Lists every " +
		"tool, calls the role, lists again: the same set is SKIP (the role's call changed nothing to announce). Then " +
		"notifications/tools/list_changed must have arrived, on any stream of the connection (the call's own, the GET " +
		"stream, the listen stream), within the exchange timeout of the call's answer; none WARNs. Another client is watched too: " +
		"before the call a second connection is opened (2026-07-28: with its own subscriptions/listen stream for toolsListChanged; " +
		"2025 over HTTP: a second session holding its standalone GET stream) and lists the tools; after the call it lists them " +
		"again, and when its list changed as well (the same server: an HTTP server's other session or listen stream, a WebSocket " +
		"server's other connection; over stdio none is opened: a stdio server has one client) the " +
		"notification must reach it too, on any of its streams, within the exchange timeout; none WARNs. A second connection " +
		"with nothing to hear it on (a 2025 session the server offers no GET stream, a stateless one) is noted, not judged. " +
		"The role is called once more afterwards, to restore the list.",
	Rules: merge(
		sameRule(Rule{Level: reports.Should, Spec: toolsLegacy, Clause: listChangedClause}, legacyVersions...),
		map[string]Rule{v20260728: {Level: reports.Should, Spec: toolsModern, Also: []string{subscriptionsModern},
			Clause: "When the list of available tools changes, servers that declared the listChanged capability SHOULD send a notification to clients that have opened a subscriptions/listen stream with toolsListChanged: true"}},
	),
	Transports: []string{viaStdio, viaHTTP, viaWebSocket},
	Roles:      []string{"listChanged"},
	Clauses:    []string{"tl#2"},
})

func toolsListChanged(h *H) {
	c := connectMsg(h)
	requireListChanged(h, c)
	modern := c.session().Era == clients.EraModern
	if modern {
		ack := openListen(h, c, jsonrpc.StringID(unique("tools-listen")), map[string]any{"toolsListChanged": true})
		h.Notef("subscriptions/listen acknowledged: %s", clip(ack.Raw))
	}
	other := openOtherListener(h, c) // tools_listchanged_other.go
	before := listToolNames(h, c)
	from, otherFrom := c.length(), other.length()
	callListChangedRole(h, c, "the listChanged role's call")
	after := listToolNames(h, c)
	changed := !sameToolSet(before, after)
	var note clients.Message
	ok := false
	if changed {
		note, ok = c.waitFirst(from, h.Cfg().OpTimeout, isToolsListChanged)
	}
	var otherMiss string
	if changed {
		otherMiss = other.judge(h, otherFrom)
	}
	restoreToolList(h, c, before)
	switch {
	case !changed:
		h.Skip(fmt.Sprintf("the listChanged role's call did not change tools/list (%d tools before and after): no change to announce", len(before)))
	case !ok:
		h.Failf("the listChanged role's call changed tools/list (%s) but no %s arrived on any stream of the connection %s",
			toolSetDiff(before, after), methodToolsListChanged, c.silence(h.Cfg().OpTimeout))
	case otherMiss != "":
		h.Failf("%s", otherMiss)
	}
	h.Notef("tools/list changed (%s); %s", toolSetDiff(before, after), clip(note.Raw))
}

// declaresToolsListChanged reports whether capabilities hold
// tools.listChanged: true.
func declaresToolsListChanged(caps json.RawMessage) bool {
	var c struct {
		Tools *struct {
			ListChanged bool `json:"listChanged"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(caps, &c)
	return c.Tools != nil && c.Tools.ListChanged
}

// requireListChanged skips a check on a server that does not declare
// tools.listChanged.
func requireListChanged(h *H, c msgConn) {
	if !declaresToolsListChanged(c.session().Capabilities) {
		h.Skip("the server does not declare tools.listChanged (capabilities " + clip(c.session().Capabilities) + "): it promises no notification of a change")
	}
}

// isToolsListChanged matches notifications/tools/list_changed.
func isToolsListChanged(m clients.Message) bool {
	return m.Env.Kind == jsonrpc.Notification && m.Env.Method == methodToolsListChanged
}

// callListChangedRole calls the listChanged role and waits for its answer;
// an error answer is an ERROR (the manifest names a tool that cannot play
// the role).
func callListChangedRole(h *H, c msgConn, what string) clients.Message {
	id := jsonrpc.StringID(unique("list-change"))
	m := c.await(startRequest(h, c, id, "tools/call", roleParams(h.Role("listChanged"), nil)), what)
	if m.Env.Kind != jsonrpc.Response || toolError(m) {
		h.Errorf("%s (tool %s) failed: %s", what, h.Role("listChanged").Tool, clip(m.Raw))
	}
	return m
}

// toolError reports whether a tools/call result has isError: true.
func toolError(m clients.Message) bool {
	var r struct {
		IsError bool `json:"isError"`
	}
	_ = json.Unmarshal(m.Env.Result, &r)
	return r.IsError
}

// restoreToolList calls the listChanged role once more, so that a toggle
// leaves the server's list as the check found it, and notes whether it did.
func restoreToolList(h *H, c msgConn, before []string) {
	callListChangedRole(h, c, "the listChanged role's second call (to restore the list)")
	if again := listToolNames(h, c); sameToolSet(before, again) {
		h.Notef("a second call of the role restored the list (%d tools)", len(again))
	} else {
		h.Notef("a second call of the role left the list changed (%s)", toolSetDiff(before, again))
	}
}

// listToolNames lists every tool (following nextCursor) and returns their
// names; an error answer ends the check in ERROR.
func listToolNames(h *H, c msgConn) []string {
	var names []string
	params := map[string]any{}
	for range maxToolPages {
		id := jsonrpc.StringID(unique("tools-list"))
		m := c.await(startRequest(h, c, id, "tools/list", params), "tools/list")
		if m.Env.Kind != jsonrpc.Response {
			h.Errorf("tools/list was answered %s", clip(m.Raw))
		}
		var page struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if err := json.Unmarshal(m.Env.Result, &page); err != nil {
			h.Errorf("tools/list result: %v: %s", err, clip(m.Raw))
		}
		for _, t := range page.Tools {
			names = append(names, t.Name)
		}
		if page.NextCursor == "" {
			return names
		}
		params = map[string]any{"cursor": page.NextCursor}
	}
	h.Errorf("tools/list: more than %d pages", maxToolPages)
	return nil
}

func sameToolSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// toolSetDiff says which tools one list has and the other lacks.
func toolSetDiff(before, after []string) string {
	var added, removed []string
	for _, n := range after {
		if !slices.Contains(before, n) {
			added = append(added, n)
		}
	}
	for _, n := range before {
		if !slices.Contains(after, n) {
			removed = append(removed, n)
		}
	}
	var parts []string
	if len(added) > 0 {
		parts = append(parts, "added "+strings.Join(added, ", "))
	}
	if len(removed) > 0 {
		parts = append(parts, "removed "+strings.Join(removed, ", "))
	}
	if len(parts) == 0 {
		return "the same set"
	}
	return strings.Join(parts, "; ")
}

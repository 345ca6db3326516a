package suites

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcp-conform/mcp-conform/reports"
)

// TOOLS-EMBEDDED-RESOURCES: a server whose tool results embed resources
// declares the resources capability (tools.mdx, "Embedded Resources", the
// same sentence in every version; registered with the other TOOLS checks
// in tools_schema.go).
var checkToolsEmbeddedResources = register(&Check{
	ID:    "TOOLS-EMBEDDED-RESOURCES",
	Title: "a server whose tool results embed resources declares the resources capability",
	How: "Reads the capabilities of the initialize result (2025) or server/discover result (2026-07-28): a server that " +
		"declares resources passes at once. Otherwise lists every tool and calls those it may call without side effects — " +
		"the manifest's structured role (tool and arguments), and every tool annotated readOnlyHint: true (a task-only tool " +
		"is left out), called with {} when its inputSchema accepts it, else with arguments built from the schema (a value of its " +
		"declared type, the first of an enum, for each required property: \"mcp-conform\", 1, false, [], {}) when the compiled " +
		"schema accepts them (a tool no such arguments fit is noted, not called). A successful result whose content holds an embedded " +
		"resource (a block of type \"resource\") WARNs, the tool and the block named. No such tool, or no successful " +
		"result to look at: SKIP.",
	Rules: merge(
		sameRule(Rule{Level: reports.Should, Spec: toolsLegacy, Clause: embeddedResourceClause}, v20251125, v20250618),
		map[string]Rule{v20260728: {Level: reports.Should, Spec: toolsModern, Clause: embeddedResourceClause}},
	),
	Transports: []string{viaStdio, viaHTTP},
	Clauses:    []string{"tl#10"},
})

const embeddedResourceClause = "Servers that use embedded resources SHOULD implement the resources capability"

// safeCall is a tool a check may call without side effects, with its
// arguments and why it was picked.
type safeCall struct {
	name string
	args map[string]any
	why  string
}

// safeCalls picks, among tools, those a check may call without side
// effects: the manifest's structured role, and every tool annotated
// readOnlyHint: true (not task-only), called with {} when its inputSchema
// accepts it, else with a value of its declared type (the first of an
// enum) for each required property when the schema accepts those.
func safeCalls(h *H, tools []listedTool) []safeCall {
	var out []safeCall
	role, hasRole := h.Target().Roles["structured"]
	for _, t := range tools {
		switch {
		case hasRole && role.Tool == t.Name:
			out = append(out, safeCall{t.Name, role.Arguments, "the structured role"})
		case t.isReadOnly() && !t.taskOnly() && acceptsEmpty(t.Def.InputSchema):
			out = append(out, safeCall{t.Name, map[string]any{}, "read-only, takes {}"})
		case t.isReadOnly() && !t.taskOnly():
			if args, ok := validArguments(t.Def.InputSchema); ok { // tools_embedded_args.go
				out = append(out, safeCall{t.Name, args, "read-only, called with " + mustJSON(args)})
			} else {
				h.Notef("tool %s: read-only, but no arguments built from its inputSchema satisfy it: not called", t.Name)
			}
		}
	}
	return out
}

// declaresResources reports whether the server's capabilities hold
// resources.
func declaresResources(caps json.RawMessage) bool {
	var c map[string]json.RawMessage
	_ = json.Unmarshal(caps, &c)
	_, ok := c["resources"]
	return ok
}

func toolsEmbeddedResources(h *H) {
	recallToolsList(h)
	onEither(h, func(r rpc) {
		if declaresResources(r.sess.Capabilities) {
			h.Notef("the server declares the resources capability: it may embed resources")
			return
		}
		calls := safeCalls(h, allTools(r.walkTools()))
		if len(calls) == 0 {
			h.Skip("no tool can be called safely: none is annotated readOnlyHint: true with an inputSchema that {} or arguments built from it satisfy, and the manifest declares no structured role ({tool, arguments})")
		}
		looked := 0
		var bad []string
		for _, c := range calls {
			m := r.call("tools/call", map[string]any{"name": c.name, "arguments": c.args}, h.Cfg().CallTimeout)
			if parseOutcome(m).Failed() {
				h.Notef("tool %s (%s) answered id %s with an error: not looked at", c.name, c.why, m.Env.ID)
				continue
			}
			looked++
			var res struct {
				Content []json.RawMessage `json:"content"`
			}
			_ = json.Unmarshal(m.Env.Result, &res)
			if b, ok := embeddedResource(res.Content); ok {
				bad = append(bad, fmt.Sprintf("tool %s (%s): its result (id %s) embeds the resource %s", c.name, c.why, m.Env.ID, clip(b)))
			}
		}
		if looked == 0 {
			h.Skip("no call of a tool it may call safely gave a successful result to look at")
		}
		if len(bad) > 0 {
			h.Warnf("the server declares no resources capability (%s), yet %s", clip(r.sess.Capabilities), strings.Join(bad, "; "))
		}
		h.Notef("no resources capability, and no embedded resource in the results of %d safe calls", looked)
	})
}

// embeddedResource is the first content block of type "resource".
func embeddedResource(content []json.RawMessage) (json.RawMessage, bool) {
	for _, raw := range content {
		var b struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(raw, &b) == nil && b.Type == "resource" {
			return raw, true
		}
	}
	return nil, false
}

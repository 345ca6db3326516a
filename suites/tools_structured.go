package suites

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/mcp-conform/mcp-conform/reports"
)

// TOOLS-STRUCTURED-TEXT: a tool result with structuredContent repeats it,
// serialized, in a TextContent block (tools.mdx, "Structured Content", the
// same sentence in every version; registered with the other TOOLS checks
// in tools_schema.go).
var checkToolsStructuredText = register(&Check{
	ID:    "TOOLS-STRUCTURED-TEXT",
	Title: "a tool result with structuredContent also returns the serialized JSON in a TextContent block",
	How: "Calls the tools TOOLS-OUTPUT-SCHEMA calls — the manifest's structured role, and every tool with an outputSchema " +
		"annotated readOnlyHint: true whose inputSchema accepts {} (called with {}; a task-only tool is left out). Each " +
		"successful result that carries structuredContent must also hold, in content, a text block whose text parses as " +
		"JSON equal to the structuredContent (the same JSON value: spacing and member order are free); none WARNs, the " +
		"tool and its content named. An error, an isError result or a result without structuredContent is not judged " +
		"(TOOLS-OUTPUT-SCHEMA judges a missing one). No such tool, or no result to judge: SKIP.",
	Rules: merge(
		sameRule(Rule{Level: reports.Should, Spec: toolsLegacy, Clause: structuredTextClause}, v20251125, v20250618),
		map[string]Rule{v20260728: {Level: reports.Should, Spec: toolsModern, Clause: structuredTextClause}},
	),
	Transports: []string{viaStdio, viaHTTP},
	Clauses:    []string{"tl#8"},
	Limits:     map[string]string{"tl#8": "the tools it may call safely only: the structured role, read-only tools with an outputSchema that take {}"},
})

const structuredTextClause = "For backwards compatibility, a tool that returns structured content SHOULD also return the serialized JSON in a TextContent block."

func toolsStructuredText(h *H) {
	recallToolsList(h)
	onEither(h, func(r rpc) {
		targets := structuredTargets(h, allTools(r.walkTools()))
		if len(targets) == 0 {
			h.Skip(noStructuredTarget)
		}
		judged := 0
		var bad []string
		for _, tg := range targets {
			m := r.call("tools/call", map[string]any{"name": tg.tool.Name, "arguments": tg.args}, h.Cfg().CallTimeout)
			if parseOutcome(m).Failed() {
				h.Notef("tool %s (%s) answered id %s with an error: not judged", tg.tool.Name, tg.why, m.Env.ID)
				continue
			}
			var res struct {
				Content    []json.RawMessage `json:"content"`
				Structured json.RawMessage   `json:"structuredContent"`
			}
			_ = json.Unmarshal(m.Env.Result, &res)
			if len(res.Structured) == 0 || string(res.Structured) == "null" {
				h.Notef("tool %s (%s): no structuredContent in its result (id %s): not judged", tg.tool.Name, tg.why, m.Env.ID)
				continue
			}
			judged++
			if !repeatsAsText(res.Content, res.Structured) {
				bad = append(bad, fmt.Sprintf("tool %s (%s): its result (id %s) has the structuredContent %s but no text block holding that JSON; content: %s",
					tg.tool.Name, tg.why, m.Env.ID, clip(res.Structured), clip(mustRaw(res.Content))))
				continue
			}
			h.Notef("tool %s (%s): structuredContent repeated as text", tg.tool.Name, tg.why)
		}
		if judged == 0 {
			h.Skip("no call of a tool with an outputSchema gave a result with structuredContent to judge")
		}
		if len(bad) > 0 {
			h.Warnf("%s", strings.Join(bad, "; "))
		}
	})
}

// repeatsAsText reports whether one text block of content holds JSON equal
// to structured.
func repeatsAsText(content []json.RawMessage, structured json.RawMessage) bool {
	var want any
	if json.Unmarshal(structured, &want) != nil {
		return false
	}
	for _, raw := range content {
		var b struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(raw, &b) != nil || b.Type != "text" {
			continue
		}
		var got any
		dec := json.NewDecoder(bytes.NewReader([]byte(b.Text)))
		if dec.Decode(&got) != nil || dec.More() {
			continue
		}
		if reflect.DeepEqual(got, want) {
			return true
		}
	}
	return false
}

func mustRaw(v any) json.RawMessage { b, _ := json.Marshal(v); return b }

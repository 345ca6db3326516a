package suites

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcp-conform/mcp-conform/internal/harness"
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
		"(TOOLS-OUTPUT-SCHEMA judges a missing one). Then, passively, every tools/call result carrying structuredContent " +
		"that any check of the run received on this transport and version is judged alike (a task-augmented call, an " +
		"error, an isError result, a message the proxy wrote and the body of an HTTP error status are left out); one " +
		"without the text block WARNs the check, the check run and tool named, and the reason says how many results were " +
		"judged in how many check runs. No result to judge, its own or another check's: SKIP.",
	Rules: merge(
		sameRule(Rule{Level: reports.Should, Spec: toolsLegacy, Clause: structuredTextClause}, v20251125, v20250618),
		map[string]Rule{v20260728: {Level: reports.Should, Spec: toolsModern, Clause: structuredTextClause}},
	),
	Transports: []string{viaStdio, viaHTTP},
	Clauses:    []string{"tl#8"},
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
// to structured (the harness judges every other check's results alike).
func repeatsAsText(content []json.RawMessage, structured json.RawMessage) bool {
	return harness.StructuredRepeated(content, structured)
}

// The passive half of both checks: every tools/call result any check of
// the run receives is judged too, and folded into these checks' results
// when the report is built (internal/harness/structured.go).
func init() { harness.StructuredChecks(checkToolsOutputSchema, checkToolsStructuredText) }

func mustRaw(v any) json.RawMessage { b, _ := json.Marshal(v); return b }

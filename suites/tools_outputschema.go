package suites

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mcp-conform/mcp-conform/internal/schema"
)

// listedOutputSchemasValid is TOOLS-OUTPUT-SCHEMA's judgement of basic#12
// on every tool of tools/list, called or not (2025-11-25 and 2026-07-28,
// whose basic/index.mdx says "Schemas MUST be valid according to their
// declared or default dialect"): each outputSchema is compiled as
// TOOLS-INPUT-SCHEMA compiles an inputSchema, and one that its dialect's
// meta-schema rejects FAILs the check, every such tool named. A dialect the
// library does not know, or a $ref to another document, is noted, not
// judged.
func listedOutputSchemasValid(h *H, tools []listedTool) {
	var bad, unjudged []string
	n := 0
	for _, t := range tools {
		raw := t.Def.OutputSchema
		if len(raw) == 0 || string(raw) == "null" {
			continue
		}
		n++
		if _, err := schema.CompileTool(raw); err != nil {
			if errors.Is(err, schema.ErrCannotJudge) {
				unjudged = append(unjudged, fmt.Sprintf("%s (%s)", t.Name, oneLine(err)))
				continue
			}
			bad = append(bad, fmt.Sprintf("%s: outputSchema %s is not a valid JSON Schema of its dialect: %s", t.Name, clip(raw), oneLine(err)))
		}
	}
	if len(unjudged) > 0 {
		h.Notef("outputSchemas not judged: %s", strings.Join(unjudged, "; "))
	}
	if len(bad) > 0 {
		h.Failf("%d of %d listed outputSchemas: %s", len(bad), n, strings.Join(bad, "; "))
	}
	if n > 0 {
		h.Notef("%d listed outputSchemas valid", n-len(unjudged))
	}
}

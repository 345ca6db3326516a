package suites

import (
	"encoding/json"

	"github.com/mcp-conform/mcp-conform/internal/schema"
)

// validArguments builds arguments that satisfy a tool's inputSchema (one
// that compiles): a value of its declared type (the first of an enum) for
// each required property (sampleValue, tools_input_validated.go), kept only
// when the compiled schema accepts the whole set.
func validArguments(raw json.RawMessage) (map[string]any, bool) {
	sch, err := schema.CompileTool(raw)
	if err != nil {
		return nil, false
	}
	var shape inputSchemaShape
	_ = json.Unmarshal(raw, &shape)
	args := map[string]any{}
	for _, p := range shape.Required {
		v, ok := sampleValue(shape.Properties[p].Type, shape.Properties[p].Enum)
		if !ok {
			return nil, false
		}
		args[p] = v
	}
	b, _ := json.Marshal(args)
	return args, schema.ValidateJSON(sch, b) == nil
}

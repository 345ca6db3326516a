package suites

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcp-conform/mcp-conform/internal/schema"
	"github.com/mcp-conform/mcp-conform/protocol"
)

// TOOLS-INPUT-VALIDATED's choice of calls (tl#11, "Servers MUST validate
// all tool inputs"): every tool it may call without side effects, each
// with every invalid argument set built from its inputSchema.

// maxInvalidCalls bounds the calls of one run of TOOLS-INPUT-VALIDATED (a
// server listing hundreds of tools); the note says when it was reached.
const maxInvalidCalls = 200

// invalidCall is one tools/call whose arguments fail the tool's inputSchema.
type invalidCall struct {
	tool string
	args map[string]any
	what string // the arguments, in words
	// header: the wrongly typed property is marked x-mcp-header, so that
	// over 2026-07-28 HTTP its value is mirrored in an Mcp-Param header
	// and a JSON-RPC error (HeaderMismatch) may refuse the request before
	// the tool sees it: not a classification to WARN about.
	header bool
}

// safeInputTarget is a tool TOOLS-INPUT-VALIDATED may call: the structured
// role's tool (with its arguments, valid by the manifest's word), or a tool
// annotated readOnlyHint: true that is not task-only.
type safeInputTarget struct {
	tool listedTool
	base map[string]any // valid arguments to break one at a time (nil: none known)
}

// safeInputTargets picks the tools of the list the check may call with
// arguments that fail their inputSchema: a server that does not validate
// then runs nothing harmful.
func safeInputTargets(h *H, tools []listedTool) []safeInputTarget {
	role, hasRole := h.Target().Roles["structured"]
	var out []safeInputTarget
	for _, t := range tools {
		if t.taskOnly() || len(t.Def.InputSchema) == 0 {
			continue
		}
		switch {
		case hasRole && role.Tool == t.Name:
			out = append(out, safeInputTarget{t, role.Arguments})
		case t.isReadOnly():
			out = append(out, safeInputTarget{tool: t})
		}
	}
	return out
}

// inputSchemaShape is the part of an inputSchema the invalid arguments are
// built from: its required properties and each property's type and enum.
type inputSchemaShape struct {
	Required   []string `json:"required"`
	Properties map[string]struct {
		Type   any    `json:"type"`
		Enum   []any  `json:"enum"`
		Header string `json:"x-mcp-header"`
	} `json:"properties"`
}

// invalidCalls builds, for one tool whose inputSchema compiled, every
// argument set that fails it: a valid base (the role's arguments, else {}
// when the schema accepts it, else a value of its declared type for each
// required property) without each required property in turn, and the base
// with each typed property (by name) given a value of another JSON type.
// Every set is confirmed invalid by the compiled schema; a set the schema
// accepts is not sent.
func invalidCalls(t safeInputTarget, sch *jsonschema.Schema) []invalidCall {
	var shape inputSchemaShape
	_ = json.Unmarshal(t.tool.Def.InputSchema, &shape)
	valid := func(args map[string]any) bool {
		b, _ := json.Marshal(args)
		return schema.ValidateJSON(sch, b) == nil
	}
	base := t.base
	if base == nil || !valid(base) {
		base = map[string]any{}
		for _, p := range shape.Required {
			if v, ok := sampleValue(shape.Properties[p].Type, shape.Properties[p].Enum); ok {
				base[p] = v
			}
		}
	}
	baseValid := valid(base)
	var out []invalidCall
	if len(shape.Required) > 0 {
		if !baseValid && !valid(map[string]any{}) {
			out = append(out, invalidCall{tool: t.tool.Name, args: map[string]any{}, what: fmt.Sprintf("no arguments, where it requires %v", shape.Required)})
		}
		if baseValid {
			for _, p := range shape.Required {
				args := without(base, p)
				if !valid(args) {
					out = append(out, invalidCall{tool: t.tool.Name, args: args, what: fmt.Sprintf("%s without the required %s", mustJSON(base), p)})
				}
			}
		}
	}
	props := make([]string, 0, len(shape.Properties))
	for p := range shape.Properties {
		props = append(props, p)
	}
	sort.Strings(props)
	for _, p := range props {
		typ, _ := shape.Properties[p].Type.(string)
		wrong, ok := wrongTypeValue(typ)
		if !ok {
			continue
		}
		args := map[string]any{p: wrong}
		if baseValid {
			args = with(base, p, wrong)
		}
		if !valid(args) {
			out = append(out, invalidCall{t.tool.Name, args, fmt.Sprintf("%s (declared %s) given %s", p, typ, mustJSON(wrong)), shape.Properties[p].Header != ""})
		}
	}
	return out
}

// wrongTypeValue is a JSON value not of the JSON Schema type typ.
func wrongTypeValue(typ string) (any, bool) {
	switch typ {
	case "string":
		return 12345, true
	case "integer", "number", "boolean", "array", "object":
		return "mcp-conform: not of type " + typ, true
	}
	return nil, false
}

// sampleValue is a value of the declared type (the first of an enum), for a
// required property of a base argument set; it is kept only when the whole
// base validates.
func sampleValue(typ any, enum []any) (any, bool) {
	if len(enum) > 0 {
		return enum[0], true
	}
	t, _ := typ.(string)
	switch t {
	case "string":
		return "mcp-conform", true
	case "integer", "number":
		return 1, true
	case "boolean":
		return false, true
	case "array":
		return []any{}, true
	case "object":
		return map[string]any{}, true
	}
	return nil, false
}

// without is args less the key k (a copy).
func without(args map[string]any, k string) map[string]any {
	out := make(map[string]any, len(args))
	for key, v := range args {
		if key != k {
			out[key] = v
		}
	}
	return out
}

// with is args with k set to v (a copy).
func with(args map[string]any, k string, v any) map[string]any {
	out := without(args, k)
	out[k] = v
	return out
}

func toolsInputValidated(h *H) {
	recallToolsList(h)
	onEither(h, func(r rpc) {
		tools := allTools(r.walkTools())
		var calls []invalidCall
		for _, t := range safeInputTargets(h, tools) {
			sch, err := schema.CompileTool(t.tool.Def.InputSchema)
			if err != nil {
				h.Notef("tool %s: inputSchema not compiled (%s): not called", t.tool.Name, oneLine(err))
				continue
			}
			calls = append(calls, invalidCalls(t, sch)...)
		}
		if len(calls) == 0 {
			h.Skip("no tool the check may call safely (annotated readOnlyHint: true, or the structured role's) has an inputSchema that arguments can be built to fail (a required property, or a typed one)")
		}
		if len(calls) > maxInvalidCalls {
			h.Notef("%d invalid argument sets built; the first %d are sent", len(calls), maxInvalidCalls)
			calls = calls[:maxInvalidCalls]
		}
		strict := !protocol.Version(h.Version()).Before(protocol.V20251125)
		var ran, protocolErrs []string
		for _, c := range calls {
			m := r.call("tools/call", map[string]any{"name": c.tool, "arguments": c.args}, h.Cfg().CallTimeout)
			o := parseOutcome(m)
			switch {
			case o.IsError:
				h.Notef("tools/call %s with %s: a tool execution error (isError), id %s", c.tool, c.what, m.Env.ID)
			case o.RPCError && c.header:
				h.Notef("tools/call %s with %s: the JSON-RPC error %d, id %s (the parameter is marked x-mcp-header: the request may be refused for its header)", c.tool, c.what, errorCode(m.Env.Error), m.Env.ID)
			case o.RPCError && strict:
				protocolErrs = append(protocolErrs, fmt.Sprintf("tools/call %s with %s: the JSON-RPC error %d (id %s)", c.tool, c.what, errorCode(m.Env.Error), m.Env.ID))
			case o.RPCError:
				h.Notef("tools/call %s with %s: a JSON-RPC error, id %s", c.tool, c.what, m.Env.ID)
			default:
				ran = append(ran, fmt.Sprintf("tools/call %s with %s, which fail its inputSchema, ran: a successful result (id %s)", c.tool, c.what, m.Env.ID))
			}
		}
		r.ping("after the invalid calls")
		if len(ran) > 0 {
			h.Failf("%d of %d calls with invalid arguments ran, where servers MUST validate all tool inputs: %s",
				len(ran), len(calls), strings.Join(ran, "; "))
		}
		if len(protocolErrs) > 0 {
			h.Warnf("%d of %d calls with invalid arguments were refused with a JSON-RPC error, not a tool execution error (isError: true), "+
				"where tools.mdx %s lists input validation errors among tool execution errors: %s", len(protocolErrs), len(calls), h.Version(), strings.Join(protocolErrs, "; "))
		}
		h.Notef("%d calls with invalid arguments, every one refused", len(calls))
	})
}

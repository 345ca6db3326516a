// Package draft drafts a target manifest for an MCP server the user did not
// write: it lists the server's tools and proposes, from their annotations
// and schemas, which tool plays each role the checks need (slow, mutation
// with its probe, lookup, task, flood, silent), confirms what it may by
// calling tools (read-only ones only, unless told otherwise), and writes
// the YAML with a comment per role saying why it was chosen and what to
// check by hand. It also says which checks of the catalog the draft
// unlocks and which still SKIP, and why.
//
// The pieces: Connect starts or dials the target; ListTools reads every
// page of tools/list; Propose is the heuristics, a pure function of the
// tool list; Confirm calls candidates through a Caller that refuses any
// tool not annotated readOnlyHint: true unless calls of every tool were
// allowed; Render writes the YAML; Unlocks compares role sets with the
// catalog.
package draft

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Tool is one entry of tools/list, as the heuristics read it.
type Tool struct {
	Name        string
	Title       string
	Description string
	// ReadOnly, Idempotent and Destructive are the annotations' hints;
	// their *Set twins say whether the server gave them at all.
	ReadOnly, ReadOnlySet       bool
	Idempotent, IdempotentSet   bool
	Destructive, DestructiveSet bool
	// TaskSupport is execution.taskSupport ("", "forbidden", "optional",
	// "required").
	TaskSupport string
	// Input is the input schema's properties, in name order; Output the
	// output schema's (nil without an output schema).
	Input  []Prop
	Output []Prop
	// Raw is the tool as the server listed it.
	Raw json.RawMessage
}

// Prop is one property of an object schema.
type Prop struct {
	Name        string
	Type        string // the JSON Schema type ("string", "integer", ...); the first non-null of a list
	Description string
	Required    bool
	Enum        []any
	Default     any
	HasDefault  bool
	Minimum     *float64
	Maximum     *float64
	MinLength   *int
	MaxLength   *int
	Format      string
	Pattern     string
}

// ParseTools decodes the tools of a tools/list result.
func ParseTools(raw []json.RawMessage) ([]Tool, error) {
	var out []Tool
	for i, r := range raw {
		t, err := parseTool(r)
		if err != nil {
			return nil, fmt.Errorf("tools/list entry %d: %w", i, err)
		}
		out = append(out, t)
	}
	return out, nil
}

func parseTool(raw json.RawMessage) (Tool, error) {
	var w struct {
		Name        string `json:"name"`
		Title       string `json:"title"`
		Description string `json:"description"`
		Annotations struct {
			Title       string `json:"title"`
			ReadOnly    *bool  `json:"readOnlyHint"`
			Idempotent  *bool  `json:"idempotentHint"`
			Destructive *bool  `json:"destructiveHint"`
		} `json:"annotations"`
		Execution struct {
			TaskSupport string `json:"taskSupport"`
		} `json:"execution"`
		Input  json.RawMessage `json:"inputSchema"`
		Output json.RawMessage `json:"outputSchema"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return Tool{}, err
	}
	if w.Name == "" {
		return Tool{}, fmt.Errorf("a tool without a name: %s", clip(raw))
	}
	t := Tool{Name: w.Name, Title: w.Title, Description: w.Description, TaskSupport: w.Execution.TaskSupport, Raw: raw}
	if t.Title == "" {
		t.Title = w.Annotations.Title
	}
	if b := w.Annotations.ReadOnly; b != nil {
		t.ReadOnly, t.ReadOnlySet = *b, true
	}
	if b := w.Annotations.Idempotent; b != nil {
		t.Idempotent, t.IdempotentSet = *b, true
	}
	if b := w.Annotations.Destructive; b != nil {
		t.Destructive, t.DestructiveSet = *b, true
	}
	t.Input = props(w.Input)
	if len(w.Output) > 0 && string(w.Output) != "null" {
		t.Output = props(w.Output)
		if t.Output == nil {
			t.Output = []Prop{}
		}
	}
	return t, nil
}

// props reads the properties of an object schema (nil when it has none or
// is not an object).
func props(raw json.RawMessage) []Prop {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	var out []Prop
	for name, pr := range s.Properties {
		var p struct {
			Type        json.RawMessage `json:"type"`
			Description string          `json:"description"`
			Enum        []any           `json:"enum"`
			Const       any             `json:"const"`
			Default     json.RawMessage `json:"default"`
			Minimum     *float64        `json:"minimum"`
			Maximum     *float64        `json:"maximum"`
			MinLength   *int            `json:"minLength"`
			MaxLength   *int            `json:"maxLength"`
			Format      string          `json:"format"`
			Pattern     string          `json:"pattern"`
		}
		_ = json.Unmarshal(pr, &p)
		prop := Prop{Name: name, Type: schemaType(p.Type), Description: p.Description, Required: slices.Contains(s.Required, name),
			Enum: p.Enum, Minimum: p.Minimum, Maximum: p.Maximum, MinLength: p.MinLength, MaxLength: p.MaxLength,
			Format: p.Format, Pattern: p.Pattern}
		if p.Const != nil && prop.Enum == nil {
			prop.Enum = []any{p.Const}
		}
		if len(p.Default) > 0 {
			var d any
			if json.Unmarshal(p.Default, &d) == nil {
				prop.Default, prop.HasDefault = d, true
			}
		}
		out = append(out, prop)
	}
	slices.SortFunc(out, func(a, b Prop) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// schemaType reads "type": a string, or the first non-null of a list.
func schemaType(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var l []string
	if json.Unmarshal(raw, &l) == nil {
		for _, t := range l {
			if t != "null" {
				return t
			}
		}
	}
	return ""
}

// Prop returns the input property named name.
func (t Tool) Prop(name string) (Prop, bool) {
	for _, p := range t.Input {
		if p.Name == name {
			return p, true
		}
	}
	return Prop{}, false
}

// ReadOnlyHinted reports whether the tool is annotated readOnlyHint: true,
// the only tools a draft calls unless told it may call any.
func (t Tool) ReadOnlyHinted() bool { return t.ReadOnlySet && t.ReadOnly }

// numeric reports whether a schema type holds a number.
func numeric(typ string) bool { return typ == "integer" || typ == "number" }

// text is the tool's name, title and description, lower case, for word
// matches.
func (t Tool) text() string {
	return strings.ToLower(t.Name + " " + t.Title + " " + t.Description)
}

// norm lower-cases a name and drops everything but letters and digits:
// "operation_key", "operationKey" and "Operation-Key" read alike.
func norm(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// clip shortens raw JSON for an error message.
func clip(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

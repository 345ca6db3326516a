package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ErrCannotJudge marks a tool schema whose validity this package cannot
// decide: a $schema dialect it does not know, a $ref to a document it may not
// fetch, a pattern Go's regexp engine cannot read. It is not a verdict on the
// schema.
var ErrCannotJudge = errors.New("cannot judge")

// toolSchemaURL is where a tool's schema is registered with the compiler;
// nothing is ever fetched from it.
const toolSchemaURL = "https://schema.mcp-conform.invalid/tool.json"

// CompileTool compiles a JSON Schema a tool declares (inputSchema,
// outputSchema) in its declared dialect ($schema), JSON Schema 2020-12 when
// it declares none (basic/index.mdx, "JSON Schema Usage", 2025-11-25 and
// 2026-07-28). The compiler validates the schema against its dialect's
// meta-schema: an error that wraps ErrCannotJudge says the schema could not
// be judged; any other error says it is not a valid schema of its dialect.
// No URL is ever loaded.
func CompileTool(raw json.RawMessage) (*jsonschema.Schema, error) {
	if v, ok := toolSchemas.Load(string(raw)); ok {
		c := v.(compiledTool)
		return c.sch, c.err
	}
	sch, err := compileTool(raw)
	toolSchemas.Store(string(raw), compiledTool{sch, err})
	return sch, err
}

// toolSchemas caches CompileTool by schema text: a check compiles the same
// schemas many times (a compiled Schema is safe for concurrent use).
var toolSchemas sync.Map // string → compiledTool

type compiledTool struct {
	sch *jsonschema.Schema
	err error
}

func compileTool(raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	c.UseRegexpEngine(lenientRegexp)
	if err := c.AddResource(toolSchemaURL, doc); err != nil {
		return nil, err
	}
	sch, err := c.Compile(toolSchemaURL)
	if err == nil {
		return sch, nil
	}
	var (
		load     *jsonschema.LoadURLError
		scheme   *jsonschema.UnsupportedURLSchemeError
		draft    *jsonschema.UnsupportedDraftError
		regex    *jsonschema.InvalidRegexError
		vocab    *jsonschema.UnsupportedVocabularyError
		metaURL  *jsonschema.InvalidMetaSchemaURLError
		metaLoop *jsonschema.MetaSchemaCycleError
	)
	switch {
	case errors.As(err, &load), errors.As(err, &scheme), errors.As(err, &draft), errors.As(err, &regex),
		errors.As(err, &vocab), errors.As(err, &metaURL), errors.As(err, &metaLoop):
		return nil, fmt.Errorf("%w: %v", ErrCannotJudge, err)
	}
	return nil, err
}

// ValidateJSON validates a JSON document against a compiled schema.
func ValidateJSON(sch *jsonschema.Schema, raw json.RawMessage) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return sch.Validate(inst)
}

// noLoader refuses every URL: a tool schema is judged on its own text.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("mcp-conform loads no schema from %s", url)
}

// lenientRegexp compiles a pattern with Go's regexp; an ECMA-262 pattern
// that engine cannot read (a lookahead, a backreference) is not held against
// the schema: it matches everything, so no string is judged by it.
func lenientRegexp(s string) (jsonschema.Regexp, error) {
	if re, err := regexp.Compile(s); err == nil {
		return re, nil
	}
	return unjudgedPattern(s), nil
}

type unjudgedPattern string

func (p unjudgedPattern) String() string          { return string(p) }
func (p unjudgedPattern) MatchString(string) bool { return true }

// Package schema validates the messages an MCP server sends against the JSON
// Schema of the negotiated protocol version (the specification's own
// schema.json, vendored unchanged under spec/), with
// github.com/santhosh-tekuri/jsonschema/v6.
//
// A message is classified as a request, a notification, a result or an
// error, and validated against the definition the schema gives it: a request
// or notification against the XxxRequest / XxxNotification definition whose
// "method" const is its method, a result against the result definition of
// the method of the request it answers, an error against the JSON-RPC error
// response (and, in 2026-07-28, against the definition of its code). The
// method table is read from the schema itself (see Method and Pairing).
// The JSON-RPC rules the schema does not express, or expresses only in
// part, are checked too and carry the CLAUSES.md id they break (basic#2,
// basic#3, basic#6, basic#8, basic#10, and the 2026-07-28 error-code rules
// basic#14, basic#15, basic#16).
//
// Each version's schema is compiled once per process, on first use, and a
// Validator is safe for concurrent use.
package schema

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

//go:embed spec/*/schema.json
var specFS embed.FS

// versions are the protocol versions with a vendored schema, newest first.
var versions = []string{"2026-07-28", "2025-11-25", "2025-06-18"}

// Versions lists the protocol versions with a vendored schema, newest first.
func Versions() []string { return slices.Clone(versions) }

// Raw returns the vendored schema.json of version, byte for byte.
func Raw(version string) ([]byte, error) {
	if !slices.Contains(versions, version) {
		return nil, fmt.Errorf("schema: no schema for protocol version %q (have %s)", version, strings.Join(versions, ", "))
	}
	return specFS.ReadFile("spec/" + version + "/schema.json")
}

// baseURL is where the vendored documents are registered with the compiler;
// nothing is ever fetched from it.
const baseURL = "https://schema.mcp-conform.invalid/"

// Validator validates messages against one protocol version's schema. It is
// safe for concurrent use.
type Validator struct {
	version string
	doc     *document
	docURL  string
	methods map[string]*Method
	codes   map[int64]errorDef
	// targets are the compiled schemas, by key (see the target* helpers).
	targets map[string]*jsonschema.Schema
	// generic envelope definitions of this version.
	requestDef, notificationDef, resultDef, errorDef string
}

var (
	cacheMu sync.Mutex
	cache   = map[string]*onceValidator{}
)

type onceValidator struct {
	once sync.Once
	v    *Validator
	err  error
}

// For returns the validator of a protocol version, compiling its schema on
// the first call for that version (once per process; later and concurrent
// calls share the result).
func For(version string) (*Validator, error) {
	cacheMu.Lock()
	ov, ok := cache[version]
	if !ok {
		ov = &onceValidator{}
		cache[version] = ov
	}
	cacheMu.Unlock()
	ov.once.Do(func() { ov.v, ov.err = compile(version) })
	return ov.v, ov.err
}

// Version is the protocol version the validator checks.
func (v *Validator) Version() string { return v.version }

// Methods returns the method table read from the schema, sorted by name.
func (v *Validator) Methods() []Method {
	out := make([]Method, 0, len(v.methods))
	for _, m := range v.methods {
		out = append(out, *m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Method returns the schema's entry for a method name.
func (v *Validator) Method(name string) (Method, bool) {
	m, ok := v.methods[name]
	if !ok {
		return Method{}, false
	}
	return *m, true
}

// Targets is the number of compiled message schemas.
func (v *Validator) Targets() int { return len(v.targets) }

func compile(version string) (*Validator, error) {
	raw, err := Raw(version)
	if err != nil {
		return nil, err
	}
	doc, err := parseDocument(version, raw)
	if err != nil {
		return nil, err
	}
	methods, err := doc.methods()
	if err != nil {
		return nil, err
	}
	v := &Validator{
		version: version, doc: doc, docURL: baseURL + version + "/schema.json",
		methods: methods, codes: doc.errorCodes(), targets: map[string]*jsonschema.Schema{},
		requestDef: "JSONRPCRequest", notificationDef: "JSONRPCNotification",
		resultDef: "JSONRPCResultResponse", errorDef: "JSONRPCErrorResponse",
	}
	if doc.defs["JSONRPCResultResponse"] == nil { // 2025-06-18
		v.resultDef, v.errorDef = "JSONRPCResponse", "JSONRPCError"
	}
	for _, d := range []string{v.requestDef, v.notificationDef, v.resultDef, v.errorDef} {
		if doc.defs[d] == nil {
			return nil, fmt.Errorf("schema %s: no %s definition", version, d)
		}
	}
	instance, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", version, err)
	}
	c := jsonschema.NewCompiler()
	// Format assertions on in every version: the library asserts them for
	// draft-07 (2025-06-18) whatever is asked, and treats them as annotations
	// for 2020-12; asserting everywhere makes a "uri" field mean the same in
	// the three versions.
	c.AssertFormat()
	if err := c.AddResource(v.docURL, instance); err != nil {
		return nil, fmt.Errorf("schema %s: %w", version, err)
	}
	specs := v.targetSpecs()
	keys := make([]string, 0, len(specs))
	for k := range specs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		loc := v.docURL + specs[k].ref
		if specs[k].wrapper != nil {
			loc = baseURL + version + "/msg/" + k + ".json"
			if err := c.AddResource(loc, specs[k].wrapper); err != nil {
				return nil, fmt.Errorf("schema %s: %s: %w", version, k, err)
			}
		}
		sch, err := c.Compile(loc)
		if err != nil {
			return nil, fmt.Errorf("schema %s: compiling %s: %w", version, k, err)
		}
		v.targets[k] = sch
	}
	return v, nil
}

// targetSpec is one message schema: a definition of the document (ref) or
// a small wrapper document combining the generic envelope with a
// definition.
type targetSpec struct {
	ref     string
	wrapper map[string]any
}

// Target keys.
func keyMessage(def string) string         { return "msg." + def }
func keyResult(def string) string          { return "result." + def }
func keyError(def string) string           { return "error." + def }
func keyGeneric(def string) string         { return "generic." + def }
func (v *Validator) ref(def string) string { return v.docURL + v.doc.defRef(def) }

func (v *Validator) targetSpecs() map[string]targetSpec {
	out := map[string]targetSpec{}
	wrap := func(parts ...any) map[string]any {
		return map[string]any{"$schema": v.doc.dialect, "allOf": parts}
	}
	refTo := func(def string) map[string]any { return map[string]any{"$ref": v.ref(def)} }
	member := func(name, def string) map[string]any {
		return map[string]any{"type": "object", "required": []any{name}, "properties": map[string]any{name: refTo(def)}}
	}
	for _, d := range []string{v.requestDef, v.notificationDef, v.resultDef, v.errorDef} {
		out[keyGeneric(d)] = targetSpec{ref: v.doc.defRef(d)}
	}
	results := map[string]bool{}
	for _, m := range v.methods {
		switch {
		case m.Envelope:
			out[keyMessage(m.Definition)] = targetSpec{ref: v.doc.defRef(m.Definition)}
		case m.Kind == KindRequest:
			out[keyMessage(m.Definition)] = targetSpec{wrapper: wrap(refTo(v.requestDef), refTo(m.Definition))}
		default:
			out[keyMessage(m.Definition)] = targetSpec{wrapper: wrap(refTo(v.notificationDef), refTo(m.Definition))}
		}
		for _, r := range []string{m.Result, m.TaskResult, m.InputRequired} {
			if r != "" {
				results[r] = true
			}
		}
	}
	for r := range results {
		out[keyResult(r)] = targetSpec{wrapper: wrap(refTo(v.resultDef), member("result", r))}
	}
	for _, e := range v.codes {
		if e.response {
			out[keyError(e.name)] = targetSpec{ref: v.doc.defRef(e.name)}
		} else {
			out[keyError(e.name)] = targetSpec{wrapper: wrap(refTo(v.errorDef), member("error", e.name))}
		}
	}
	return out
}

// validate runs one compiled target over a decoded instance and flattens
// the library's error tree into violations.
func (v *Validator) validate(key string, inst any) []Violation {
	sch := v.targets[key]
	if sch == nil {
		return []Violation{{Complaint: "internal: no compiled schema " + key}}
	}
	err := sch.Validate(inst)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Violation{{Complaint: err.Error()}}
	}
	var out []Violation
	v.flatten(ve, &out, "")
	return out
}

// schemaLocation shortens the library's absolute keyword location to a
// fragment of the vendored document ("#/$defs/Tool/properties/name/type"),
// or "wrapper" for the small combining documents.
func (v *Validator) schemaLocation(abs string) string {
	if rest, ok := strings.CutPrefix(abs, v.docURL); ok {
		return rest
	}
	if strings.HasPrefix(abs, baseURL) {
		if i := strings.Index(abs, "#"); i >= 0 {
			return "(message" + abs[i:] + ")"
		}
	}
	return abs
}

var printer = message.NewPrinter(language.English)

// flatten turns the library's error tree into one violation per failing
// keyword. A failed anyOf/oneOf (no branch matched) is reported through the
// branch that came closest (fewest failing keywords), named in Branch.
func (v *Validator) flatten(e *jsonschema.ValidationError, out *[]Violation, branch string) {
	switch k := e.ErrorKind.(type) {
	case *kind.AnyOf:
		v.closest(e, "anyOf", out)
		return
	case *kind.OneOf:
		if len(k.Subschemas) == 0 && len(e.Causes) > 0 {
			v.closest(e, "oneOf", out)
			return
		}
	}
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			v.flatten(c, out, branch)
		}
		return
	}
	loc := e.SchemaURL
	for _, tok := range e.ErrorKind.KeywordPath() {
		loc += "/" + strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
	}
	*out = append(*out, Violation{
		Pointer:        pointer(e.InstanceLocation),
		SchemaLocation: v.schemaLocation(loc),
		Complaint:      e.ErrorKind.LocalizedString(printer),
		Branch:         branch,
	})
}

func (v *Validator) closest(e *jsonschema.ValidationError, kw string, out *[]Violation) {
	var best []Violation
	bestName := ""
	for _, c := range e.Causes {
		var leaves []Violation
		v.flatten(c, &leaves, "")
		if best == nil || len(leaves) < len(best) {
			best, bestName = leaves, v.branchName(c)
		}
	}
	note := fmt.Sprintf("no branch of %s %s matched; closest of %d: %s", kw, v.schemaLocation(e.SchemaURL), len(e.Causes), bestName)
	for _, l := range best {
		if l.Branch == "" {
			l.Branch = note
		}
		*out = append(*out, l)
	}
}

// branchName names an anyOf branch by the definition it refers to.
func (v *Validator) branchName(c *jsonschema.ValidationError) string {
	url := c.SchemaURL
	if r, ok := c.ErrorKind.(*kind.Reference); ok {
		url = r.URL
	} else if len(c.Causes) == 1 {
		if r, ok := c.Causes[0].ErrorKind.(*kind.Reference); ok {
			url = r.URL
		}
	}
	loc := v.schemaLocation(url)
	if i := strings.LastIndex(loc, "/"); i >= 0 && strings.HasPrefix(loc, "#/") {
		return loc[i+1:]
	}
	return loc
}

// pointer renders instance location tokens as a JSON pointer (RFC 6901).
func pointer(tokens []string) string {
	var sb strings.Builder
	for _, t := range tokens {
		sb.WriteByte('/')
		sb.WriteString(strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	return sb.String()
}

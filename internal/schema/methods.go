package schema

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Pairing says how the result definition of a request method was found.
type Pairing string

// The pairing rules, tried in this order for every definition named
// <Base>Request whose "method" property is a const:
const (
	// PairResponse: the schema has <Base>ResultResponse, a whole JSON-RPC
	// response for that method (2026-07-28); the definition its "result"
	// refers to is the result. When "result" is a union of InputRequiredResult
	// and one other definition (tools/call, prompts/get, resources/read), the
	// other one is the result and InputRequiredResult the result of a
	// response whose resultType is "input_required" (basic/index.mdx,
	// ResultType): the union alone would let any object with a resultType
	// pass as an InputRequiredResult.
	PairResponse Pairing = "response"
	// PairName: the schema has <Base>Result; the response is the generic
	// result envelope with "result" validated against it.
	PairName Pairing = "name"
	// PairEmpty: the schema has no result definition named after the
	// request; the method is one of emptyResultMethods, whose result the
	// specification pages and schema.ts type as EmptyResult.
	PairEmpty Pairing = "empty"
)

// emptyResultMethods are the methods whose result is EmptyResult: the
// schema's JSON has no definition that names them (schema.ts says so only in
// prose), so the pairing is written down here. TestEveryMethodIsPaired fails
// when an entry is unused or when the schema gains a <Base>Result for one.
var emptyResultMethods = map[string]bool{
	"ping":                  true,
	"logging/setLevel":      true,
	"resources/subscribe":   true,
	"resources/unsubscribe": true,
}

// Method is what a version's schema says of one method.
type Method struct {
	// Name is the method string, e.g. "tools/call".
	Name string
	// Kind is KindRequest or KindNotification.
	Kind Kind
	// Definition is the definition whose method const is Name, e.g.
	// "CallToolRequest".
	Definition string
	// Envelope is true when Definition describes the whole JSON-RPC message
	// (it has a "jsonrpc" property: 2025-11-25, 2026-07-28); false when it
	// describes only method and params (2025-06-18), so that the message is
	// validated against the generic JSONRPCRequest or JSONRPCNotification
	// too.
	Envelope bool
	// FromServer and FromClient say whether the ServerRequest /
	// ServerNotification or ClientRequest / ClientNotification union lists
	// Definition. 2026-07-28 has no ServerRequest: its server sends no
	// requests (sampling and elicitation travel inside InputRequiredResult).
	FromServer, FromClient bool
	// Result is the definition a result answering a request of this method
	// is validated against (requests only), and Pairing how it was found.
	Result  string
	Pairing Pairing
	// Response is the <Base>ResultResponse definition Result was read from
	// (PairResponse only).
	Response string
	// InputRequired is "InputRequiredResult" when Response's result admits
	// it (2026-07-28 multi round-trip requests), else "".
	InputRequired string
	// TaskResult is the result of a task-augmented request of this method
	// (params carried "task": 2025-11-25 CreateTaskResult), "" when the
	// method's params declare no "task" member.
	TaskResult string
}

// document is one parsed schema.json: its definitions and how references
// name them.
type document struct {
	version string
	dialect string // the $schema URL
	// defsKey is "definitions" (draft-07) or "$defs" (2020-12).
	defsKey string
	defs    map[string]map[string]any
}

// defRef is the JSON pointer fragment of definition name, e.g.
// "#/$defs/CallToolRequest".
func (d *document) defRef(name string) string { return "#/" + d.defsKey + "/" + name }

func parseDocument(version string, raw []byte) (*document, error) {
	var top map[string]any
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf("schema %s: %w", version, err)
	}
	d := &document{version: version}
	d.dialect, _ = top["$schema"].(string)
	for _, key := range []string{"$defs", "definitions"} {
		if m, ok := top[key].(map[string]any); ok {
			d.defsKey = key
			d.defs = make(map[string]map[string]any, len(m))
			for name, v := range m {
				if obj, ok := v.(map[string]any); ok {
					d.defs[name] = obj
				}
			}
			break
		}
	}
	if d.defs == nil {
		return nil, fmt.Errorf("schema %s: neither $defs nor definitions", version)
	}
	return d, nil
}

// methodConst returns the const of the definition's "method" property.
func methodConst(def map[string]any) (string, bool) {
	props, _ := def["properties"].(map[string]any)
	m, _ := props["method"].(map[string]any)
	c, ok := m["const"].(string)
	return c, ok
}

// unionMembers lists the definitions an anyOf union definition refers to.
func (d *document) unionMembers(name string) map[string]bool {
	out := map[string]bool{}
	def, ok := d.defs[name]
	if !ok {
		return out
	}
	branches, _ := def["anyOf"].([]any)
	if len(branches) == 0 {
		// 2026-07-28 ClientNotification is not a union but a copy of its
		// only member, CancelledNotification.
		if c, ok := methodConst(def); ok {
			out["method:"+c] = true
		}
	}
	for _, b := range branches {
		bm, _ := b.(map[string]any)
		if ref, ok := bm["$ref"].(string); ok {
			out[strings.TrimPrefix(ref, d.defRef(""))] = true
		}
	}
	return out
}

// unionDefs are definitions that carry a method const but are unions or
// copies, not the definition of a method.
func unionDef(name string) bool {
	return strings.HasPrefix(name, "Client") || strings.HasPrefix(name, "Server") || strings.HasPrefix(name, "JSONRPC")
}

// resolve follows a local $ref to its definition.
func (d *document) resolve(v any) map[string]any {
	m, _ := v.(map[string]any)
	for i := 0; i < 8 && m != nil; i++ {
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		m = d.defs[strings.TrimPrefix(ref, d.defRef(""))]
	}
	return m
}

// declaresTask reports whether a request definition's params (through $ref
// and anyOf branches) declare a "task" member.
func (d *document) declaresTask(def map[string]any) bool {
	props, _ := def["properties"].(map[string]any)
	params := d.resolve(props["params"])
	if params == nil {
		return false
	}
	cands := []map[string]any{params}
	if br, ok := params["anyOf"].([]any); ok {
		for _, b := range br {
			if m := d.resolve(b); m != nil {
				cands = append(cands, m)
			}
		}
	}
	for _, c := range cands {
		if p, ok := c["properties"].(map[string]any); ok {
			if _, ok := p["task"]; ok {
				return true
			}
		}
	}
	return false
}

// methods builds the method table of the document.
func (d *document) methods() (map[string]*Method, error) {
	serverReq, serverNote := d.unionMembers("ServerRequest"), d.unionMembers("ServerNotification")
	clientReq, clientNote := d.unionMembers("ClientRequest"), d.unionMembers("ClientNotification")
	names := make([]string, 0, len(d.defs))
	for name := range d.defs {
		names = append(names, name)
	}
	sort.Strings(names)
	out := map[string]*Method{}
	for _, name := range names {
		def := d.defs[name]
		c, ok := methodConst(def)
		if !ok || unionDef(name) {
			continue
		}
		var k Kind
		var base string
		switch {
		case strings.HasSuffix(name, "Request"):
			k, base = KindRequest, strings.TrimSuffix(name, "Request")
		case strings.HasSuffix(name, "Notification"):
			k = KindNotification
		default:
			return nil, fmt.Errorf("schema %s: %s has method const %q but is neither a Request nor a Notification", d.version, name, c)
		}
		if prev, dup := out[c]; dup {
			return nil, fmt.Errorf("schema %s: method %q is defined by both %s and %s", d.version, c, prev.Definition, name)
		}
		props, _ := def["properties"].(map[string]any)
		_, envelope := props["jsonrpc"]
		m := &Method{Name: c, Kind: k, Definition: name, Envelope: envelope}
		if k == KindRequest {
			m.FromServer, m.FromClient = serverReq[name], clientReq[name]
			switch {
			case d.defs[base+"ResultResponse"] != nil:
				m.Response, m.Pairing = base+"ResultResponse", PairResponse
				res, input, err := d.responseResult(m.Response)
				if err != nil {
					return nil, err
				}
				m.Result, m.InputRequired = res, input
			case d.defs[base+"Result"] != nil:
				m.Result, m.Pairing = base+"Result", PairName
			case emptyResultMethods[c] && d.defs["EmptyResult"] != nil:
				m.Result, m.Pairing = "EmptyResult", PairEmpty
			default:
				return nil, fmt.Errorf("schema %s: no result definition for %s (%q)", d.version, name, c)
			}
			if d.declaresTask(def) && d.defs["CreateTaskResult"] != nil {
				m.TaskResult = "CreateTaskResult"
			}
		} else {
			m.FromServer = serverNote[name] || serverNote["method:"+c]
			m.FromClient = clientNote[name] || clientNote["method:"+c]
		}
		out[c] = m
	}
	return out, nil
}

// responseResult reads the result definition(s) of a <Base>ResultResponse:
// a $ref, or an anyOf of InputRequiredResult and one other $ref.
func (d *document) responseResult(name string) (result, inputRequired string, err error) {
	props, _ := d.defs[name]["properties"].(map[string]any)
	res, _ := props["result"].(map[string]any)
	refName := func(v any) string {
		m, _ := v.(map[string]any)
		ref, _ := m["$ref"].(string)
		return strings.TrimPrefix(ref, d.defRef(""))
	}
	if r := refName(res); r != "" {
		return r, "", nil
	}
	branches, _ := res["anyOf"].([]any)
	for _, b := range branches {
		switch r := refName(b); {
		case r == "InputRequiredResult":
			inputRequired = r
		case r != "" && result == "":
			result = r
		default:
			return "", "", fmt.Errorf("schema %s: %s: result union has an unexpected branch %v", d.version, name, b)
		}
	}
	if result == "" {
		return "", "", fmt.Errorf("schema %s: %s: no result definition", d.version, name)
	}
	return result, inputRequired, nil
}

// errorCodes maps each error code the document defines with a const (2026-07-28:
// ParseError -32700, HeaderMismatchError -32020, ...) to its definition. A
// definition is either a JSON-RPC error object (code at properties.code) or
// a whole error response (code in properties.error.allOf[*].properties.code);
// response is true for the latter.
func (d *document) errorCodes() map[int64]errorDef {
	out := map[int64]errorDef{}
	for name, def := range d.defs {
		if !strings.HasSuffix(name, "Error") || name == "Error" || unionDef(name) {
			continue
		}
		props, _ := def["properties"].(map[string]any)
		if code, ok := constCode(props["code"]); ok {
			out[code] = errorDef{name: name}
			continue
		}
		errProp, _ := props["error"].(map[string]any)
		all, _ := errProp["allOf"].([]any)
		for _, a := range all {
			am, _ := a.(map[string]any)
			ap, _ := am["properties"].(map[string]any)
			if code, ok := constCode(ap["code"]); ok {
				out[code] = errorDef{name: name, response: true}
			}
		}
	}
	return out
}

type errorDef struct {
	name     string
	response bool
}

func constCode(v any) (int64, bool) {
	m, _ := v.(map[string]any)
	f, ok := m["const"].(float64)
	if !ok || f != float64(int64(f)) {
		return 0, false
	}
	return int64(f), true
}

package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Kind classifies a message for validation.
type Kind string

// The kinds of message. KindInvalid is anything that is not a JSON-RPC
// request, notification or response (not JSON, not an object, no method,
// result or error).
const (
	KindRequest      Kind = "request"
	KindNotification Kind = "notification"
	KindResult       Kind = "result"
	KindError        Kind = "error"
	KindInvalid      Kind = "invalid"
)

// Violation is one way a message breaks the schema or a JSON-RPC rule.
type Violation struct {
	// Seq is the sequence number the caller gave the message.
	Seq int64
	// Pointer is the JSON pointer (RFC 6901) of the offending value in the
	// message ("" is the whole message).
	Pointer string
	// SchemaLocation is the failing keyword in the vendored schema
	// ("#/$defs/CallToolResult/required"); empty for a JSON-RPC rule.
	SchemaLocation string
	// Clause is the CLAUSES.md id a JSON-RPC rule violation breaks
	// ("basic#10"); empty for a schema complaint.
	Clause string
	// Level is the clause's RFC 2119 keyword ("MUST NOT", "SHOULD NOT"),
	// for JSON-RPC rules; empty for schema complaints.
	Level string
	// Complaint is what is wrong, in the library's words for a schema
	// complaint.
	Complaint string
	// Branch, when set, says the value matched no branch of a union and
	// names the branch whose complaints these are.
	Branch string
}

// String renders the violation in one line.
func (v Violation) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "seq %d: ", v.Seq)
	if v.Pointer == "" {
		sb.WriteString("(message)")
	} else {
		sb.WriteString(v.Pointer)
	}
	sb.WriteString(": ")
	sb.WriteString(v.Complaint)
	if v.Branch != "" {
		sb.WriteString(" (" + v.Branch + ")")
	}
	switch {
	case v.Clause != "":
		fmt.Fprintf(&sb, " [%s %s]", v.Clause, v.Level)
	case v.SchemaLocation != "":
		fmt.Fprintf(&sb, " [schema %s]", v.SchemaLocation)
	}
	return sb.String()
}

// Request is what the validator needs to know of the client request a
// response answers.
type Request struct {
	// Method is the request's method.
	Method string
	// Task is true when the request's params carried a "task" member
	// (2025-11-25 task augmentation: a result with a task member is then a
	// CreateTaskResult; one without is the method's own result, as a
	// receiver that declares no task support returns it).
	Task bool
}

// RequestLookup finds the client request with a JSON-RPC id (as
// jsonrpc.IDFrom canonicalises it). It must be safe to call from the
// goroutine that validates.
type RequestLookup func(id jsonrpc.ID) (Request, bool)

// RequestOf reads the id and Request of a client message; ok is false when
// raw is not a request.
func RequestOf(raw []byte) (id jsonrpc.ID, req Request, ok bool) {
	env := jsonrpc.Parse(raw)
	req, ok = RequestFrom(env)
	return env.ID, req, ok
}

// RequestFrom is RequestOf of a message already parsed.
func RequestFrom(env jsonrpc.Envelope) (req Request, ok bool) {
	if env.Kind != jsonrpc.Request {
		return Request{}, false
	}
	req.Method = env.Method
	// Params with neither the bytes "task" nor an escape (\u0074ask) have
	// no such member: the messages that are mostly a long argument
	// (ROBUST-OVERSIZE's 8 MiB) are not decoded a second time.
	if len(env.Params) > 0 && env.Params[0] == '{' && (bytes.Contains(env.Params, []byte("task")) || bytes.Contains(env.Params, []byte(`\u`))) {
		var p map[string]json.RawMessage
		if json.Unmarshal(env.Params, &p) == nil {
			if t, has := p["task"]; has && string(t) != "null" {
				req.Task = true
			}
		}
	}
	return req, true
}

// Outcome is the validation of one message.
type Outcome struct {
	// Seq is the caller's sequence number of the message.
	Seq int64
	// Kind is how the message was classified.
	Kind Kind
	// ID is the message's id (zero when absent).
	ID jsonrpc.ID
	// Method is the message's method, or for a response the method of the
	// request it answers ("" when unknown).
	Method string
	// Against names the definition the message was validated against
	// ("CallToolResult", "ProgressNotification", "JSONRPCNotification").
	Against string
	// NotValidated, when set, says why the message was checked only against
	// the generic JSON-RPC envelope and not against a method's definition:
	// a method the schema does not define (an extension), or a response to
	// a request the validator does not know.
	NotValidated string
	// Notes are remarks that are not violations (a tolerated id null).
	Notes []string
	// Violations are what is wrong with the message, in document order.
	Violations []Violation
}

// OK reports whether the message has no violation.
func (o Outcome) OK() bool { return len(o.Violations) == 0 }

// ValidateServerMessage validates one message a server sent. seq is the
// caller's number for it (copied into every violation); lookup finds the
// request a response answers, and may be nil (responses are then checked
// against the generic envelope only).
func (v *Validator) ValidateServerMessage(seq int64, raw []byte, lookup RequestLookup) Outcome {
	o := Outcome{Seq: seq}
	var basics []Violation
	add := func(ptr, clause, level, format string, args ...any) {
		basics = append(basics, Violation{Pointer: ptr, Clause: clause, Level: level, Complaint: fmt.Sprintf(format, args...)})
	}
	var members map[string]json.RawMessage
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' || json.Unmarshal(trimmed, &members) != nil || members == nil {
		o.Kind = KindInvalid
		switch {
		case !json.Valid(trimmed):
			add("", "basic#1", "MUST", "not JSON")
		case trimmed[0] == '[':
			add("", "basic#1", "MUST", "a JSON array (batch), not a single JSON-RPC message")
		default:
			add("", "basic#1", "MUST", "not a JSON object")
		}
		o.Violations = stamp(seq, basics)
		return o
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(trimmed))
	if err != nil { // valid JSON for encoding/json, so unreachable in practice
		add("", "basic#1", "MUST", "not JSON: %v", err)
		o.Kind = KindInvalid
		o.Violations = stamp(seq, basics)
		return o
	}
	rawID, hasID := members["id"]
	idNull := hasID && string(bytes.TrimSpace(rawID)) == "null"
	if hasID && !idNull {
		o.ID = jsonrpc.IDFrom(rawID)
	}
	_, hasMethod := members["method"]
	_, hasResult := members["result"]
	_, hasError := members["error"]
	var method string
	if hasMethod {
		_ = json.Unmarshal(members["method"], &method)
	}
	// dropAt lists pointers a JSON-RPC rule already reports: schema
	// complaints at the same place would repeat it.
	dropAt := map[string]bool{}
	key := ""
	switch {
	case hasMethod:
		o.Method = method
		m, known := v.methods[method]
		isNote := (known && m.Kind == KindNotification) || (!known && strings.HasPrefix(method, "notifications/"))
		switch {
		case hasID && isNote:
			o.Kind = KindNotification
			add("/id", "basic#10", "MUST NOT", "notification %q carries an id", method)
			dropAt["/id"] = true
		case hasID:
			o.Kind = KindRequest
			// basic#2 and basic#3 bind the requests a server sends: 2025-06-18
			// and 2025-11-25 (ServerRequest); a 2026-07-28 server sends none,
			// and its schema's RequestId still judges the id.
			serverRequests := v.doc.defs["ServerRequest"] != nil
			switch {
			case !serverRequests:
			case idNull:
				add("/id", "basic#3", "MUST NOT", "request id is null")
				dropAt["/id"] = true
			case !stringOrInteger(rawID):
				add("/id", "basic#2", "MUST", "request id %s is neither a string nor an integer", compactText(rawID))
				dropAt["/id"] = true
			}
		default:
			o.Kind = KindNotification
		}
		key = v.methodTarget(&o, m, known)
	case hasResult || hasError:
		if hasResult && hasError {
			add("", "basic#6", "MUST", "response carries both result and error")
		}
		if hasError {
			basics = append(basics, v.errorRules(members["error"], dropAt)...)
		}
		if hasResult {
			o.Kind = KindResult
			key = v.resultTarget(&o, inst, lookup)
			basics = append(basics, v.resultMetaRules(members["result"])...)
		} else {
			o.Kind = KindError
			if lookup != nil && !o.ID.IsZero() {
				if r, ok := lookup(o.ID); ok {
					o.Method = r.Method
				}
			}
			key = v.errorTarget(&o, members["error"])
			if idNull {
				// JSON-RPC 2.0 §5: the id of an error answering a request whose
				// id could not be read MUST be null; the schemas type RequestId
				// as string or integer, and basic/index.mdx excepts that case.
				o.Notes = append(o.Notes, "id null tolerated on an error response (JSON-RPC 2.0 section 5; the schema's RequestId excludes null)")
				dropAt["/id"] = true
			}
		}
	default:
		o.Kind = KindInvalid
		if hasID {
			add("", "basic#6", "MUST", "response carries neither result nor error")
		} else {
			add("", "basic#1", "MUST", "no method, result or error: not a JSON-RPC message")
		}
	}
	// basic#11: every _meta key name, in any message (metakeys.go).
	basics = append(basics, metaKeyRules(inst)...)
	var found []Violation
	if key != "" {
		found = v.validate(key, inst)
	}
	// methodTarget may have reported a request or notification the server
	// must not send; it goes after the JSON-RPC rules.
	o.Violations = stamp(seq, merge(append(basics, o.Violations...), found, dropAt))
	return o
}

// methodTarget picks the schema of a request or notification.
func (v *Validator) methodTarget(o *Outcome, m *Method, known bool) string {
	generic := v.notificationDef
	union := "ServerNotification"
	if o.Kind == KindRequest {
		generic, union = v.requestDef, "ServerRequest"
	}
	switch {
	case !known || m.Kind != o.Kind:
		o.Against = generic
		o.NotValidated = fmt.Sprintf("%s %q is not defined by the %s schema", o.Kind, o.Method, v.version)
		if later := v.laterDefining(o.Method, o.Kind); later != "" && !known {
			// lc#6: a server message of a later version only (later.go).
			o.Violations = append(o.Violations, Violation{Pointer: "/method", Clause: "lc#6", Level: "MUST",
				Complaint: fmt.Sprintf("%q is a server %s of %s, not of the negotiated %s", o.Method, o.Kind, later, v.version)})
		}
		return keyGeneric(generic)
	case m.FromServer:
		o.Against = m.Definition
		return keyMessage(m.Definition)
	case v.doc.defs[union] == nil:
		o.Against = generic
		o.NotValidated = fmt.Sprintf("the %s schema has no %s: servers send no %ss", v.version, union, o.Kind)
		return keyGeneric(generic)
	default:
		o.Against = union
		o.Violations = append(o.Violations, Violation{
			Pointer: "/method", SchemaLocation: v.doc.defRef(union),
			Complaint: fmt.Sprintf("%q (%s) is not a server-to-client %s in %s", o.Method, m.Definition, o.Kind, v.version),
		})
		return keyGeneric(generic)
	}
}

// resultTarget picks the schema of a result response.
func (v *Validator) resultTarget(o *Outcome, inst any, lookup RequestLookup) string {
	o.Against = v.resultDef
	if o.ID.IsZero() || lookup == nil {
		o.NotValidated = "answers no request known to the validator"
		return keyGeneric(v.resultDef)
	}
	req, ok := lookup(o.ID)
	if !ok {
		o.NotValidated = "answers no request known to the validator (id " + o.ID.String() + ")"
		return keyGeneric(v.resultDef)
	}
	o.Method = req.Method
	m, known := v.methods[req.Method]
	if !known || m.Kind != KindRequest {
		o.NotValidated = fmt.Sprintf("answers %q, which the %s schema does not define", req.Method, v.version)
		return keyGeneric(v.resultDef)
	}
	def := m.Result
	rt, hasRT := resultType(inst)
	switch {
	case req.Task && m.TaskResult != "" && hasTask(inst):
		// A task-augmented request is answered with a CreateTaskResult
		// when the receiver accepts the task; one that declares no task
		// support for the request type "MUST process requests of that
		// type normally" (2025-11-25 tasks.mdx §Task Support and
		// Handling): a result without a task is the method's own.
		def = m.TaskResult
	case m.InputRequired != "" && rt == "input_required":
		def = m.InputRequired
	case hasRT && rt != "complete" && rt != "input_required" && v.doc.defs["ResultType"] != nil:
		// basic/index.mdx (2026-07-28), ResultType: "Extensions MAY add
		// additional ResultType values" (the tasks extension's "task"); the
		// core schema knows only the common Result fields of such a result.
		o.NotValidated = fmt.Sprintf("answers %q with resultType %q, which the %s schema does not define (an extension's)", req.Method, rt, v.version)
		return keyGeneric(v.resultDef)
	}
	o.Against = def
	return keyResult(def)
}

// errorTarget picks the schema of an error response: the definition of its
// code when the schema defines one (2026-07-28), else the generic error.
func (v *Validator) errorTarget(o *Outcome, rawErr json.RawMessage) string {
	o.Against = v.errorDef
	var e struct {
		Code json.Number `json:"code"`
	}
	if json.Unmarshal(rawErr, &e) == nil {
		if code, err := e.Code.Int64(); err == nil {
			if d, ok := v.codes[code]; ok {
				o.Against = d.name
				return keyError(d.name)
			}
		}
	}
	return keyGeneric(v.errorDef)
}

// errorRules checks the error member: an object with an integer code and a
// string message (basic#8), and, in 2026-07-28, the reserved code ranges.
func (v *Validator) errorRules(rawErr json.RawMessage, dropAt map[string]bool) []Violation {
	var out []Violation
	add := func(ptr, clause, level, format string, args ...any) {
		out = append(out, Violation{Pointer: ptr, Clause: clause, Level: level, Complaint: fmt.Sprintf(format, args...)})
		dropAt[ptr] = true
	}
	var e map[string]json.RawMessage
	if json.Unmarshal(rawErr, &e) != nil || e == nil {
		add("/error", "basic#8", "MUST", "error is %s, not an object with a code and a message", compactText(rawErr))
		return out
	}
	code, hasCode := e["code"]
	switch {
	case !hasCode:
		add("/error", "basic#8", "MUST", "error has no code")
	case !isInteger(code):
		add("/error/code", "basic#8", "MUST", "error code %s is not an integer", compactText(code))
	}
	msg, hasMsg := e["message"]
	switch {
	case !hasMsg:
		add("/error", "basic#8", "MUST", "error has no message")
	case len(bytes.TrimSpace(msg)) == 0 || bytes.TrimSpace(msg)[0] != '"':
		add("/error/message", "basic#8", "MUST", "error message %s is not a string", compactText(msg))
	}
	if hasCode && isInteger(code) && v.version == "2026-07-28" {
		r, _ := new(big.Rat).SetString(string(bytes.TrimSpace(code)))
		c := r.Num().Int64()
		_, defined := v.codes[c]
		switch {
		case c == -32002 || c == -32042:
			out = append(out, Violation{Pointer: "/error/code", Clause: "basic#16", Level: "MUST NOT",
				Complaint: fmt.Sprintf("error code %d is retired in 2026-07-28 (-32002 resource not found, -32042 URL elicitation required)", c)})
		case c >= -32099 && c <= -32020 && !defined:
			out = append(out, Violation{Pointer: "/error/code", Clause: "basic#15", Level: "MUST NOT",
				Complaint: fmt.Sprintf("error code %d is in the range -32099..-32020 reserved for the specification, which does not define it", c)})
		case c >= -32019 && c <= -32000:
			out = append(out, Violation{Pointer: "/error/code", Clause: "basic#14", Level: "SHOULD NOT",
				Complaint: fmt.Sprintf("error code %d is in the legacy range -32019..-32000", c)})
		}
	}
	return out
}

// merge puts the JSON-RPC rule violations first, then the schema
// complaints that do not repeat them. The same complaint at the same place
// from two definitions (the envelope's Result and the method's result both
// require resultType) is kept once, with the later, more specific schema
// location.
func merge(basics, found []Violation, dropAt map[string]bool) []Violation {
	out := basics
	type at struct{ ptr, complaint, branch string }
	seen := map[at]int{}
	for _, f := range found {
		if dropAt[f.Pointer] {
			continue
		}
		k := at{f.Pointer, f.Complaint, f.Branch}
		if i, dup := seen[k]; dup {
			out[i].SchemaLocation = f.SchemaLocation
			continue
		}
		seen[k] = len(out)
		out = append(out, f)
	}
	return out
}

func stamp(seq int64, vs []Violation) []Violation {
	for i := range vs {
		vs[i].Seq = seq
	}
	return vs
}

// resultType reads result.resultType of a decoded response; ok is false
// when it is absent or not a string.
// hasTask reports whether a result response's result has a task member.
func hasTask(inst any) bool {
	obj, _ := inst.(map[string]any)
	res, _ := obj["result"].(map[string]any)
	_, ok := res["task"]
	return ok
}

func resultType(inst any) (rt string, ok bool) {
	obj, _ := inst.(map[string]any)
	res, _ := obj["result"].(map[string]any)
	rt, ok = res["resultType"].(string)
	return rt, ok
}

// stringOrInteger reports whether a raw JSON value is a string or an
// integer (a number with no fractional part: 1 and 1.0, not 1.5).
func stringOrInteger(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return (len(t) > 0 && t[0] == '"') || isInteger(t)
}

func isInteger(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || (t[0] != '-' && (t[0] < '0' || t[0] > '9')) {
		return false
	}
	r, ok := new(big.Rat).SetString(string(t))
	return ok && r.IsInt()
}

func compactText(raw json.RawMessage) string {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return string(raw)
	}
	s := buf.String()
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

// resultMetaRules checks, in 2026-07-28, what basic/index.mdx asks of every
// result beyond its schema: "Servers SHOULD include the following
// io.modelcontextprotocol/* field in every result's _meta, unless
// specifically configured not to do so" — serverInfo (basic#21). A result
// that is not an object is the schema's to report.
func (v *Validator) resultMetaRules(rawResult json.RawMessage) []Violation {
	if v.version != "2026-07-28" {
		return nil
	}
	var r map[string]json.RawMessage
	if json.Unmarshal(rawResult, &r) != nil || r == nil {
		return nil
	}
	var meta map[string]json.RawMessage
	if m, ok := r["_meta"]; ok && json.Unmarshal(m, &meta) != nil {
		return nil // _meta not an object: the schema reports it
	}
	if _, ok := meta["io.modelcontextprotocol/serverInfo"]; ok {
		return nil
	}
	return []Violation{{Pointer: "/result/_meta", Clause: "basic#21", Level: "SHOULD",
		Complaint: "the result's _meta carries no io.modelcontextprotocol/serverInfo"}}
}

package schema

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

const (
	v618  = "2025-06-18"
	v1125 = "2025-11-25"
	v2026 = "2026-07-28"
)

var (
	all    = []string{v618, v1125, v2026}
	legacy = []string{v618, v1125}
)

// want is one expected violation: a CLAUSES.md id, or a schema keyword
// (the tail of the schema location, e.g. "/required"), at a JSON pointer.
type want struct {
	clause  string
	keyword string
	pointer string
}

func lookupOf(reqs map[string]Request) RequestLookup {
	return func(id jsonrpc.ID) (Request, bool) {
		r, ok := reqs[id.String()]
		return r, ok
	}
}

// The messages marked "real" were sent by the reference server
// (fixtures.Serve) in TestReferenceServerMessagesValidate's conversation.
var messageCases = []struct {
	name     string
	versions []string
	requests map[string]Request // by id text
	raw      string
	kind     Kind
	against  string // "" = do not check
	// unvalidated: the message is checked only against the generic envelope.
	unvalidated bool
	want        []want
	note        bool
}{
	// Valid messages.
	{name: "real discover result", versions: []string{v2026}, requests: map[string]Request{"1": {Method: "server/discover"}},
		raw:  `{"jsonrpc":"2.0","id":1,"result":{"cacheScope":"public","capabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}},"tools":{}},"resultType":"complete","serverInfo":{"name":"mcp-conform-reference","version":"1"},"supportedVersions":["2026-07-28","2025-11-25","2025-06-18"],"ttlMs":0}}`,
		kind: KindResult, against: "DiscoverResult"},
	{name: "real tools/call result", versions: []string{v2026}, requests: map[string]Request{"4": {Method: "tools/call"}},
		raw:  `{"jsonrpc":"2.0","id":4,"result":{"content":[{"text":"slow: done 3 steps","type":"text"}],"resultType":"complete","structuredContent":{"steps":3}}}`,
		kind: KindResult, against: "CallToolResult"},
	{name: "real tools/call result", versions: legacy, requests: map[string]Request{`"s5"`: {Method: "tools/call"}},
		raw:  `{"jsonrpc":"2.0","id":"s5","result":{"content":[{"text":"slow: done 3 steps","type":"text"}],"structuredContent":{"steps":3}}}`,
		kind: KindResult, against: "CallToolResult"},
	{name: "real progress notification", versions: all,
		raw:  `{"jsonrpc":"2.0","method":"notifications/progress","params":{"message":"step 1/3","progress":1,"progressToken":7,"total":3}}`,
		kind: KindNotification, against: "ProgressNotification"},
	{name: "real initialize result", versions: []string{v1125}, requests: map[string]Request{"1": {Method: "initialize"}},
		raw:  `{"jsonrpc":"2.0","id":1,"result":{"capabilities":{"tasks":{"cancel":{},"requests":{"tools":{"call":{}}}},"tools":{}},"protocolVersion":"2025-11-25","serverInfo":{"name":"mcp-conform-reference","version":"1"}}}`,
		kind: KindResult, against: "InitializeResult"},
	{name: "real ping result", versions: legacy, requests: map[string]Request{"2": {Method: "ping"}},
		raw: `{"jsonrpc":"2.0","id":2,"result":{}}`, kind: KindResult, against: "EmptyResult"},
	{name: "real CreateTaskResult", versions: []string{v1125}, requests: map[string]Request{"11": {Method: "tools/call", Task: true}},
		raw:  `{"jsonrpc":"2.0","id":11,"result":{"task":{"createdAt":"2026-12-01T09:37:42.925456677Z","lastUpdatedAt":"2026-12-01T09:37:42.925456677Z","pollInterval":10,"status":"working","statusMessage":"researching x","taskId":"0699f573dbf641683df04a7b0ec79c76","ttl":60000}}}`,
		kind: KindResult, against: "CreateTaskResult"},
	{name: "real tasks/get result", versions: []string{v1125}, requests: map[string]Request{"13": {Method: "tasks/get"}},
		raw:  `{"jsonrpc":"2.0","id":13,"result":{"createdAt":"2026-12-01T09:37:42.925456677Z","lastUpdatedAt":"2026-12-01T09:37:42.925524609Z","pollInterval":10,"status":"completed","statusMessage":"done: 1 steps","taskId":"0699f573dbf641683df04a7b0ec79c76","ttl":60000}}`,
		kind: KindResult, against: "GetTaskResult"},
	{name: "real unsupported version error", versions: []string{v2026},
		raw:  `{"jsonrpc":"2.0","id":11,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"requested":"1999-01-01","supported":["2026-07-28","2025-11-25","2025-06-18"]}}}`,
		kind: KindError, against: "UnsupportedProtocolVersionError"},
	{name: "real method not found error", versions: legacy,
		raw:  `{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"Method not found: no/such/method"}}`,
		kind: KindError},
	{name: "real parse error, id null", versions: all,
		raw:  `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
		kind: KindError, note: true},
	{name: "error without id", versions: []string{v1125, v2026},
		raw: `{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}`, kind: KindError},
	{name: "input_required result of tools/call", versions: []string{v2026}, requests: map[string]Request{"3": {Method: "tools/call"}},
		raw:  `{"jsonrpc":"2.0","id":3,"result":{"resultType":"input_required","requestState":"abc"}}`,
		kind: KindResult, against: "InputRequiredResult"},
	{name: "server ping request", versions: legacy,
		raw: `{"jsonrpc":"2.0","id":"srv-1","method":"ping"}`, kind: KindRequest, against: "PingRequest"},

	// Methods and responses the schema does not define: not validated
	// against a method definition, but the envelope still is.
	{name: "extension notification", versions: all,
		raw: `{"jsonrpc":"2.0","method":"notifications/x-acme/heartbeat","params":{"n":1}}`, kind: KindNotification, unvalidated: true},
	{name: "extension notification with a bad envelope", versions: all,
		raw: `{"jsonrpc":"1.0","method":"notifications/x-acme/heartbeat"}`, kind: KindNotification, unvalidated: true,
		want: []want{{keyword: "/const", pointer: "/jsonrpc"}}},
	{name: "extension request", versions: legacy,
		raw: `{"jsonrpc":"2.0","id":5,"method":"x-acme/poke"}`, kind: KindRequest, unvalidated: true},
	{name: "2026 server request", versions: []string{v2026},
		raw: `{"jsonrpc":"2.0","id":5,"method":"sampling/createMessage","params":{}}`, kind: KindRequest, unvalidated: true},
	{name: "result of an extension method", versions: []string{v2026}, requests: map[string]Request{"12": {Method: "tasks/get"}},
		raw: `{"jsonrpc":"2.0","id":12,"result":{"resultType":"complete","status":"working"}}`, kind: KindResult, unvalidated: true},
	{name: "extension resultType", versions: []string{v2026}, requests: map[string]Request{"8": {Method: "tools/call"}},
		raw: `{"jsonrpc":"2.0","id":8,"result":{"resultType":"task","taskId":"t1","status":"working"}}`, kind: KindResult, unvalidated: true},
	{name: "result to an unknown id", versions: all, requests: map[string]Request{"1": {Method: "tools/list"}},
		raw: `{"jsonrpc":"2.0","id":99,"result":{"resultType":"complete"}}`, kind: KindResult, unvalidated: true},
	{name: "result with no lookup", versions: all,
		raw: `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete"}}`, kind: KindResult, unvalidated: true},

	// basic#21: serverInfo in every 2026-07-28 result's _meta (SHOULD).
	{name: "result without serverInfo in _meta (basic#21)", versions: []string{v2026}, requests: map[string]Request{"3": {Method: "tools/call"}},
		raw:  `{"jsonrpc":"2.0","id":3,"result":{"content":[{"text":"hi","type":"text"}],"resultType":"complete","_meta":{"x.example/k":1}}}`,
		kind: KindResult, against: "CallToolResult", want: []want{{clause: "basic#21", pointer: "/result/_meta"}}},
	{name: "result without _meta (basic#21)", versions: []string{v2026}, requests: map[string]Request{"1": {Method: "server/discover"}},
		raw:  `{"jsonrpc":"2.0","id":1,"result":{"cacheScope":"public","capabilities":{},"resultType":"complete","serverInfo":{"name":"s","version":"1"},"supportedVersions":["2026-07-28"],"ttlMs":0}}`,
		kind: KindResult, against: "DiscoverResult", want: []want{{clause: "basic#21", pointer: "/result/_meta"}}},
	{name: "result with serverInfo in _meta", versions: []string{v2026}, requests: map[string]Request{"3": {Method: "tools/call"}},
		raw:  `{"jsonrpc":"2.0","id":3,"result":{"content":[{"text":"hi","type":"text"}],"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}}`,
		kind: KindResult, against: "CallToolResult"},

	// Schema violations.
	{name: "result without resultType (basic#13)", versions: []string{v2026}, requests: map[string]Request{"3": {Method: "tools/call"}},
		raw:  `{"jsonrpc":"2.0","id":3,"result":{"content":[{"text":"hi","type":"text"}]}}`,
		kind: KindResult, against: "CallToolResult", want: []want{{keyword: "/required", pointer: "/result"}}},
	{name: "tools/call result content not an array", versions: all, requests: map[string]Request{"3": {Method: "tools/call"}},
		raw:  `{"jsonrpc":"2.0","id":3,"result":{"content":"hi","resultType":"complete"}}`,
		kind: KindResult, against: "CallToolResult", want: []want{{keyword: "/type", pointer: "/result/content"}}},
	{name: "text content without text", versions: all, requests: map[string]Request{"3": {Method: "tools/call"}},
		raw:  `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text"}],"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}}`,
		kind: KindResult, want: []want{{keyword: "/required", pointer: "/result/content/0"}}},
	{name: "tools/list result without tools", versions: all, requests: map[string]Request{"2": {Method: "tools/list"}},
		raw:  `{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete"}}`,
		kind: KindResult, against: "ListToolsResult", want: []want{{keyword: "/required", pointer: "/result"}}},
	{name: "tool name not a string", versions: all, requests: map[string]Request{"2": {Method: "tools/list"}},
		raw:  `{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","cacheScope":"public","ttlMs":0,"tools":[{"name":7,"inputSchema":{"type":"object"}}]}}`,
		kind: KindResult, want: []want{{keyword: "/type", pointer: "/result/tools/0/name"}}},
	// A receiver that declares no task support processes the request
	// normally (tasks.mdx): a result without a task is the method's own.
	{name: "task-augmented call answered with a plain result", versions: []string{v1125}, requests: map[string]Request{"3": {Method: "tools/call", Task: true}},
		raw:  `{"jsonrpc":"2.0","id":3,"result":{"content":[]}}`,
		kind: KindResult, against: "CallToolResult"},
	{name: "task-augmented call answered with a broken task", versions: []string{v1125}, requests: map[string]Request{"3": {Method: "tools/call", Task: true}},
		raw:  `{"jsonrpc":"2.0","id":3,"result":{"task":{"taskId":"t"}}}`,
		kind: KindResult, against: "CreateTaskResult", want: []want{{keyword: "/required", pointer: "/result/task"}}},
	{name: "progress without token", versions: all,
		raw:  `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`,
		kind: KindNotification, want: []want{{keyword: "/required", pointer: "/params"}}},
	{name: "resource link with a uri that is not a URI", versions: all, requests: map[string]Request{"3": {Method: "tools/call"}},
		raw:  `{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","content":[{"type":"resource_link","name":"x","uri":"not a uri"}]}}`,
		kind: KindResult, want: []want{{keyword: "/format", pointer: "/result/content/0/uri"}}},
	{name: "missing required client capability without data", versions: []string{v2026},
		raw:  `{"jsonrpc":"2.0","id":3,"error":{"code":-32021,"message":"Missing required client capability"}}`,
		kind: KindError, against: "MissingRequiredClientCapabilityError", want: []want{{keyword: "/required", pointer: "/error"}}},
	{name: "server sends a client request", versions: legacy,
		raw:  `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`,
		kind: KindRequest, against: "ServerRequest", want: []want{{keyword: "ServerRequest", pointer: "/method"}}},
	{name: "server sends a client notification", versions: legacy,
		raw:  `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`,
		kind: KindNotification, against: "ServerNotification", want: []want{{keyword: "ServerNotification", pointer: "/method"}}},

	{name: "result not an object", versions: all, requests: map[string]Request{"1": {Method: "tools/list"}},
		raw: `{"jsonrpc":"2.0","id":1,"result":5}`, kind: KindResult, want: []want{{keyword: "/type", pointer: "/result"}}},
	{name: "method not a string", versions: all,
		raw: `{"jsonrpc":"2.0","method":5}`, kind: KindNotification, unvalidated: true, want: []want{{keyword: "/type", pointer: "/method"}}},
	{name: "2026 server request with a null id", versions: []string{v2026},
		raw: `{"jsonrpc":"2.0","id":null,"method":"x/y"}`, kind: KindRequest, unvalidated: true, want: []want{{keyword: "/type", pointer: "/id"}}},

	// JSON-RPC rules.
	{name: "not JSON", versions: all, raw: `reference server ready`, kind: KindInvalid, want: []want{{clause: "basic#1"}}},
	{name: "batch", versions: all, raw: `[{"jsonrpc":"2.0","id":1,"result":{}}]`, kind: KindInvalid, want: []want{{clause: "basic#1"}}},
	{name: "scalar", versions: all, raw: `42`, kind: KindInvalid, want: []want{{clause: "basic#1"}}},
	{name: "object with no method, result or error", versions: all, raw: `{"jsonrpc":"2.0"}`, kind: KindInvalid, want: []want{{clause: "basic#1"}}},
	{name: "response with neither result nor error (basic#6)", versions: all, raw: `{"jsonrpc":"2.0","id":1}`, kind: KindInvalid, want: []want{{clause: "basic#6"}}},
	{name: "result and error (basic#6)", versions: all, requests: map[string]Request{"1": {Method: "tools/call"}},
		raw: `{"jsonrpc":"2.0","id":1,"result":{"content":[],"resultType":"complete"},"error":{"code":-32603,"message":"x"}}`, kind: KindResult,
		want: []want{{clause: "basic#6"}}},
	{name: "notification with an id (basic#10)", versions: all,
		raw:  `{"jsonrpc":"2.0","id":9,"method":"notifications/progress","params":{"progress":1,"progressToken":"p"}}`,
		kind: KindNotification, against: "ProgressNotification", want: []want{{clause: "basic#10", pointer: "/id"}}},
	{name: "extension notification with an id (basic#10)", versions: all,
		raw:  `{"jsonrpc":"2.0","id":"n","method":"notifications/x-acme/tick"}`,
		kind: KindNotification, unvalidated: true, want: []want{{clause: "basic#10", pointer: "/id"}}},
	{name: "request id null (basic#3)", versions: legacy,
		raw: `{"jsonrpc":"2.0","id":null,"method":"ping"}`, kind: KindRequest, want: []want{{clause: "basic#3", pointer: "/id"}}},
	{name: "request id fractional (basic#2)", versions: legacy,
		raw: `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, kind: KindRequest, want: []want{{clause: "basic#2", pointer: "/id"}}},
	{name: "request id boolean (basic#2)", versions: legacy,
		raw: `{"jsonrpc":"2.0","id":true,"method":"roots/list"}`, kind: KindRequest, want: []want{{clause: "basic#2", pointer: "/id"}}},
	{name: "request id 1.0 is an integer", versions: legacy,
		raw: `{"jsonrpc":"2.0","id":1.0,"method":"ping"}`, kind: KindRequest, against: "PingRequest"},
	{name: "error code a string (basic#8)", versions: all,
		raw: `{"jsonrpc":"2.0","id":1,"error":{"code":"-32601","message":"Method not found"}}`, kind: KindError,
		want: []want{{clause: "basic#8", pointer: "/error/code"}}},
	{name: "error code fractional (basic#8)", versions: all,
		raw: `{"jsonrpc":"2.0","id":1,"error":{"code":-32601.5,"message":"Method not found"}}`, kind: KindError,
		want: []want{{clause: "basic#8", pointer: "/error/code"}}},
	{name: "error without message (basic#8)", versions: all,
		raw: `{"jsonrpc":"2.0","id":1,"error":{"code":-32601}}`, kind: KindError,
		want: []want{{clause: "basic#8", pointer: "/error"}}},
	{name: "error message not a string (basic#8)", versions: all,
		raw: `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":["x"]}}`, kind: KindError,
		want: []want{{clause: "basic#8", pointer: "/error/message"}}},
	{name: "error not an object (basic#8)", versions: all,
		raw: `{"jsonrpc":"2.0","id":1,"error":"boom"}`, kind: KindError,
		want: []want{{clause: "basic#8", pointer: "/error"}}},
	{name: "retired code -32002 (basic#16)", versions: []string{v2026},
		raw: `{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"Resource not found"}}`, kind: KindError,
		want: []want{{clause: "basic#16", pointer: "/error/code"}}},
	{name: "-32002 before 2026-07-28", versions: legacy,
		raw: `{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"Resource not found"}}`, kind: KindError},
	{name: "retired code -32042 (basic#16)", versions: []string{v2026},
		raw: `{"jsonrpc":"2.0","id":1,"error":{"code":-32042,"message":"URL elicitation required"}}`, kind: KindError,
		want: []want{{clause: "basic#16", pointer: "/error/code"}}},
	{name: "undefined reserved code (basic#15)", versions: []string{v2026},
		raw: `{"jsonrpc":"2.0","id":1,"error":{"code":-32050,"message":"x"}}`, kind: KindError,
		want: []want{{clause: "basic#15", pointer: "/error/code"}}},
	{name: "legacy range code (basic#14)", versions: []string{v2026},
		raw: `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Request timed out"}}`, kind: KindError,
		want: []want{{clause: "basic#14", pointer: "/error/code"}}},
	{name: "defined reserved code", versions: []string{v2026},
		raw: `{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Header mismatch"}}`, kind: KindError, against: "HeaderMismatchError"},
}

func TestValidateServerMessage(t *testing.T) {
	for _, tc := range messageCases {
		for _, version := range tc.versions {
			t.Run(version+"/"+tc.name, func(t *testing.T) {
				v, err := For(version)
				if err != nil {
					t.Fatal(err)
				}
				var lookup RequestLookup
				if tc.requests != nil {
					lookup = lookupOf(tc.requests)
				}
				o := v.ValidateServerMessage(42, []byte(tc.raw), lookup)
				for _, vi := range o.Violations {
					t.Logf("violation: %s", vi)
				}
				if o.Kind != tc.kind {
					t.Errorf("kind %s, want %s", o.Kind, tc.kind)
				}
				if tc.against != "" && o.Against != tc.against {
					t.Errorf("validated against %q, want %q", o.Against, tc.against)
				}
				if got := o.NotValidated != ""; got != tc.unvalidated {
					t.Errorf("not validated = %q, want unvalidated %v", o.NotValidated, tc.unvalidated)
				}
				if got := len(o.Notes) > 0; got != tc.note {
					t.Errorf("notes %q, want a note: %v", o.Notes, tc.note)
				}
				// basic#21 (serverInfo in every 2026-07-28 result's _meta) is
				// judged only by the cases that name it.
				wants21 := slices.ContainsFunc(tc.want, func(w want) bool { return w.clause == "basic#21" })
				var got []string
				for _, vi := range o.Violations {
					if vi.Clause == "basic#21" && !wants21 {
						continue
					}
					if vi.Seq != 42 {
						t.Errorf("violation seq %d, want 42", vi.Seq)
					}
					if s := vi.String(); strings.Contains(s, "\n") || !strings.HasPrefix(s, "seq 42: ") {
						t.Errorf("violation not one line starting with its seq: %q", s)
					}
					got = append(got, describe(vi))
				}
				var exp []string
				for _, w := range tc.want {
					exp = append(exp, w.String())
				}
				if !matches(got, tc.want) {
					t.Errorf("violations %q, want %q", got, exp)
				}
			})
		}
	}
}

func (w want) String() string {
	if w.clause != "" {
		return w.clause + "@" + w.pointer
	}
	return "schema " + w.keyword + "@" + w.pointer
}

func describe(v Violation) string {
	if v.Clause != "" {
		return v.Clause + "@" + v.Pointer
	}
	return "schema " + v.SchemaLocation + "@" + v.Pointer
}

// matches reports whether the violations are exactly the wanted ones (a
// schema keyword matches the end of a schema location; order ignored).
func matches(got []string, ws []want) bool {
	if len(got) != len(ws) {
		return false
	}
	used := make([]bool, len(got))
	for _, w := range ws {
		found := false
		for i, g := range got {
			if used[i] {
				continue
			}
			at, ok := strings.CutSuffix(g, "@"+w.pointer)
			if !ok {
				continue
			}
			if (w.clause != "" && at == w.clause) || (w.clause == "" && strings.HasPrefix(at, "schema ") && strings.HasSuffix(at, w.keyword)) {
				used[i], found = true, true
				break
			}
		}
		if !found {
			return false
		}
	}
	return !slices.Contains(used, false)
}

// TestViolationString pins the one-line rendering.
func TestViolationString(t *testing.T) {
	v, err := For(v2026)
	if err != nil {
		t.Fatal(err)
	}
	o := v.ValidateServerMessage(7, []byte(`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text"}],"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}}`),
		lookupOf(map[string]Request{"3": {Method: "tools/call"}}))
	if len(o.Violations) != 1 {
		t.Fatalf("violations %v, want 1", o.Violations)
	}
	got := o.Violations[0].String()
	const exp = `seq 7: /result/content/0: missing property 'text' (no branch of anyOf #/$defs/ContentBlock matched; closest of 5: TextContent) [schema #/$defs/TextContent/required]`
	if got != exp {
		t.Errorf("got  %s\nwant %s", got, exp)
	}
	o = v.ValidateServerMessage(8, []byte(`{"jsonrpc":"2.0","id":9,"method":"notifications/progress","params":{"progress":1,"progressToken":"p"}}`), nil)
	if got, exp := o.Violations[0].String(), `seq 8: /id: notification "notifications/progress" carries an id [basic#10 MUST NOT]`; got != exp {
		t.Errorf("got  %s\nwant %s", got, exp)
	}
}

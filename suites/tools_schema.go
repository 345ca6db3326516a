package suites

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/internal/schema"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/protocol"
	"github.com/mcp-conform/mcp-conform/reports"
)

// The tool contract checks (tools.mdx, and basic/index.mdx "JSON Schema
// Usage"). Each declares the docs/CLAUSES.md ids it enforces (Clauses).
var (
	checkToolsInputSchema = register(&Check{
		ID:    "TOOLS-INPUT-SCHEMA",
		Title: "every tool's inputSchema is a valid JSON Schema of its declared dialect (2020-12 by default)",
		How: "Lists every tool (following nextCursor) and compiles each inputSchema with santhosh-tekuri/jsonschema in " +
			"the dialect its $schema names, JSON Schema 2020-12 without one, validating it against that dialect's " +
			"meta-schema. A missing, null or non-object inputSchema, or one the meta-schema rejects, FAILs. A dialect the " +
			"library does not know or a $ref to another document is noted, not judged (no URL is fetched).",
		Rules: merge(
			sameRule(Rule{Level: reports.Must, Spec: toolsLegacy, Also: []string{basicLegacy},
				Clause: "inputSchema: JSON Schema defining expected parameters [...] Defaults to 2020-12 if no $schema field is present; MUST be a valid JSON Schema object (not null) [basic/index.mdx] Schemas MUST be valid according to their declared or default dialect"},
				v20251125),
			map[string]Rule{v20260728: {Level: reports.Must, Spec: toolsModern, Also: []string{basicModern},
				Clause: "inputSchema: JSON Schema defining expected parameters [...] Defaults to 2020-12 if no $schema field is present; MUST be a valid JSON Schema object (not null) [basic/index.mdx] Schemas MUST be valid according to their declared or default dialect"}},
		),
		Transports: []string{viaStdio, viaHTTP},
		Clauses:    []string{"tl#3", "basic#12"},
		Limits:     map[string]string{"basic#12": "the inputSchemas of tools/list only"},
	})
	checkToolsOutputSchema = register(&Check{
		ID:    "TOOLS-OUTPUT-SCHEMA",
		Title: "a tool with an outputSchema returns structuredContent that conforms to it",
		How: "Lists every tool; in 2025-11-25 and 2026-07-28 compiles every listed outputSchema, called or not, as TOOLS-INPUT-SCHEMA " +
			"compiles an inputSchema (one its dialect's meta-schema rejects FAILs; an unknown dialect or a remote $ref is noted, not judged). " +
			"Then calls each tool with an outputSchema that it may call without side effects — the manifest's " +
			"structured role (tool and arguments), and every tool annotated readOnlyHint: true whose inputSchema accepts {} " +
			"(called with {}; a tool whose execution.taskSupport is required is left out). A successful result must carry " +
			"structuredContent, and it must validate against the outputSchema (compiled as TOOLS-INPUT-SCHEMA compiles an " +
			"inputSchema; in 2025-11-25 and 2026-07-28 an outputSchema that is not a valid schema FAILs too). An error or an " +
			"isError result is not judged. Then, passively, every tools/call result any check of the run received on this " +
			"transport and version is judged alike: a tool whose outputSchema the connection's tools/list gave (the harness " +
			"probe's list when the connection never listed it) must answer with conforming structuredContent; a task-augmented " +
			"call, an error, an isError result, a message the proxy wrote and the body of an HTTP error status are left out, " +
			"as is an outputSchema that does not compile. A result that breaks it FAILs the check, the check run and tool named; " +
			"the reason says how many results were judged in how many check runs. No call to judge, its own or another " +
			"check's: SKIP.",
		Rules: merge(
			sameRule(Rule{Level: reports.Must, Spec: toolsLegacy, Also: []string{basicLegacy},
				Clause: "If an output schema is provided: Servers MUST provide structured results that conform to this schema. [basic/index.mdx] Schemas MUST be valid according to their declared or default dialect"},
				v20251125),
			sameRule(Rule{Level: reports.Must, Spec: toolsLegacy,
				Clause: "If an output schema is provided: Servers MUST provide structured results that conform to this schema."},
				v20250618),
			map[string]Rule{v20260728: {Level: reports.Must, Spec: toolsModern, Also: []string{basicModern},
				Clause: "If an output schema is provided: Servers MUST provide structured results that conform to this schema. [basic/index.mdx] Schemas MUST be valid according to their declared or default dialect"}},
		),
		Transports: []string{viaStdio, viaHTTP},
		Clauses:    []string{"tl#9", "basic#12"},
		Limits: map[string]string{
			"basic#12": "the outputSchemas of tools/list only; an elicitation's requestedSchema is not judged",
		},
	})
	checkToolsNames = register(&Check{
		ID:    "TOOLS-NAMES",
		Title: "tool names are 1 to 128 characters of A-Z, a-z, 0-9, _, - and ., and unique",
		How: "Lists every tool (following nextCursor) and checks each name's length and characters, and that no name is listed twice " +
			"(within one page or across pages: tool names SHOULD be unique within a server).",
		Rules: merge(
			sameRule(Rule{Level: reports.Should, Spec: toolsLegacy, Clause: toolNameClause}, v20251125),
			map[string]Rule{v20260728: {Level: reports.Should, Spec: toolsModern, Clause: toolNameClause}},
		),
		Transports: []string{viaStdio, viaHTTP},
		Clauses:    []string{"tl#4", "tl#5", "tl#6", "tl#7"},
	})
	checkToolsListStable = register(&Check{
		ID:    "TOOLS-LIST-STABLE",
		Title: "tools/list gives the same set (in the same order) across requests and connections",
		How: "Lists every tool, then sends the barrier request and a tools/call of a tool that does not exist (other requests " +
			"on the connection), lists again, and lists once more on a new connection. A set that differs FAILs (it MUST " +
			"NOT vary per connection or as a side effect of other requests); the same set in another order WARNs " +
			"(deterministic order is a SHOULD).",
		Rules: map[string]Rule{v20260728: {Level: reports.Must, Spec: toolsModern,
			Clause: "Servers that declare the tools capability MUST respond to tools/list requests with the set of tools currently available to the requesting client. This set MAY be empty and MAY change over time [...], but MUST NOT vary per-connection or as a side effect of other requests on the connection. [...] Servers SHOULD return tools in a deterministic order (i.e., the same ordering across requests when the underlying set of tools has not changed)."}},
		Transports: []string{viaStdio, viaHTTP},
		Clauses:    []string{"tl#14", "tl#15"},
	})
	// tl#11 (MUST); the isError form is mcp-conform's reading of the error
	// classification of tools.mdx 2025-11-25 and 2026-07-28 (no keyword).
	checkToolsInputValidated = register(&Check{
		ID:    "TOOLS-INPUT-VALIDATED",
		Title: "every tools/call whose arguments fail the tool's inputSchema is refused, as a tool execution error where the version says so",
		How: "Calls every listed tool it may call without side effects — each annotated readOnlyHint: true, and the manifest's " +
			"structured role's tool; a task-only tool (execution.taskSupport required) or one whose inputSchema does not compile is " +
			"left out — with every argument set built to fail its inputSchema (suites/tools_input_validated.go): from a valid base " +
			"(the role's arguments, else {} when the schema accepts it, else a value of its declared type for each required " +
			"property), the base without each required property in turn (or {} when no valid base can be built), and the base with each " +
			"typed property given a value of another JSON type; each set is confirmed invalid by the compiled schema (at most " +
			"200 calls). Any successful result FAILs (servers MUST validate all tool inputs), every such call named. In 2025-11-25 " +
			"and 2026-07-28, whose tools.mdx lists input validation errors among tool execution errors (isError), a JSON-RPC error WARNs " +
			"(mcp-conform's reading: that classification has no RFC 2119 keyword), except to a call mistyping a parameter marked " +
			"x-mcp-header, which 2026-07-28 HTTP may refuse for its Mcp-Param header first; 2025-06-18 lists invalid arguments among " +
			"protocol errors, and either answer passes. No such tool: SKIP.",
		Rules: merge(
			sameRule(Rule{Level: reports.Must, Spec: toolsLegacy,
				Clause: "Servers MUST: Validate all tool inputs [...] Tool Execution Errors: Reported in tool results with isError: true: [...] Input validation errors (e.g., date in wrong format, value out of range) [the classification: mcp-conform's reading, WARN]"},
				v20251125),
			sameRule(Rule{Level: reports.Must, Spec: toolsLegacy,
				Clause: "Servers MUST: Validate all tool inputs [Protocol Errors list \"Invalid arguments\", Tool Execution Errors \"Invalid input data\": either answer]"},
				v20250618),
			map[string]Rule{v20260728: {Level: reports.Must, Spec: toolsModern,
				Clause: "Servers MUST: Validate all tool inputs [...] Tool Execution Errors [...]: Input validation errors (e.g., date in wrong format, value out of range) [...] They are reported in tool results with isError: true [the classification: mcp-conform's reading, WARN]"}},
		),
		Transports: []string{viaStdio, viaHTTP},
		Clauses:    []string{"tl#11"},
	})
)

const toolNameClause = "Tool names SHOULD be between 1 and 128 characters in length (inclusive). [...] The following SHOULD be the only allowed characters: uppercase and lowercase ASCII letters (A-Z, a-z), digits (0-9), underscore (_), hyphen (-), and dot (.) Tool names SHOULD NOT contain spaces, commas, or other special characters. Tool names SHOULD be unique within a server."

func registerToolContract() {
	ginkgo.Describe("TOOLS", ginkgo.Label("area:tools"), func() {
		define(checkToolsInputSchema, toolsInputSchema)
		define(checkToolsCapability, toolsCapability) // tools_capability.go
		define(checkToolsOutputSchema, toolsOutputSchema)
		define(checkToolsStructuredText, toolsStructuredText) // tools_structured.go
		define(checkToolsNames, toolsNames)
		define(checkToolsListStable, toolsListStable)
		define(checkToolsHeaderSensitive, toolsHeaderSensitive) // tools_header.go
		define(checkToolsInputValidated, toolsInputValidated)
		define(checkToolsListChanged, toolsListChanged)             // tools_listchanged.go
		define(checkToolsEmbeddedResources, toolsEmbeddedResources) // tools_embedded.go
	})
}

// listedTool is one tool of tools/list, with its raw description.
type listedTool struct {
	Name string
	Raw  json.RawMessage
	Def  struct {
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
		Annotations  *struct {
			ReadOnlyHint *bool `json:"readOnlyHint"`
		} `json:"annotations"`
		Execution *struct {
			TaskSupport string `json:"taskSupport"`
		} `json:"execution"`
	}
}

// listPageOf is one page of tools/list.
type listPageOf struct {
	cursor string // the cursor that asked for it ("" for the first)
	id     jsonrpc.ID
	tools  []listedTool
	next   string
}

// maxToolPages bounds a walk of tools/list.
const maxToolPages = 50

// toolsListRefused names, for H.Remember and H.Recall, the verdict on a
// target that does not answer the first tools/list with a result: every
// check of this file and of pagination.go needs that answer, and the first
// to be refused gives the others its verdict and transcript at once
// (instead of each starting the target again to be refused, or to wait
// out the exchange timeout).
const toolsListRefused = "tools/list refused"

// recallToolsList ends the check at once when an earlier check of the run
// was refused tools/list by this target (see toolsListRefused).
func recallToolsList(h *H) { h.Recall(toolsListRefused) }

// listPage asks for one page of tools/list; a server that declares the
// tools capability must answer it with a result (else the check FAILs:
// tools.mdx binds servers that support tools); one that does not, and
// refuses the first page, has nothing to judge (SKIP). A refused or
// unanswered first page is remembered for the run's other tools/list
// checks (toolsListRefused): listPage is the first request of a check's
// connection, as it is of theirs.
func (r rpc) listPage(cursor string) listPageOf { return r.listPageOnce(cursor, cursor == "") }

// listPageOnce is listPage; remember says whether a refusal is remembered.
func (r rpc) listPageOnce(cursor string, remember bool) listPageOf {
	var params map[string]any
	if cursor != "" {
		params = map[string]any{"cursor": cursor}
	}
	m, err := r.try("tools/list", params, r.h.Cfg().OpTimeout)
	if err != nil {
		if remember {
			r.h.Remember(toolsListRefused, reports.Fail, err.Error())
		}
		r.h.FailServer("%v", err)
	}
	if m.Env.Kind != jsonrpc.Response && cursor == "" && !declaresTools(r.sess.Capabilities) {
		why := fmt.Sprintf("the server declares no tools capability and answered tools/list with the error %s: it has no tools to judge", describeError(m.Env.Error))
		if remember {
			r.h.Remember(toolsListRefused, reports.Skip, why)
		}
		r.h.Skip(why)
	}
	if m.Env.Kind != jsonrpc.Response {
		why := fmt.Sprintf("tools/list (cursor %q) answered with an error, id %s: %s", cursor, m.Env.ID, describeError(m.Env.Error))
		if remember {
			r.h.Remember(toolsListRefused, reports.Fail, why)
		}
		r.h.FailServer("%s", why)
	}
	var res struct {
		Tools      []json.RawMessage `json:"tools"`
		NextCursor *string           `json:"nextCursor"`
	}
	if err := json.Unmarshal(m.Env.Result, &res); err != nil {
		r.h.Failf("tools/list (id %s) gave an unreadable result: %v", m.Env.ID, err)
	}
	p := listPageOf{cursor: cursor, id: m.Env.ID}
	if res.NextCursor != nil {
		p.next = *res.NextCursor
	}
	for _, raw := range res.Tools {
		t := listedTool{Raw: raw}
		var head struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(raw, &head)
		_ = json.Unmarshal(raw, &t.Def)
		t.Name = head.Name
		p.tools = append(p.tools, t)
	}
	return p
}

// declaresTools reports whether the server's capabilities hold tools.
func declaresTools(caps json.RawMessage) bool {
	var c map[string]json.RawMessage
	_ = json.Unmarshal(caps, &c)
	_, ok := c["tools"]
	return ok
}

// walkTools lists every page of tools/list, following nextCursor until a
// page has none; a cursor given twice, or more than maxToolPages pages,
// FAILs (following them never ends).
func (r rpc) walkTools() []listPageOf { return r.walk(true) }

// relist is walkTools after other requests on the connection: a refusal
// then is this check's own (not remembered for the others).
func (r rpc) relist() []listPageOf { return r.walk(false) }

func (r rpc) walk(remember bool) []listPageOf {
	var pages []listPageOf
	seen := map[string]bool{}
	p := r.listPageOnce("", remember)
	for {
		pages = append(pages, p)
		if p.next == "" {
			return pages
		}
		if seen[p.next] {
			r.h.Failf("tools/list gave the nextCursor %q twice (page %d, id %s): following it never ends", p.next, len(pages), p.id)
		}
		if len(pages) >= maxToolPages {
			r.h.Failf("tools/list still gave a nextCursor after %d pages", maxToolPages)
		}
		seen[p.next] = true
		p = r.listPage(p.next)
	}
}

// allTools is every tool of the pages, in order.
func allTools(pages []listPageOf) []listedTool {
	var out []listedTool
	for _, p := range pages {
		out = append(out, p.tools...)
	}
	return out
}

func toolsInputSchema(h *H) {
	recallToolsList(h)
	onEither(h, func(r rpc) {
		tools := allTools(r.walkTools())
		var bad, unjudged []string
		for _, t := range tools {
			raw := t.Def.InputSchema
			switch {
			case len(raw) == 0:
				bad = append(bad, fmt.Sprintf("%s: no inputSchema", t.Name))
				continue
			case strings.TrimSpace(string(raw))[0] != '{':
				bad = append(bad, fmt.Sprintf("%s: inputSchema is %s, not a JSON Schema object", t.Name, clip(raw)))
				continue
			}
			if _, err := schema.CompileTool(raw); err != nil {
				if errors.Is(err, schema.ErrCannotJudge) {
					unjudged = append(unjudged, fmt.Sprintf("%s (%s)", t.Name, oneLine(err)))
					continue
				}
				bad = append(bad, fmt.Sprintf("%s: inputSchema %s is not a valid JSON Schema of its dialect: %s", t.Name, clip(raw), oneLine(err)))
			}
		}
		if len(unjudged) > 0 {
			h.Notef("not judged: %s", strings.Join(unjudged, "; "))
		}
		if len(bad) > 0 {
			h.Failf("%d of %d tools: %s", len(bad), len(tools), strings.Join(bad, "; "))
		}
		h.Notef("%d inputSchemas valid", len(tools)-len(unjudged))
	})
}

// oneLine is an error's text on one line.
func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }

// isReadOnly reports whether the tool is annotated readOnlyHint: true.
func (t listedTool) isReadOnly() bool {
	return t.Def.Annotations != nil && t.Def.Annotations.ReadOnlyHint != nil && *t.Def.Annotations.ReadOnlyHint
}

// taskOnly reports whether the tool can only run as a task.
func (t listedTool) taskOnly() bool {
	return t.Def.Execution != nil && t.Def.Execution.TaskSupport == "required"
}

func toolsOutputSchema(h *H) {
	recallToolsList(h)
	onEither(h, func(r rpc) {
		tools := allTools(r.walkTools())
		strict := !protocol.Version(h.Version()).Before(protocol.V20251125)
		if strict {
			listedOutputSchemasValid(h, tools) // tools_outputschema.go
		}
		targets := structuredTargets(h, tools)
		if len(targets) == 0 {
			h.Skip(noStructuredTarget)
		}
		judged := 0
		for _, tg := range targets {
			sch, err := schema.CompileTool(tg.tool.Def.OutputSchema)
			if err != nil {
				if strict && !errors.Is(err, schema.ErrCannotJudge) {
					h.Failf("tool %s: outputSchema %s is not a valid JSON Schema of its dialect: %s", tg.tool.Name, clip(tg.tool.Def.OutputSchema), oneLine(err))
				}
				h.Notef("tool %s: outputSchema not judged (%s)", tg.tool.Name, oneLine(err))
				continue
			}
			m := r.call("tools/call", map[string]any{"name": tg.tool.Name, "arguments": tg.args}, h.Cfg().CallTimeout)
			o := parseOutcome(m)
			if o.Failed() {
				h.Notef("tool %s (%s) answered id %s with an error: not judged", tg.tool.Name, tg.why, m.Env.ID)
				continue
			}
			var res struct {
				Structured json.RawMessage `json:"structuredContent"`
			}
			_ = json.Unmarshal(m.Env.Result, &res)
			if len(res.Structured) == 0 || string(res.Structured) == "null" {
				h.Failf("tool %s has an outputSchema but its result (id %s) carries no structuredContent", tg.tool.Name, m.Env.ID)
			}
			if err := schema.ValidateJSON(sch, res.Structured); err != nil {
				h.Failf("tool %s: structuredContent %s (id %s) does not conform to its outputSchema %s: %s",
					tg.tool.Name, clip(res.Structured), m.Env.ID, clip(tg.tool.Def.OutputSchema), oneLine(err))
			}
			judged++
			h.Notef("tool %s (%s): structuredContent conforms", tg.tool.Name, tg.why)
		}
		if judged == 0 {
			h.Skip("no call of a tool with an outputSchema gave a result to judge")
		}
	})
}

// structuredTarget is a tool with an outputSchema that a check may call
// without side effects, with its arguments and why it was picked.
type structuredTarget struct {
	tool listedTool
	args map[string]any
	why  string
}

// noStructuredTarget is the SKIP reason of a target structuredTargets
// finds nothing to call on.
const noStructuredTarget = "no tool with an outputSchema can be called safely: none is annotated readOnlyHint: true with an inputSchema that accepts {}, and the manifest declares no structured role ({tool, arguments})"

// structuredTargets picks, among tools, those with an outputSchema that may
// be called safely: the manifest's structured role, and every tool
// annotated readOnlyHint: true (not task-only) whose inputSchema accepts
// {} (called with {}).
func structuredTargets(h *H, tools []listedTool) []structuredTarget {
	var targets []structuredTarget
	role, hasRole := h.Target().Roles["structured"]
	for _, t := range tools {
		if len(t.Def.OutputSchema) == 0 || string(t.Def.OutputSchema) == "null" {
			continue
		}
		switch {
		case hasRole && role.Tool == t.Name:
			targets = append(targets, structuredTarget{t, role.Arguments, "the structured role"})
		case t.isReadOnly() && !t.taskOnly() && acceptsEmpty(t.Def.InputSchema):
			targets = append(targets, structuredTarget{t, map[string]any{}, "read-only, takes {}"})
		}
	}
	return targets
}

// acceptsEmpty reports whether {} is valid against an inputSchema (one
// that compiles).
func acceptsEmpty(raw json.RawMessage) bool {
	sch, err := schema.CompileTool(raw)
	return err == nil && schema.ValidateJSON(sch, json.RawMessage(`{}`)) == nil
}

var toolNameChars = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

func toolsNames(h *H) {
	recallToolsList(h)
	onEither(h, func(r rpc) {
		tools := allTools(r.walkTools())
		var bad []string
		count := map[string]int{}
		for _, t := range tools {
			count[t.Name]++
			switch n := len(t.Name); {
			case n == 0 || n > 128:
				bad = append(bad, fmt.Sprintf("%q is %d characters long", t.Name, n))
			case !toolNameChars.MatchString(t.Name):
				bad = append(bad, fmt.Sprintf("%q has characters other than A-Z, a-z, 0-9, _, - and .", t.Name))
			}
		}
		for n, c := range count {
			if c > 1 {
				bad = append(bad, fmt.Sprintf("%q is listed %d times", n, c))
			}
		}
		sort.Strings(bad)
		if len(bad) > 0 {
			h.Failf("tool names: %s", strings.Join(bad, "; "))
		}
		h.Notef("%d tool names checked", len(tools))
	})
}

// names lists the tools' names, in order.
func toolNamesOf(tools []listedTool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}

func toolsListStable(h *H) {
	recallToolsList(h)
	var first, again []string
	onEither(h, func(r rpc) {
		first = toolNamesOf(allTools(r.walkTools()))
		r.ping("between two tools/list")
		m := r.call("tools/call", map[string]any{"name": "mcp-conform-no-such-tool", "arguments": map[string]any{}}, h.Cfg().OpTimeout)
		h.Notef("a tools/call of an unknown tool between the lists was answered (id %s, %s)", m.Env.ID, m.Env.Kind)
		again = toolNamesOf(allTools(r.relist()))
	})
	var other []string
	onEither(h, func(r rpc) { other = toolNamesOf(allTools(r.walkTools())) })
	sorted := func(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }
	if !slices.Equal(sorted(first), sorted(again)) {
		h.Failf("tools/list changed after other requests on the connection: %v, then %v", first, again)
	}
	if !slices.Equal(sorted(first), sorted(other)) {
		h.Failf("tools/list differs on a new connection: %v, there %v", first, other)
	}
	if !slices.Equal(first, again) || !slices.Equal(first, other) {
		h.Warnf("tools/list gave the same tools in another order: %v, then %v, on a new connection %v", first, again, other)
	}
	h.Notef("%d tools, the same three times", len(first))
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

// describeError is an error object's code and message.
func describeError(e *jsonrpc.ErrorObject) string {
	if e == nil {
		return "no error object"
	}
	return fmt.Sprintf("%d %q", e.Code, e.Message)
}

// errorCode is an error object's code (0 without one).
func errorCode(e *jsonrpc.ErrorObject) int {
	if e == nil {
		return 0
	}
	return e.Code
}

package draft

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/suites"
)

func TestWords(t *testing.T) {
	for in, want := range map[string]string{
		"stepMs":            "step ms",
		"idempotency_key":   "idempotency key",
		"HTTPTimeout":       "http timeout",
		"delay-seconds":     "delay seconds",
		"items":             "items",
		"operationKey":      "operation key",
		"trigger-long-op":   "trigger long op",
		"durationMs2":       "duration ms2",
		"simulate research": "simulate research",
	} {
		if got := strings.Join(words(in), " "); got != want {
			t.Errorf("words(%q) = %q, want %q", in, got, want)
		}
	}
}

// tool builds a Tool from its tools/list JSON.
func tool(t *testing.T, js string) Tool {
	t.Helper()
	tl, err := parseTool(json.RawMessage(js))
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

func TestTiming(t *testing.T) {
	for _, tc := range []struct {
		name, js string
		ok       bool
		args     map[string]any
	}{
		{"ms per step", `{"name":"slow","inputSchema":{"properties":{"steps":{"type":"integer"},"stepMs":{"type":"integer"}}}}`,
			true, map[string]any{"steps": int64(6), "stepMs": int64(150)}},
		{"seconds from the description", `{"name":"op","inputSchema":{"properties":{"duration":{"type":"number","description":"Duration of the operation in seconds"},"steps":{"type":"number"}}}}`,
			true, map[string]any{"steps": int64(6), "duration": 0.9}},
		{"integer seconds", `{"name":"op","inputSchema":{"properties":{"seconds":{"type":"integer"}}}}`,
			true, map[string]any{"seconds": int64(1)}},
		{"bounds", `{"name":"op","inputSchema":{"properties":{"delayMs":{"type":"integer","minimum":2000},"steps":{"type":"integer","maximum":3}}}}`,
			true, map[string]any{"steps": int64(3), "delayMs": int64(2000)}},
		{"ms from the description", `{"name":"op","inputSchema":{"properties":{"wait":{"type":"integer","description":"in milliseconds"}}}}`,
			true, map[string]any{"wait": int64(900)}},
		{"items is not ms", `{"name":"list","inputSchema":{"properties":{"items":{"type":"integer"}}}}`, false, nil},
		{"a timeout is not a duration", `{"name":"fetch","inputSchema":{"properties":{"timeoutMs":{"type":"integer"}}}}`, false, nil},
		{"a string is not a duration", `{"name":"fetch","inputSchema":{"properties":{"delay":{"type":"string"}}}}`, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl := tool(t, tc.js)
			tm, ok := timingOf(tl)
			if ok != tc.ok {
				t.Fatalf("timingOf ok = %v, want %v (%+v)", ok, tc.ok, tm)
			}
			if !ok {
				return
			}
			args, _ := tm.args(tl, slowTotal, slowSteps)
			if !equalJSON(args, tc.args) {
				t.Errorf("args = %v, want %v", args, tc.args)
			}
		})
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func TestKeyScore(t *testing.T) {
	for _, tc := range []struct {
		prop Prop
		min  int // 0: not a key
	}{
		{Prop{Name: "idempotency_key", Type: "string"}, 3},
		{Prop{Name: "operationKey", Type: "string", Required: true}, 4},
		{Prop{Name: "request_id", Type: "string"}, 3},
		{Prop{Name: "key", Type: "string"}, 1},
		{Prop{Name: "token", Type: "string", Description: "Reused on retries so the server can deduplicate"}, 2},
		{Prop{Name: "idempotency_key", Type: "integer"}, 0},
		{Prop{Name: "title", Type: "string"}, 0},
		{Prop{Name: "keyboard", Type: "string"}, 0},
		{Prop{Name: "monkey", Type: "string"}, 0},
	} {
		got, _ := keyScore(tc.prop)
		if tc.min == 0 && got != 0 || tc.min > 0 && got < tc.min {
			t.Errorf("keyScore(%s %s %q) = %d, want 0 for 0, at least the minimum otherwise: %d", tc.prop.Name, tc.prop.Type, tc.prop.Description, got, tc.min)
		}
	}
}

func TestSample(t *testing.T) {
	min3, max4 := 3, 4
	lo := 5.0
	for _, tc := range []struct {
		prop Prop
		want any
	}{
		{Prop{Name: "a", Type: "string", Enum: []any{"x", "y"}}, "x"},
		{Prop{Name: "a", Type: "integer", Minimum: &lo}, int64(5)},
		{Prop{Name: "a", Type: "string", MaxLength: &max4}, "mcp-"},
		{Prop{Name: "a", Type: "string", Format: "email"}, "mcp-conform@example.com"},
		{Prop{Name: "a", Type: "boolean"}, false},
		{Prop{Name: "a", Type: "string", MinLength: &min3, HasDefault: true, Default: "dflt"}, "dflt"},
	} {
		got, _ := sample(tc.prop)
		if !equalJSON(got, tc.want) {
			t.Errorf("sample(%+v) = %v, want %v", tc.prop, got, tc.want)
		}
	}
	if _, note := sample(Prop{Name: "code", Type: "string", Pattern: "^[A-Z]{3}$"}); !strings.Contains(note, "pattern") {
		t.Errorf("a pattern the sample does not match is not noted: %q", note)
	}
}

// TestPropose covers the choices tools/list alone settles, and what a
// draft must not propose.
func TestPropose(t *testing.T) {
	list := func(js ...string) []Tool {
		var ts []Tool
		for _, j := range js {
			ts = append(ts, tool(t, j))
		}
		return ts
	}
	const (
		slowRO   = `{"name":"slow","description":"reports progress","annotations":{"readOnlyHint":true},"inputSchema":{"properties":{"steps":{"type":"integer"},"stepMs":{"type":"integer"}}}}`
		slowRW   = `{"name":"slow_write","description":"reports progress","annotations":{"readOnlyHint":false},"inputSchema":{"properties":{"seconds":{"type":"number"}}}}`
		slowNone = `{"name":"sleepy","description":"reports progress","inputSchema":{"properties":{"seconds":{"type":"number"}}}}`
		mut      = `{"name":"create","annotations":{"idempotentHint":true,"readOnlyHint":false,"destructiveHint":false},"inputSchema":{"required":["operation_key","title"],"properties":{"operation_key":{"type":"string"},"title":{"type":"string"}}}}`
		mutKey   = `{"name":"upsert","annotations":{"idempotentHint":true},"inputSchema":{"properties":{"key":{"type":"string"},"value":{"type":"string"}}}}`
		notIdem  = `{"name":"append","annotations":{"idempotentHint":false},"inputSchema":{"properties":{"operation_key":{"type":"string"}}}}`
		stats    = `{"name":"create_stats","annotations":{"readOnlyHint":true},"inputSchema":{"properties":{"operation_key":{"type":"string"}}},"outputSchema":{"properties":{"executions":{"type":"integer"},"label":{"type":"string"}}}}`
		statsNoS = `{"name":"create_stats","annotations":{"readOnlyHint":true},"inputSchema":{"properties":{"operation_key":{"type":"string"}}}}`
		lookup   = `{"name":"find_by_key","annotations":{"readOnlyHint":true},"inputSchema":{"required":["operation_key"],"properties":{"operation_key":{"type":"string"}}}}`
		task     = `{"name":"research","execution":{"taskSupport":"required"},"inputSchema":{"required":["topic"],"properties":{"topic":{"type":"string"}}}}`
		taskSlow = `{"name":"job","execution":{"taskSupport":"required"},"annotations":{"readOnlyHint":true},"description":"reports progress","inputSchema":{"properties":{"seconds":{"type":"number"}}}}`
		flood    = `{"name":"flood","annotations":{"readOnlyHint":true},"inputSchema":{"properties":{"count":{"type":"integer","maximum":500},"pad":{"type":"integer"}}}}`
		silent   = `{"name":"idle_wait","description":"stays silent: no progress","annotations":{"readOnlyHint":true},"inputSchema":{"properties":{"seconds":{"type":"number"}}}}`
	)
	for _, tc := range []struct {
		name  string
		tools []Tool
		// want maps role to "tool" (enabled) or "-tool" (commented out);
		// a role absent from want must have no proposal.
		want map[string]string
		// check runs more assertions.
		check func(t *testing.T, d *Draft)
	}{
		{"nothing", list(`{"name":"echo","annotations":{"readOnlyHint":true},"inputSchema":{"properties":{"text":{"type":"string"}}}}`), map[string]string{}, nil},
		{"only read-only tools are slow", list(slowRW, slowNone, slowRO), map[string]string{"slow": "slow", "flood": "slow"}, func(t *testing.T, d *Draft) {
			if p := d.Proposal("slow"); len(p.Others) != 0 {
				t.Errorf("slow's other candidates %v: tools not annotated read-only are never candidates", p.Others)
			}
		}},
		{"task-only tools are not slow", list(taskSlow), map[string]string{"task": "job"}, nil},
		{"keyed mutation with a counting probe and a lookup", list(mut, notIdem, stats, lookup), map[string]string{"mutation": "create", "lookup": "find_by_key"}, func(t *testing.T, d *Draft) {
			m := d.Proposal("mutation")
			if m.Key != "operation_key" || m.Probe["tool"] != "create_stats" || m.Probe["field"] != "executions" || m.Arguments["title"] == nil {
				t.Errorf("mutation %+v", m)
			}
			if _, ok := m.Arguments["operation_key"]; ok {
				t.Errorf("the key is in the role's arguments: %v", m.Arguments)
			}
		}},
		{"a probe without an output schema waits for a call", list(mut, statsNoS, lookup), map[string]string{"mutation": "-create", "lookup": "-find_by_key"}, func(t *testing.T, d *Draft) {
			if m := d.Proposal("mutation"); m.Probe["field"] != "FIELD" || !strings.Contains(m.Disabled, "output schema") {
				t.Errorf("mutation %+v: want a FIELD template, disabled for the unknown field", m)
			}
		}},
		{"no probe, no mutation", list(mut), map[string]string{"mutation": "-create"}, nil},
		{"a generic key with an optional argument to change", list(mutKey, `{"name":"upsert_count","annotations":{"readOnlyHint":true},"inputSchema":{"properties":{"key":{"type":"string"}}},"outputSchema":{"properties":{"count":{"type":"integer"}}}}`),
			map[string]string{"mutation": "upsert"}, func(t *testing.T, d *Draft) {
				if m := d.Proposal("mutation"); m.Key != "key" || m.Arguments["value"] == nil {
					t.Errorf("mutation %+v: want key 'key' and value set (IDEM-KEY-REUSE changes it)", m)
				}
			}},
		{"task with required arguments", list(task), map[string]string{"task": "research"}, func(t *testing.T, d *Draft) {
			if p := d.Proposal("task"); p.Arguments["topic"] == nil || !anyHas(p.Check, "not annotated read-only") {
				t.Errorf("task %+v", p)
			}
		}},
		{"flood within its bounds", list(flood), map[string]string{"flood": "flood"}, func(t *testing.T, d *Draft) {
			if p := d.Proposal("flood"); !equalJSON(p.Arguments, map[string]any{"count": 500, "pad": 1000}) {
				t.Errorf("flood arguments %v", p.Arguments)
			}
		}},
		{"silent only when it says so", list(slowRO, silent), map[string]string{"slow": "slow", "flood": "slow", "silent": "idle_wait"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Propose(tc.tools, "stdio")
			got := map[string]string{}
			for _, p := range d.Proposals {
				got[p.Role] = p.Tool
				if !p.Enabled {
					got[p.Role] = "-" + p.Tool
				}
			}
			if !equalJSON(got, tc.want) {
				t.Errorf("proposals %v, want %v", got, tc.want)
			}
			for _, r := range Roles {
				if d.Proposal(r) == nil && d.Missing[r] == "" {
					t.Errorf("role %s: neither proposed nor said why not", r)
				}
			}
			if tc.check != nil {
				tc.check(t, d)
			}
			d.Name, d.Command = "x", []string{"server"}
			if _, err := Parse(Render(d)); err != nil {
				t.Errorf("rendered draft does not load: %v\n%s", err, Render(d))
			}
		})
	}
}

func anyHas(l []string, sub string) bool {
	return slices.ContainsFunc(l, func(s string) bool { return strings.Contains(s, sub) })
}

// TestRenderHostileNames: names and texts from the server cannot break the
// YAML or its comments (quotes, colons, line breaks, a leading #).
func TestRenderHostileNames(t *testing.T) {
	d := &Draft{Name: "# not: a comment\n", Transport: "stdio", Command: []string{"srv", "--flag=a: b", "#x"}, Restart: true, Missing: map[string]string{}}
	d.Proposals = []*Proposal{{Role: "slow", Tool: "we: ird\"\n#tool", Enabled: true, Arguments: map[string]any{"a: b": "c\nd", "n": 1},
		Why: []string{"line\nbreak and \x1b[31m escape"}, Seen: []string{strings.Repeat("long ", 60)}}}
	for _, r := range Roles[1:] {
		d.Missing[r] = "none\nat all"
	}
	y := Render(d)
	m, err := Parse(y)
	if err != nil {
		t.Fatalf("%v\n%s", err, y)
	}
	if m.Name != d.Name || !slices.Equal(m.Command, d.Command) || m.Roles["slow"].Tool != d.Proposals[0].Tool || m.Roles["slow"].Arguments["a: b"] != "c\nd" {
		t.Errorf("round trip lost something: %+v\n%s", m, y)
	}
	if strings.Contains(string(y), "\x1b") {
		t.Errorf("an escape sequence reached the file:\n%s", y)
	}
	for _, l := range strings.Split(string(y), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "#") && len(l) > commentWidth+40 {
			t.Errorf("comment line of %d bytes not wrapped: %q", len(l), l)
		}
	}
}

// TestUnlocked compares role sets through the catalog: a role set unlocks
// exactly the checks whose roles it holds, on their transports.
func TestUnlocked(t *testing.T) {
	cat := suites.Catalog()
	none := Unlocked(cat, "stdio", nil)
	if len(none) != 0 {
		t.Errorf("no roles unlock %v", none)
	}
	slow := Unlocked(cat, "stdio", []string{"slow"})
	if !slices.Contains(slow, "CANCEL-STDIO-SUPPRESS") || slices.Contains(slow, "CANCEL-HTTP-CLOSE") || slices.Contains(slow, "IDEM-LOST-RESPONSE") {
		t.Errorf("slow on stdio unlocks %v", slow)
	}
	all := Unlocked(cat, "http", Roles)
	for _, c := range cat {
		if len(c.Roles) > 0 && slices.Contains(c.Transports, "http") && !slices.Contains(all, c.ID) {
			t.Errorf("every role does not unlock %s on http", c.ID)
		}
	}
	// The ids the summary's notes name are in the catalog.
	for _, id := range []string{"CANCEL-HTTP-CLOSE", "CANCEL-HTTP-DISCONNECT", "TIMEOUT-CANCEL-STOPS", "FLOW-SERVER-BOUNDED", "IDEM-RESTART"} {
		if _, ok := suites.Lookup(id); !ok {
			t.Errorf("beyondRoles names %s, which the catalog lacks", id)
		}
	}
}

// TestCallerTimeoutDefault keeps a zero timeout from meaning "no bound".
func TestCallerTimeoutDefault(t *testing.T) {
	if c := NewCaller(nil, nil, CallReadOnly, 0); c.timeout != 15*time.Second {
		t.Errorf("default call timeout %s", c.timeout)
	}
}

// TestSlowStandsIn: with no tool that says it floods or stays silent, a
// read-only slow tool with a steps count and a per-step duration stands in
// for both — many short steps for the flood, one long step (HTTP only) for
// the silent call — and a tool without a steps count stands in for neither.
func TestSlowStandsIn(t *testing.T) {
	slow := `{"name":"slow","description":"sends progress after each step","annotations":{"readOnlyHint":true},"inputSchema":{"properties":{"steps":{"type":"integer"},"stepMs":{"type":"integer","minimum":5}}}}`
	noSteps := `{"name":"wait","description":"reports progress","annotations":{"readOnlyHint":true},"inputSchema":{"properties":{"seconds":{"type":"number"}}}}`
	tools := func(raw ...string) []Tool {
		var ts []Tool
		for _, r := range raw {
			ts = append(ts, tool(t, r))
		}
		return ts
	}
	d := Propose(tools(slow), "http")
	f, s := d.Proposal("flood"), d.Proposal("silent")
	if f == nil || !equalJSON(f.Arguments, map[string]any{"steps": 400, "stepMs": 5}) {
		t.Errorf("flood %+v: want slow with 400 steps of the shortest step its schema allows", f)
	}
	if s == nil || !equalJSON(s.Arguments, map[string]any{"steps": 1, "stepMs": 3000}) {
		t.Errorf("silent %+v: want slow with one 3 s step", s)
	}
	if d := Propose(tools(slow), "stdio"); d.Proposal("silent") != nil {
		t.Errorf("silent proposed on stdio (SSE-HEARTBEAT runs on HTTP only)")
	}
	if d := Propose(tools(noSteps), "http"); d.Proposal("flood") != nil || d.Proposal("silent") != nil {
		t.Errorf("a tool without a steps count stood in: flood %+v silent %+v", d.Proposal("flood"), d.Proposal("silent"))
	}
}

// TestTagProbe: the probe of tagged calls takes the argument the slow tool
// is tagged by (probe: {tool, tag} names one argument both tools take), so
// a probe that only takes "tag" is not the probe of a tool tagged by label.
func TestTagProbe(t *testing.T) {
	slow := func(arg string) string {
		return `{"name":"long_job","inputSchema":{"properties":{"ticks":{"type":"integer"},"` + arg + `":{"type":"string"}}}}`
	}
	probe := func(arg string) string {
		return `{"name":"job_status","description":"Reports what long_job ran for a given ` + arg + `.","annotations":{"readOnlyHint":true},"inputSchema":{"properties":{"` + arg + `":{"type":"string"}}}}`
	}
	for _, tc := range []struct {
		name, slow, probe  string
		wantProbe, wantArg string
	}{
		{"tag and tag", slow("tag"), probe("tag"), "job_status", "tag"},
		{"label and label", slow("label"), probe("label"), "job_status", "label"},
		{"label and tag: not its probe", slow("label"), probe("tag"), "", ""},
		{"tag and label: not its probe", slow("tag"), probe("label"), "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, p := tool(t, tc.slow), tool(t, tc.probe)
			gotProbe, gotArg := tagProbe([]Tool{s, p}, s)
			if gotProbe != tc.wantProbe || gotArg != tc.wantArg {
				t.Errorf("tagProbe = (%q, %q), want (%q, %q)", gotProbe, gotArg, tc.wantProbe, tc.wantArg)
			}
		})
	}
}

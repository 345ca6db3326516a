package gosdk

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// session connects an SDK client to a server with the test tools
// registered with opts, over the SDK's in-memory pipe; progress
// notifications go to onProgress.
func session(t *testing.T, opts Options, onProgress func(*mcp.ProgressNotificationParams)) *mcp.ClientSession {
	t.Helper()
	return sessionWith(t, func(s *mcp.Server) {
		if _, err := Register(s, opts); err != nil {
			t.Fatal(err)
		}
	}, onProgress)
}

// sessionWith is session with the tools added by add.
func sessionWith(t *testing.T, add func(*mcp.Server), onProgress func(*mcp.ProgressNotificationParams)) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	s := mcp.NewServer(&mcp.Implementation{Name: "testtools-test", Version: "0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "own", Description: "the server's own tool"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "own"}}}, nil, nil
	})
	add(s)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	copts := &mcp.ClientOptions{}
	if onProgress != nil {
		copts.ProgressNotificationHandler = func(_ context.Context, r *mcp.ProgressNotificationClientRequest) { onProgress(r.Params) }
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, copts).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return r
}

// structured decodes a result's structured content into v.
func structured(t *testing.T, r *mcp.CallToolResult, v any) {
	t.Helper()
	b, err := json.Marshal(r.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
}

func text(r *mcp.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, " ")
}

func toolNames(t *testing.T, cs *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		m[tool.Name] = tool
	}
	return m
}

// TestSwitch: without the environment switch or Options.Enabled nothing is
// registered; with either, the five tools are, beside the server's own.
func TestSwitch(t *testing.T) {
	all := []string{"conform_lookup", "conform_probe", "conform_slow", "conform_write", "conform_write_stats", "own"}
	for _, tc := range []struct {
		name string
		env  string
		opts Options
		want []string
	}{
		{"off", "", Options{}, []string{"own"}},
		{"env other than 1", "true", Options{}, []string{"own"}},
		{"env", "1", Options{}, all},
		{"option", "", Options{Enabled: true}, all},
		{"prefix", "1", Options{Prefix: "t_"}, []string{"own", "t_lookup", "t_probe", "t_slow", "t_write", "t_write_stats"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(EnvSwitch, tc.env)
			t.Setenv(EnvStore, "")
			var got []string
			for n := range toolNames(t, session(t, tc.opts, nil)) {
				got = append(got, n)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("tools %v, want %v", got, tc.want)
			}
		})
	}
}

// TestShared: one Tools added to two servers (one per HTTP session, as a
// per-request server factory does) shares the probe and the store.
func TestShared(t *testing.T) {
	t.Setenv(EnvSwitch, "")
	if tools, err := New(Options{}); tools != nil || err != nil {
		t.Fatalf("New without the switch: %v %v", tools, err)
	}
	tools, err := New(Options{Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	a, b := sessionWith(t, tools.AddTo, nil), sessionWith(t, tools.AddTo, nil)
	call(t, a, "conform_slow", map[string]any{"steps": 2, "stepMs": 1, "tag": "shared"})
	var st WorkState
	structured(t, call(t, b, "conform_probe", map[string]any{"tag": "shared"}), &st)
	if !st.Finished {
		t.Errorf("the other server's probe: %+v", st)
	}
	first := call(t, a, "conform_write", map[string]any{"operation_key": "shared-key", "note": "n"})
	if again := call(t, b, "conform_write", map[string]any{"operation_key": "shared-key", "note": "n"}); text(again) != text(first) {
		t.Errorf("the other server: %s, first %s", text(again), text(first))
	}
	if n, _ := tools.Store().Executions(context.Background(), "shared-key"); n != 1 {
		t.Errorf("%d executions, want 1", n)
	}
}

// TestAnnotationsAndSchemas: what `mcp-conform init` reads to propose the
// roles unaided is in tools/list.
func TestAnnotationsAndSchemas(t *testing.T) {
	tools := toolNames(t, session(t, Options{Enabled: true}, nil))
	schema := func(s any) map[string]any {
		b, _ := json.Marshal(s)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		return m
	}
	prop := func(s any, name string) map[string]any {
		p, _ := schema(s)["properties"].(map[string]any)
		v, _ := p[name].(map[string]any)
		return v
	}
	required := func(s any) []string {
		var out []string
		r, _ := schema(s)["required"].([]any)
		for _, x := range r {
			out = append(out, x.(string))
		}
		return out
	}
	slow := tools["conform_slow"]
	if !slow.Annotations.ReadOnlyHint || !strings.Contains(slow.Description, "progress") {
		t.Errorf("slow: annotations %+v, description %q", slow.Annotations, slow.Description)
	}
	for _, a := range []string{"steps", "stepMs"} {
		if prop(slow.InputSchema, a)["type"] != "integer" {
			t.Errorf("slow: %s is %v", a, prop(slow.InputSchema, a))
		}
	}
	if prop(slow.InputSchema, "tag")["type"] != "string" || len(required(slow.InputSchema)) != 0 {
		t.Errorf("slow: input schema %v", schema(slow.InputSchema))
	}
	probe := tools["conform_probe"]
	for _, f := range []string{"started", "finished", "cancelled"} {
		if prop(probe.OutputSchema, f)["type"] != "boolean" {
			t.Errorf("probe: output %s is %v", f, prop(probe.OutputSchema, f))
		}
	}
	if !probe.Annotations.ReadOnlyHint || prop(probe.OutputSchema, "stepsRun")["type"] != "integer" || !slices.Equal(required(probe.InputSchema), []string{"tag"}) {
		t.Errorf("probe: %+v %v %v", probe.Annotations, schema(probe.InputSchema), schema(probe.OutputSchema))
	}
	w := tools["conform_write"]
	if a := w.Annotations; a.ReadOnlyHint || !a.IdempotentHint || a.DestructiveHint == nil || *a.DestructiveHint {
		t.Errorf("write: annotations %+v", a)
	}
	if r := required(w.InputSchema); !slices.Contains(r, "operation_key") || prop(w.InputSchema, "operation_key")["type"] != "string" {
		t.Errorf("write: input %v", schema(w.InputSchema))
	}
	st := tools["conform_write_stats"]
	if !st.Annotations.ReadOnlyHint || len(required(st.InputSchema)) != 0 || prop(st.InputSchema, "operation_key")["type"] != "string" ||
		prop(st.OutputSchema, "executions")["type"] != "integer" {
		t.Errorf("stats: %+v %v %v", st.Annotations, schema(st.InputSchema), schema(st.OutputSchema))
	}
	l := tools["conform_lookup"]
	if !l.Annotations.ReadOnlyHint || !slices.Equal(required(l.InputSchema), []string{"operation_key"}) || prop(l.OutputSchema, "found")["type"] != "boolean" {
		t.Errorf("lookup: %+v %v %v", l.Annotations, schema(l.InputSchema), schema(l.OutputSchema))
	}
}

// progressLog collects progress notifications.
type progressLog struct {
	mu    sync.Mutex
	got   []*mcp.ProgressNotificationParams
	first chan struct{}
	once  sync.Once
}

func newProgressLog() *progressLog { return &progressLog{first: make(chan struct{})} }

func (p *progressLog) add(n *mcp.ProgressNotificationParams) {
	p.mu.Lock()
	p.got = append(p.got, n)
	p.mu.Unlock()
	p.once.Do(func() { close(p.first) })
}

func (p *progressLog) all() []*mcp.ProgressNotificationParams {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.got)
}

// TestSlowProgress: one progress per step on the request's token, 1..n of
// n, then the result; the probe reports the tagged call finished.
func TestSlowProgress(t *testing.T) {
	log := newProgressLog()
	cs := session(t, Options{Enabled: true}, log.add)
	p := &mcp.CallToolParams{Name: "conform_slow", Arguments: map[string]any{"steps": 4, "stepMs": 5, "tag": "p1"}}
	p.SetProgressToken("tok-1")
	r, err := cs.CallTool(context.Background(), p)
	if err != nil || r.IsError {
		t.Fatalf("slow: %v %+v", err, r)
	}
	var st WorkState
	structured(t, call(t, cs, "conform_probe", map[string]any{"tag": "p1"}), &st)
	if want := (WorkState{Tag: "p1", Started: true, Steps: 4, StepsRun: 4, ProgressSent: 4, Finished: true}); st != want {
		t.Errorf("probe %+v, want %+v", st, want)
	}
	// Notifications may be handled after the result: wait, bounded.
	deadline := time.Now().Add(5 * time.Second)
	for len(log.all()) < 4 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	got := log.all()
	if len(got) != 4 {
		t.Fatalf("%d progress notifications, want 4", len(got))
	}
	for i, n := range got {
		if n.ProgressToken != "tok-1" || n.Progress != float64(i+1) || n.Total != 4 || n.Message != fmt.Sprintf("step %d/4", i+1) {
			t.Errorf("progress %d: %+v", i, n)
		}
	}
	// Untagged and tokenless calls run too; an unknown tag is all zero.
	if r := call(t, cs, "conform_slow", map[string]any{"steps": 1, "stepMs": 1}); r.IsError {
		t.Errorf("untagged: %s", text(r))
	}
	structured(t, call(t, cs, "conform_probe", map[string]any{"tag": "never"}), &st)
	if st != (WorkState{Tag: "never"}) {
		t.Errorf("unknown tag: %+v", st)
	}
	if r := call(t, cs, "conform_slow", map[string]any{"steps": 10001}); !r.IsError {
		t.Errorf("steps 10001 accepted: %s", text(r))
	}
}

// TestSlowCancel: a call cancelled after its first progress stops at the
// next step: the probe shows it cancelled, not finished, with no step run
// and no progress sent after the one the client had when it cancelled
// (give or take the step that was under way).
func TestSlowCancel(t *testing.T) {
	log := newProgressLog()
	cs := session(t, Options{Enabled: true}, log.add)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := &mcp.CallToolParams{Name: "conform_slow", Arguments: map[string]any{"steps": 200, "stepMs": 20, "tag": "c1"}}
	p.SetProgressToken("tok-c")
	done := make(chan error, 1)
	go func() { _, err := cs.CallTool(ctx, p); done <- err }()
	select {
	case <-log.first:
	case <-time.After(10 * time.Second):
		t.Fatal("no progress within 10 s")
	}
	cancel() // the client sends notifications/cancelled
	if err := <-done; err == nil {
		t.Fatal("the cancelled call returned no error")
	}
	var st WorkState
	deadline := time.Now().Add(5 * time.Second)
	for {
		structured(t, call(t, cs, "conform_probe", map[string]any{"tag": "c1"}), &st)
		if st.Cancelled || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !st.Cancelled || st.Finished || st.StepsRun >= 200 || st.ProgressSent != st.StepsRun {
		t.Fatalf("after the cancellation the probe says %+v", st)
	}
	// The handler has returned (it sets cancelled last): nothing runs on.
	time.Sleep(100 * time.Millisecond) // 5 steps' time: a step still running would show
	var later WorkState
	structured(t, call(t, cs, "conform_probe", map[string]any{"tag": "c1"}), &later)
	if later != st {
		t.Errorf("the work went on after the cancellation: %+v, then %+v", st, later)
	}
	if n := len(log.all()); n > st.ProgressSent {
		t.Errorf("the client got %d progress notifications, the tool sent %d", n, st.ProgressSent)
	}
}

// TestWrite: one execution per key; retries replay the stored bytes; the
// same key with another note is refused and runs nothing; stats per key
// and in total; lookup finds by key.
func TestWrite(t *testing.T) {
	for _, store := range []struct {
		name string
		open func(t *testing.T) Store
	}{
		{"memory", func(*testing.T) Store { return NewMemoryStore() }},
		{"file", func(t *testing.T) Store {
			s, err := OpenFileStore(filepath.Join(t.TempDir(), "store.json"))
			if err != nil {
				t.Fatal(err)
			}
			return s
		}},
	} {
		t.Run(store.name, func(t *testing.T) {
			cs := session(t, Options{Enabled: true, Store: store.open(t)}, nil)
			key := "mcpc-test-0123456789abcdef01234567"
			first := call(t, cs, "conform_write", map[string]any{"operation_key": key, "note": "a"})
			if first.IsError {
				t.Fatal(text(first))
			}
			for i := range 2 {
				again := call(t, cs, "conform_write", map[string]any{"operation_key": key, "note": "a"})
				a, _ := json.Marshal(first.StructuredContent)
				b, _ := json.Marshal(again.StructuredContent)
				if again.IsError || !bytes.Equal(a, b) || text(again) != text(first) {
					t.Errorf("replay %d: %s, first %s", i, b, a)
				}
			}
			if r := call(t, cs, "conform_write", map[string]any{"operation_key": key, "note": "b"}); !r.IsError || !strings.Contains(text(r), "other arguments") {
				t.Errorf("same key, other note: %s", text(r))
			}
			other := call(t, cs, "conform_write", map[string]any{"operation_key": key + "-2", "note": "b"})
			var s Stats
			structured(t, call(t, cs, "conform_write_stats", map[string]any{"operation_key": key}), &s)
			if s.Executions != 1 {
				t.Errorf("stats for the key: %+v", s)
			}
			structured(t, call(t, cs, "conform_write_stats", nil), &s)
			if s.Executions != 2 {
				t.Errorf("stats in total: %+v", s)
			}
			var l struct {
				Found  bool            `json:"found"`
				State  string          `json:"state"`
				Result json.RawMessage `json:"result"`
			}
			structured(t, call(t, cs, "conform_lookup", map[string]any{"operation_key": key + "-2"}), &l)
			o, _ := json.Marshal(other.StructuredContent)
			if !l.Found || l.State != StateCommitted || !bytes.Equal(l.Result, o) {
				t.Errorf("lookup: %+v, want the result %s", l, o)
			}
			structured(t, call(t, cs, "conform_lookup", map[string]any{"operation_key": "nothing-here"}), &l)
			if l.Found {
				t.Errorf("lookup of an unknown key: %+v", l)
			}
			if r := call(t, cs, "conform_write", map[string]any{"operation_key": "", "note": "x"}); !r.IsError {
				t.Errorf("empty key accepted: %s", text(r))
			}
		})
	}
}

// TestWriteClaimed: a key claimed by a call that has not committed is
// refused with "retry", and the retry after the commit gets the result.
func TestWriteClaimed(t *testing.T) {
	store := NewMemoryStore()
	cs := session(t, Options{Enabled: true, Store: store}, nil)
	key := "held-key-0001"
	c, err := store.Claim(context.Background(), key, Fingerprint(map[string]any{"note": "n"}))
	if err != nil || !c.Won {
		t.Fatal(c, err)
	}
	if r := call(t, cs, "conform_write", map[string]any{"operation_key": key, "note": "n"}); !r.IsError || !strings.Contains(text(r), "retry") {
		t.Errorf("claimed key: %s", text(r))
	}
	if err := store.Commit(context.Background(), c, json.RawMessage(`{"by":"the other call"}`)); err != nil {
		t.Fatal(err)
	}
	if r := call(t, cs, "conform_write", map[string]any{"operation_key": key, "note": "n"}); r.IsError || text(r) != `{"by":"the other call"}` {
		t.Errorf("retry after the commit: %s", text(r))
	}
}

// TestEnvStore: MCP_CONFORM_TEST_STORE names a FileStore, which a second
// registration (a restarted server) reads.
func TestEnvStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "store.json")
	t.Setenv(EnvSwitch, "1")
	t.Setenv(EnvStore, path)
	key := "env-store-key"
	first := call(t, session(t, Options{}, nil), "conform_write", map[string]any{"operation_key": key, "note": "n"})
	again := call(t, session(t, Options{}, nil), "conform_write", map[string]any{"operation_key": key, "note": "n"})
	if first.IsError || text(again) != text(first) {
		t.Errorf("second server: %s, first %s", text(again), text(first))
	}
	s, err := OpenFileStore(path)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := s.Executions(context.Background(), ""); n != 1 {
		t.Errorf("%d executions in the file, want 1", n)
	}
}

// TestOutputSchemaPropertiesAreObjects: the 2025 MCP schemas
// (Tool.outputSchema.properties) want every property schema to be an
// object; a Go field of type any infers the boolean schema true, which a
// 2025 client's schema validation refuses (mcp-conform's SCHEMA-VALID).
func TestOutputSchemaPropertiesAreObjects(t *testing.T) {
	for name, tool := range toolNames(t, session(t, Options{Enabled: true}, nil)) {
		if tool.OutputSchema == nil {
			continue
		}
		b, err := json.Marshal(tool.OutputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var s struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		for p, raw := range s.Properties {
			if len(raw) == 0 || raw[0] != '{' {
				t.Errorf("%s: outputSchema property %s is %s, want an object schema", name, p, raw)
			}
		}
	}
}

package schema

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// expectedMethods is the method table of each version, written down: method
// → definition, and for requests the result definition and how it was
// paired (see Pairing), "+task" when a task-augmented request gets
// CreateTaskResult, "+input" when the result may be InputRequiredResult.
// A change to a vendored schema or to the pairing rules shows up here.
var expectedMethods = map[string]map[string]string{
	v618: {
		"completion/complete":                  "CompleteRequest -> CompleteResult (name)",
		"elicitation/create":                   "ElicitRequest -> ElicitResult (name)",
		"initialize":                           "InitializeRequest -> InitializeResult (name)",
		"logging/setLevel":                     "SetLevelRequest -> EmptyResult (empty)",
		"notifications/cancelled":              "CancelledNotification",
		"notifications/initialized":            "InitializedNotification",
		"notifications/message":                "LoggingMessageNotification",
		"notifications/progress":               "ProgressNotification",
		"notifications/prompts/list_changed":   "PromptListChangedNotification",
		"notifications/resources/list_changed": "ResourceListChangedNotification",
		"notifications/resources/updated":      "ResourceUpdatedNotification",
		"notifications/roots/list_changed":     "RootsListChangedNotification",
		"notifications/tools/list_changed":     "ToolListChangedNotification",
		"ping":                                 "PingRequest -> EmptyResult (empty)",
		"prompts/get":                          "GetPromptRequest -> GetPromptResult (name)",
		"prompts/list":                         "ListPromptsRequest -> ListPromptsResult (name)",
		"resources/list":                       "ListResourcesRequest -> ListResourcesResult (name)",
		"resources/read":                       "ReadResourceRequest -> ReadResourceResult (name)",
		"resources/subscribe":                  "SubscribeRequest -> EmptyResult (empty)",
		"resources/templates/list":             "ListResourceTemplatesRequest -> ListResourceTemplatesResult (name)",
		"resources/unsubscribe":                "UnsubscribeRequest -> EmptyResult (empty)",
		"roots/list":                           "ListRootsRequest -> ListRootsResult (name)",
		"sampling/createMessage":               "CreateMessageRequest -> CreateMessageResult (name)",
		"tools/call":                           "CallToolRequest -> CallToolResult (name)",
		"tools/list":                           "ListToolsRequest -> ListToolsResult (name)",
	},
	v1125: {
		"completion/complete":                  "CompleteRequest -> CompleteResult (name)",
		"elicitation/create":                   "ElicitRequest -> ElicitResult (name) +task",
		"initialize":                           "InitializeRequest -> InitializeResult (name)",
		"logging/setLevel":                     "SetLevelRequest -> EmptyResult (empty)",
		"notifications/cancelled":              "CancelledNotification",
		"notifications/elicitation/complete":   "ElicitationCompleteNotification",
		"notifications/initialized":            "InitializedNotification",
		"notifications/message":                "LoggingMessageNotification",
		"notifications/progress":               "ProgressNotification",
		"notifications/prompts/list_changed":   "PromptListChangedNotification",
		"notifications/resources/list_changed": "ResourceListChangedNotification",
		"notifications/resources/updated":      "ResourceUpdatedNotification",
		"notifications/roots/list_changed":     "RootsListChangedNotification",
		"notifications/tasks/status":           "TaskStatusNotification",
		"notifications/tools/list_changed":     "ToolListChangedNotification",
		"ping":                                 "PingRequest -> EmptyResult (empty)",
		"prompts/get":                          "GetPromptRequest -> GetPromptResult (name)",
		"prompts/list":                         "ListPromptsRequest -> ListPromptsResult (name)",
		"resources/list":                       "ListResourcesRequest -> ListResourcesResult (name)",
		"resources/read":                       "ReadResourceRequest -> ReadResourceResult (name)",
		"resources/subscribe":                  "SubscribeRequest -> EmptyResult (empty)",
		"resources/templates/list":             "ListResourceTemplatesRequest -> ListResourceTemplatesResult (name)",
		"resources/unsubscribe":                "UnsubscribeRequest -> EmptyResult (empty)",
		"roots/list":                           "ListRootsRequest -> ListRootsResult (name)",
		"sampling/createMessage":               "CreateMessageRequest -> CreateMessageResult (name) +task",
		"tasks/cancel":                         "CancelTaskRequest -> CancelTaskResult (name)",
		"tasks/get":                            "GetTaskRequest -> GetTaskResult (name)",
		"tasks/list":                           "ListTasksRequest -> ListTasksResult (name)",
		"tasks/result":                         "GetTaskPayloadRequest -> GetTaskPayloadResult (name)",
		"tools/call":                           "CallToolRequest -> CallToolResult (name) +task",
		"tools/list":                           "ListToolsRequest -> ListToolsResult (name)",
	},
	v2026: {
		"completion/complete":                      "CompleteRequest -> CompleteResult (response)",
		"elicitation/create":                       "ElicitRequest -> ElicitResult (name)",
		"notifications/cancelled":                  "CancelledNotification",
		"notifications/message":                    "LoggingMessageNotification",
		"notifications/progress":                   "ProgressNotification",
		"notifications/prompts/list_changed":       "PromptListChangedNotification",
		"notifications/resources/list_changed":     "ResourceListChangedNotification",
		"notifications/resources/updated":          "ResourceUpdatedNotification",
		"notifications/subscriptions/acknowledged": "SubscriptionsAcknowledgedNotification",
		"notifications/tools/list_changed":         "ToolListChangedNotification",
		"prompts/get":                              "GetPromptRequest -> GetPromptResult (response) +input",
		"prompts/list":                             "ListPromptsRequest -> ListPromptsResult (response)",
		"resources/list":                           "ListResourcesRequest -> ListResourcesResult (response)",
		"resources/read":                           "ReadResourceRequest -> ReadResourceResult (response) +input",
		"resources/templates/list":                 "ListResourceTemplatesRequest -> ListResourceTemplatesResult (response)",
		"roots/list":                               "ListRootsRequest -> ListRootsResult (name)",
		"sampling/createMessage":                   "CreateMessageRequest -> CreateMessageResult (name)",
		"server/discover":                          "DiscoverRequest -> DiscoverResult (response)",
		"subscriptions/listen":                     "SubscriptionsListenRequest -> SubscriptionsListenResult (response)",
		"tools/call":                               "CallToolRequest -> CallToolResult (response) +input",
		"tools/list":                               "ListToolsRequest -> ListToolsResult (response)",
	},
}

func (m Method) summary() string {
	if m.Kind == KindNotification {
		return m.Definition
	}
	s := fmt.Sprintf("%s -> %s (%s)", m.Definition, m.Result, m.Pairing)
	if m.TaskResult != "" {
		s += " +task"
	}
	if m.InputRequired != "" {
		s += " +input"
	}
	return s
}

// TestEveryMethodIsPaired checks the method table read from each schema
// against expectedMethods, and that the hand-written EmptyResult pairings
// are each needed by some version.
func TestEveryMethodIsPaired(t *testing.T) {
	usedEmpty := map[string]bool{}
	for _, version := range Versions() {
		v, err := For(version)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		requests, notes := 0, 0
		for _, m := range v.Methods() {
			got[m.Name] = m.summary()
			if m.Kind == KindRequest {
				requests++
				if m.Result == "" || v.doc.defs[m.Result] == nil {
					t.Errorf("%s %s: result definition %q missing", version, m.Name, m.Result)
				}
				if m.Pairing == PairEmpty {
					usedEmpty[m.Name] = true
					base := strings.TrimSuffix(m.Definition, "Request")
					if v.doc.defs[base+"Result"] != nil || v.doc.defs[base+"ResultResponse"] != nil {
						t.Errorf("%s %s: paired with EmptyResult by hand, but the schema has a result named after it", version, m.Name)
					}
				}
			} else {
				notes++
			}
		}
		exp := expectedMethods[version]
		for name, s := range exp {
			if got[name] != s {
				t.Errorf("%s %s: got %q, want %q", version, name, got[name], s)
			}
		}
		for name, s := range got {
			if _, ok := exp[name]; !ok {
				t.Errorf("%s: method %s (%s) is not in expectedMethods", version, name, s)
			}
		}
		t.Logf("%s: %d methods (%d requests, %d notifications), %d error-code definitions, %d compiled message schemas",
			version, len(got), requests, notes, len(v.codes), v.Targets())
	}
	for m := range emptyResultMethods {
		if !usedEmpty[m] {
			t.Errorf("emptyResultMethods lists %s, which no version needs", m)
		}
	}
}

// TestEveryMethodTargetIsUsed sends a minimal message of every method of
// every version through the validator and checks which definition it was
// validated against: every compiled target is reachable.
func TestEveryMethodTargetIsUsed(t *testing.T) {
	for _, version := range Versions() {
		v, err := For(version)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range v.Methods() {
			switch m.Kind {
			case KindNotification:
				o := v.ValidateServerMessage(1, []byte(`{"jsonrpc":"2.0","method":"`+m.Name+`","params":{}}`), nil)
				exp := m.Definition
				if !m.FromServer {
					exp = "ServerNotification"
				}
				if o.Against != exp || o.NotValidated != "" {
					t.Errorf("%s %s: against %q (%s), want %q", version, m.Name, o.Against, o.NotValidated, exp)
				}
			case KindRequest:
				for _, task := range []bool{false, true} {
					lookup := func(jsonrpc.ID) (Request, bool) { return Request{Method: m.Name, Task: task}, true }
					// A task-augmented request's result is a
					// CreateTaskResult when it carries a task.
					result := `{"resultType":"complete"}`
					if task {
						result = `{"resultType":"complete","task":{}}`
					}
					o := v.ValidateServerMessage(1, []byte(`{"jsonrpc":"2.0","id":1,"result":`+result+`}`), lookup)
					exp := m.Result
					if task && m.TaskResult != "" {
						exp = m.TaskResult
					}
					if o.Against != exp || o.NotValidated != "" {
						t.Errorf("%s %s task=%v: against %q (%s), want %q", version, m.Name, task, o.Against, o.NotValidated, exp)
					}
				}
				o := v.ValidateServerMessage(1, []byte(`{"jsonrpc":"2.0","id":1,"method":"`+m.Name+`","params":{}}`), nil)
				if m.FromServer && o.Against != m.Definition {
					t.Errorf("%s server request %s: against %q, want %q", version, m.Name, o.Against, m.Definition)
				}
			}
		}
		for code, d := range v.codes {
			o := v.ValidateServerMessage(1, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"error":{"code":%d,"message":"x"}}`, code)), nil)
			if o.Against != d.name {
				t.Errorf("%s error %d: against %q, want %q", version, code, o.Against, d.name)
			}
		}
	}
}

// sharedSchemaDir finds ../shared/spec/schema beside the repository (or an
// ancestor of it); "" when absent.
func sharedSchemaDir(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		cand := filepath.Join(d, "shared", "spec", "schema")
		if st, err := os.Stat(cand); err == nil && st.IsDir() {
			return cand
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// TestVendoredSchemasAreUnchanged compares every vendored schema.json with
// the shared copy of the specification, byte for byte, when it is present.
func TestVendoredSchemasAreUnchanged(t *testing.T) {
	shared := sharedSchemaDir(t)
	if shared == "" {
		t.Skip("no shared/spec/schema beside the repository")
	}
	entries, err := os.ReadDir(shared)
	if err != nil {
		t.Fatal(err)
	}
	var onDisk []string
	for _, e := range entries {
		if e.IsDir() {
			onDisk = append(onDisk, e.Name())
		}
	}
	vendored := Versions()
	sort.Strings(vendored)
	if strings.Join(onDisk, ",") != strings.Join(vendored, ",") {
		t.Errorf("shared schemas %v, vendored %v", onDisk, vendored)
	}
	for _, version := range vendored {
		want, err := os.ReadFile(filepath.Join(shared, version, "schema.json"))
		if err != nil {
			t.Errorf("%s: %v", version, err)
			continue
		}
		got, err := Raw(version)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: vendored schema.json (%d bytes) differs from %s (%d bytes)", version, len(got), filepath.Join(shared, version, "schema.json"), len(want))
		}
	}
}

func TestUnknownVersion(t *testing.T) {
	if _, err := For("2024-11-05"); err == nil || !strings.Contains(err.Error(), "2024-11-05") {
		t.Errorf("For(2024-11-05) = %v, want an error naming the version", err)
	}
}

// TestConcurrentUse compiles and validates from many goroutines at once
// (run with -race): one compile per version, shared validators.
func TestConcurrentUse(t *testing.T) {
	msgs := [][]byte{
		[]byte(`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text"}],"resultType":"complete"}}`),
		[]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`),
		[]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"y"}}`),
	}
	var wg sync.WaitGroup
	got := make([][]*Validator, 8)
	for g := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, version := range Versions() {
				v, err := For(version)
				if err != nil {
					t.Error(err)
					return
				}
				got[g] = append(got[g], v)
				s := v.NewSession()
				s.ClientSent([]byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo"}}`))
				for i := 0; i < 20; i++ {
					for _, m := range msgs {
						if o := s.ServerSent(int64(i), m); o.OK() {
							t.Errorf("%s: %s validated clean", version, m)
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	for g := 1; g < len(got); g++ {
		for i := range got[g] {
			if got[g][i] != got[0][i] {
				t.Fatalf("goroutine %d got a different validator for %s: compiled twice", g, Versions()[i])
			}
		}
	}
}

// BenchmarkValidate measures the validation cost of one message, by kind
// and size, with the session lookup a check uses.
func BenchmarkValidate(b *testing.B) {
	toolsList := `{"jsonrpc":"2.0","id":2,"result":{"cacheScope":"public","resultType":"complete","ttlMs":0,"tools":[` +
		strings.Repeat(`{"annotations":{"idempotentHint":true,"openWorldHint":false,"readOnlyHint":true},"description":"Works step by step.","inputSchema":{"properties":{"stepMs":{"default":100,"maximum":60000,"minimum":0,"type":"integer"},"steps":{"default":5,"maximum":1000,"minimum":1,"type":"integer"}},"type":"object"},"name":"slow","title":"Slow operation"},`, 5) +
		`{"name":"echo","inputSchema":{"type":"object"}}]}}`
	cases := []struct{ name, raw string }{
		{"progress", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"message":"step 1/3","progress":1,"progressToken":"p1","total":3}}`},
		{"call-result", `{"jsonrpc":"2.0","id":3,"result":{"content":[{"text":"slow: done 3 steps","type":"text"}],"resultType":"complete","structuredContent":{"steps":3}}}`},
		{"tools-list-6", toolsList},
		{"error", `{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"Invalid params: echo needs a string argument text"}}`},
		{"invalid-result", `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text"}],"resultType":"complete"}}`},
	}
	for _, version := range Versions() {
		v, err := For(version)
		if err != nil {
			b.Fatal(err)
		}
		s := v.NewSession()
		s.ClientSent([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`))
		s.ClientSent([]byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow"}}`))
		for _, c := range cases {
			raw := []byte(c.raw)
			b.Run(version+"/"+c.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(raw)))
				for b.Loop() {
					s.ServerSent(1, raw)
				}
			})
		}
	}
}

// BenchmarkCompile measures compiling one version's schema (what the first
// For of a process costs).
func BenchmarkCompile(b *testing.B) {
	for _, version := range Versions() {
		b.Run(version, func(b *testing.B) {
			for b.Loop() {
				if _, err := compile(version); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package schema

import (
	"strings"
	"testing"
)

// TestRequestOf: the id and method of a client request, and whether its
// params carry a task member, however the key is written.
func TestRequestOf(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	for _, tc := range []struct {
		name, raw      string
		ok, task       bool
		method, wantID string
	}{
		{"plain", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`, true, false, "tools/call", "1"},
		{"task", `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"slow","task":{"ttl":1000}}}`, true, true, "tools/call", `"a"`},
		{"task null", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"task":null}}`, true, false, "tools/call", "2"},
		{"escaped key", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"\u0074ask":{}}}`, true, true, "tools/call", "3"},
		{"task only in a value", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"task"}}`, true, false, "tools/call", "4"},
		{"long argument", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + long + `"}}}`, true, false, "tools/call", "5"},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, false, false, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, req, ok := RequestOf([]byte(tc.raw))
			if ok != tc.ok {
				t.Fatalf("ok %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			if req.Method != tc.method || req.Task != tc.task || string(id.Raw()) != tc.wantID {
				t.Errorf("id %s, %+v; want id %s, method %s, task %v", id.Raw(), req, tc.wantID, tc.method, tc.task)
			}
		})
	}
}

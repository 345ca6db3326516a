package schema

import (
	"strings"
	"testing"
)

func TestMetaKeyRules(t *testing.T) {
	for key, ok := range map[string]bool{
		"": true, "progressToken": true, "io.modelcontextprotocol/related-task": true, "a/b": true, "x-y.z_1": true,
		"1trace.example/request-id": false, "trace-/id": false, "-x": false, "x-": false, "a..b/c": false, "/x": false,
	} {
		if MetaKeyOK(key) != ok {
			t.Errorf("MetaKeyOK(%q) = %v, want %v", key, !ok, ok)
		}
	}
	msg := map[string]any{"result": map[string]any{
		"_meta":   map[string]any{"ok/key": 1, "1bad/key": 2},
		"content": []any{map[string]any{"_meta": map[string]any{"a~b/c": 1}}},
	}}
	vs := metaKeyRules(msg)
	if len(vs) != 2 {
		t.Fatalf("metaKeyRules = %+v, want 2 violations", vs)
	}
	if vs[0].Pointer != "/result/_meta" || !strings.Contains(vs[0].Complaint, `"1bad/key"`) || vs[0].Clause != "basic#11" || vs[0].Level != "MUST" {
		t.Errorf("first violation = %+v", vs[0])
	}
	if vs[1].Pointer != "/result/content/0/_meta" {
		t.Errorf("second violation at %q, want /result/content/0/_meta", vs[1].Pointer)
	}
}

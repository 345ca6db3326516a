package faultproxy

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzParseRules feeds ParseRules arbitrary rule files: it must never panic
// or hang, and whatever it accepts must be well formed — every rule named,
// names unique, one fault each — parse the same way twice, and install in a
// rule set.
func FuzzParseRules(f *testing.F) {
	for _, s := range []string{
		"rules:\n  - name: lose\n    match: {dir: s2c, kind: response, repliesTo: tools/call, id: 3}\n    nth: 1\n    fault: {drop: true}\n",
		"rules:\n  - name: late\n    match: {dir: c2s, method: notifications/cancelled, cancelledId: \"a\"}\n    fault: {holdUntil: {dir: s2c, id: \"a\"}, max: 2s}\n",
		"rules:\n  - name: d\n    match: {progressToken: 1}\n    after: {method: ping}\n    fault: {delay: 5ms}\n",
		"rules:\n  - name: i\n    match: {method: tools/call}\n    fault: {inject: '{\"jsonrpc\":\"2.0\",\"method\":\"x\"}', injectDir: c2s, before: true}\n",
		"rules:\n  - name: t\n    match: {dir: s2c}\n    fault: {throttle: 1024}\n  - name: b\n    match: {comment: true}\n    fault: {buffer: 10}\n",
		`{"rules":[{"name":"s","match":{"httpMethod":"POST"},"fault":{"status":503,"body":"x"}}]}`,
		"rules:\n  - name: x\n    fault: {drop: true, delay: 1s}\n",
		"rules: [{name: a, fault: {crash: true}}, {name: a, fault: {pause: 1s}}]\n",
		"a: &a [*a, *a]\n",
		"rules:\n  - name: n\n    nth: -1\n    fault: {pass: true}\n",
	} {
		f.Add([]byte(s))
	}
	// The rule files the CLI tests use.
	files, _ := filepath.Glob(filepath.Join("..", "cmd", "mcp-conform", "testdata", "*.yaml"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		wd := time.AfterFunc(20*time.Second, func() {
			panic(fmt.Sprintf("FuzzParseRules: input took over 20s: %q", data))
		})
		defer wd.Stop()
		rules, err := ParseRules(data)
		if err != nil {
			if rules != nil {
				t.Fatalf("rules %v with error %v", rules, err)
			}
			return
		}
		names := map[string]bool{}
		for _, r := range rules {
			if r.Name == "" || names[r.Name] {
				t.Fatalf("rule name %q empty or repeated in %q", r.Name, data)
			}
			names[r.Name] = true
			if r.Fault == nil {
				t.Fatalf("rule %q has no fault", r.Name)
			}
			if r.Nth < 0 || r.Times < 0 {
				t.Fatalf("rule %q: nth %d, times %d", r.Name, r.Nth, r.Times)
			}
		}
		again, err := ParseRules(data)
		if err != nil || len(again) != len(rules) {
			t.Fatalf("second parse: %d rules, %v (first: %d)", len(again), err, len(rules))
		}
		for i := range rules {
			if again[i].Name != rules[i].Name {
				t.Fatalf("second parse: rule %d named %q, first %q", i, again[i].Name, rules[i].Name)
			}
		}
		if err := NewRules().Set(rules...); err != nil {
			t.Fatalf("accepted rules do not install: %v", err)
		}
	})
}

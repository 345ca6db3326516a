package suites_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/suites"
)

func TestWebSocketManifest(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, err string
	}{
		{"ok", "transport: websocket\nurl: ws://127.0.0.1:9/mcp\n", ""},
		{"wss", "transport: websocket\nurl: wss://example.test/mcp\n", ""},
		{"http url", "transport: websocket\nurl: http://127.0.0.1:9/mcp\n", "ws:// or wss://"},
		{"no url", "transport: websocket\ncommand: [x]\n", "ws:// or wss://"},
		{"unknown", "transport: carrier-pigeon\nurl: x\n", "stdio, http or websocket"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "m.yaml")
			if err := os.WriteFile(path, []byte(tc.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := suites.LoadManifest(path)
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("LoadManifest: %v, want %q", err, tc.err)
			}
		})
	}
	m, err := suites.URLManifest("ws://127.0.0.1:9/mcp")
	if err != nil || m.Transport != "websocket" {
		t.Errorf("URLManifest(ws://…) = %+v, %v", m, err)
	}
	if m, err := suites.LoadManifest("../fixtures/targets/reference-ws.yaml"); err != nil || m.Transport != "websocket" || m.Roles["slow"].Tool != "slow" {
		t.Errorf("reference-ws.yaml: %+v, %v", m, err)
	}
}

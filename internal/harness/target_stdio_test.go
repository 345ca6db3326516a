package harness

import (
	"slices"
	"strings"
	"testing"
)

// TestStdioManifestSplitsLikeAShell: --stdio keeps a quoted argument with
// spaces as one argument, and an unterminated quote is a clear error.
func TestStdioManifestSplitsLikeAShell(t *testing.T) {
	m, err := StdioManifest(`node -e 'require("./server.js")' --name "My Server" a\ b`)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"node", "-e", `require("./server.js")`, "--name", "My Server", "a b"}
	if !slices.Equal(m.Command, want) {
		t.Errorf("Command = %q, want %q", m.Command, want)
	}
	for in, msg := range map[string]string{
		`node "server.js`: "unterminated quote",
		`   `:             "--stdio needs a command",
		`node $SERVER`:    "parameter expansion",
	} {
		if _, err := StdioManifest(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("StdioManifest(%q) = %v, want an error with %q", in, err, msg)
		}
	}
}

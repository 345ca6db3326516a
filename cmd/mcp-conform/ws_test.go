package main

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestRunWebSocketUsage: --websocket is for the built-in target only.
func TestRunWebSocketUsage(t *testing.T) {
	r := runCLI(t, 10*time.Second, "run", "--websocket", "--stdio", "true")
	if r.code != 2 || !strings.Contains(r.stderr, "--websocket applies to the built-in target only") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	out, err := exec.Command(binary, "fixture", "--ws", "127.0.0.1:0", "--http", "127.0.0.1:0").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "not both") {
		t.Errorf("fixture --ws --http: %v, output %q", err, out)
	}
}

package main

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/refbin"
)

// TestSlimReferenceBeside: each test binary has the slim reference server
// of its build beside it, which serves the reference, and which the
// harness takes (refbin.SameBuild) whenever the tree it was built from has
// no uncommitted change — as on CI, where the built-in target's check runs
// then start the slim binary.
func TestSlimReferenceBeside(t *testing.T) {
	for _, exe := range []string{binary, fastBinary} {
		slim := filepath.Join(filepath.Dir(exe), refbin.Name)
		self, err := buildinfo.ReadFile(exe)
		if err != nil {
			t.Fatal(err)
		}
		other, err := buildinfo.ReadFile(slim)
		if err != nil {
			t.Fatalf("no slim reference beside %s: %v", exe, err)
		}
		clean := false
		for _, s := range self.Settings {
			if s.Key == "vcs.modified" {
				clean = s.Value == "false"
			}
		}
		if got := refbin.SameBuild(self, other); got != clean {
			t.Errorf("%s: SameBuild %v, want %v (the tree is clean: %v)", slim, got, clean, clean)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		cmd := exec.CommandContext(ctx, slim)
		cmd.Env = []string{"MCP_CONFORM_SERVE_FIXTURE=reference", "GORACE=atexit_sleep_ms=0"}
		cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")
		var out bytes.Buffer
		cmd.Stdout = &out
		err = cmd.Run()
		cancel()
		if err != nil || strings.TrimSpace(out.String()) != `{"jsonrpc":"2.0","id":1,"result":{}}` {
			t.Errorf("%s answered a ping with %q (%v)", slim, out.String(), err)
		}
	}
}

package main

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/refbin"
	"github.com/mcp-conform/mcp-conform/reports"
)

// TestSlimReferenceBeside: each test binary has the slim reference server
// of its build beside it, which serves the reference and which the
// harness starts as the built-in target (refbin.Env "beside", as every
// test's run has it), or not ("self"); with no mode, it takes it when the
// build infos say the same build (refbin.SameBuild), as they must for two
// binaries built from one tree with VCS information.
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
		stamped := false
		for _, s := range self.Settings {
			stamped = stamped || s.Key == "vcs.modified" && s.Value == "false"
		}
		if got := refbin.SameBuild(self, other); got != stamped {
			t.Errorf("%s: SameBuild %v, want %v (a clean tree's VCS information: %v)", slim, got, stamped, stamped)
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

	// Which executable serves: a wrapper in the slim binary's place
	// records that it ran, then runs the slim binary.
	dir := t.TempDir()
	exe := filepath.Join(dir, "mcp-conform")
	copyFile(t, fastBinary, exe)
	copyFile(t, filepath.Join(filepath.Dir(fastBinary), refbin.Name), filepath.Join(dir, "slim"))
	mark := filepath.Join(dir, "slim-ran")
	wrapper := "#!/bin/sh\necho ran >> '" + mark + "'\nexec '" + filepath.Join(dir, "slim") + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, refbin.Name), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"beside", "self"} {
		_ = os.Remove(mark)
		r, err := execCLIEnv(exe, t.TempDir(), runLimit, []string{refbin.Env + "=" + mode},
			"run", "-q", "--focus", "CANCEL-STDIO-SUPPRESS", "--spec", "2025-11-25", "--label-filter", "transport:stdio")
		if err != nil {
			t.Fatal(err)
		}
		if r.code != 0 || r.report == nil || len(r.report.Checks) != 1 || r.report.Checks[0].Status != reports.Pass {
			t.Fatalf("%s: exit %d\n%s\n%s", mode, r.code, r.stdout, r.stderr)
		}
		_, err = os.Stat(mark)
		if ran := err == nil; ran != (mode == "beside") {
			t.Errorf("%s=%s: the slim binary ran: %v", refbin.Env, mode, ran)
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

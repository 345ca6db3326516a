package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/herd"
)

// runHerdCLI runs the binary's herd command and returns its exit code and
// output.
func runHerdCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	r := mustRunBin(t, binary, 2*time.Minute, nil, append([]string{"herd"}, args...)...)
	return r.code, r.stdout, r.stderr
}

// TestHerd runs the herd at a small N against the built-in reference
// server: both phases run, every stream is cut at once, every client
// recovers, and the JSON has the measurements side by side.
func TestHerd(t *testing.T) {
	limitParallel(t)
	path := filepath.Join(t.TempDir(), "herd.json")
	code, out, errs := runHerdCLI(t, "--clients", "20", "--json", path, "--seed", "77")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "seed 77") {
		t.Errorf("the seed is not printed:\n%s", out)
	}
	t.Log(out)
	var rep herd.Report
	b, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(b, &rep) != nil {
		t.Fatalf("herd JSON: %v\n%s", err, b)
	}
	if rep.Seed != 77 {
		t.Errorf("JSON seed %d, want 77", rep.Seed)
	}
	if len(rep.Phases) != 2 || rep.Phases[0].Mode != "immediate" || rep.Phases[1].Mode != "backoff" {
		t.Fatalf("phases %+v", rep.Phases)
	}
	for _, ph := range rep.Phases {
		if ph.StreamsCut != 20 || ph.Recovered != 20 || ph.SuccessRate != 1 || ph.P99Ms <= 0 || ph.AllRecoveredMs < ph.P99Ms {
			t.Errorf("%s: %+v", ph.Mode, ph)
		}
		if !strings.Contains(out, ph.Mode) {
			t.Errorf("table lacks %s:\n%s", ph.Mode, out)
		}
	}
}

func TestHerdUsage(t *testing.T) {
	limitParallel(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--url", "http://192.0.2.10:3001/mcp"}, "loopback"},
		{[]string{"--url", "http://example.com/mcp"}, "loopback"},
		{[]string{"--clients", "1001"}, "1 to 1000"},
		{[]string{"--clients", "0"}, "1 to 1000"},
		{[]string{"--args", "[1]"}, "JSON object"},
	} {
		code, out, errs := runHerdCLI(t, tc.args...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("herd %v: exit %d, stderr %q, want 2 and %q (stdout %q)", tc.args, code, errs, tc.want, out)
		}
	}
}

package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/suites"
)

// TestVersionCommand: "version" and "--version" print the same one line.
func TestVersionCommand(t *testing.T) {
	out := func(args ...string) string {
		t.Helper()
		b, err := exec.Command(binary, args...).Output()
		if err != nil {
			t.Fatalf("mcp-conform %v: %v", args, err)
		}
		return string(b)
	}
	v, flag := out("version"), out("--version")
	if v != flag {
		t.Errorf("version %q and --version %q differ", v, flag)
	}
	re := regexp.MustCompile(`^mcp-conform \S+ \(commit .+, .+; go\S+ ` + runtime.GOOS + "/" + runtime.GOARCH + `\)\n$`)
	if !re.MatchString(v) {
		t.Errorf("version printed %q, want it to match %s", v, re)
	}
}

// TestVersionStamped builds the binary as scripts/release.sh does (the
// version, commit and date as linker flags) and finds them in "version"
// and in the JSON report's tool.version.
func TestVersionStamped(t *testing.T) {
	limitParallel(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "mcp-conform")
	ctx, cancel := context.WithTimeout(context.Background(), runLimit)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", bin,
		"-ldflags", "-X main.version=v9.8.7 -X main.commit=0123456789abcdef -X main.date=2026-01-02T03:04:05Z", ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := "mcp-conform v9.8.7 (commit 0123456789abcdef, 2026-01-02T03:04:05Z; " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + ")\n"; string(out) != want {
		t.Errorf("version printed %q, want %q", out, want)
	}
	r, err := execCLI(bin, dir, runLimit, "run", "-q", "--focus", "ROBUST-PARSE-ERROR", "--spec", "2025-11-25")
	if err != nil {
		t.Fatal(err)
	}
	if r.report == nil || r.report.Tool.Version != "v9.8.7" {
		t.Errorf("report tool %+v, want version v9.8.7\n%s", r.report, r.stderr)
	}
}

// TestHelpDescribesTheTool: the root help names every area of the
// catalog and every command, and no longer promises what is already there.
func TestHelpDescribesTheTool(t *testing.T) {
	var out bytes.Buffer
	root := newRoot()
	root.SetOut(&out)
	root.SetArgs([]string{"--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	help := out.String()
	if strings.Contains(help, "later versions") {
		t.Errorf("root help still promises features for later versions:\n%s", help)
	}
	areas := map[string]bool{}
	for _, c := range suites.Catalog() {
		areas[strings.SplitN(c.ID, "-", 2)[0]] = true
	}
	for a := range areas {
		if !regexp.MustCompile(`\b` + a + `\b`).MatchString(help) {
			t.Errorf("root help does not name the %s checks", a)
		}
	}
	for _, c := range root.Commands() {
		if c.Hidden {
			// Internal commands the client grader runs as child
			// processes (serve-scenario, reliable-driver) are hidden
			// by design; --help lists what a user types.
			continue
		}
		if !strings.Contains(help, "  "+c.Name()+" ") {
			t.Errorf("root help does not list the %s command", c.Name())
		}
	}
	for _, s := range []string{"stdio", "Streamable HTTP", "WebSocket", "2026-07-28", "Markdown", "exit code"} {
		if !strings.Contains(help, s) {
			t.Errorf("root help does not mention %q", s)
		}
	}
}

package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/suites"
)

// TestVersionResolve: the version comes from the linker flags when
// release.sh set them, else from the module's build info (a go install of
// a tag records the tag; a build in a git clone its pseudo-version and VCS
// revision), else "(devel)".
func TestVersionResolve(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "1c7356139d25b458f6694bf09b9f51966a025af4"},
		{Key: "vcs.time", Value: "2026-03-01T12:00:00Z"}, {Key: "vcs.modified", Value: "true"}}
	for _, tc := range []struct {
		name string
		ld   stamp
		bi   *debug.BuildInfo
		want stamp
	}{
		{"go install @v0.2.0", stamp{}, &debug.BuildInfo{Main: debug.Module{Path: "github.com/mcp-conform/mcp-conform", Version: "v0.2.0"}},
			stamp{Version: "v0.2.0"}},
		{"git clone build", stamp{}, &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20260301120000-1c7356139d25+dirty"}, Settings: vcs},
			stamp{Version: "v0.0.0-20260301120000-1c7356139d25+dirty", Commit: "1c7356139d25b458f6694bf09b9f51966a025af4", Date: "2026-03-01T12:00:00Z", Modified: true}},
		{"no VCS stamp", stamp{}, &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, stamp{Version: "(devel)"}},
		{"no build info", stamp{}, nil, stamp{Version: "(devel)"}},
		{"release.sh ldflags win", stamp{Version: "v0.3.0", Commit: "abc", Date: "2026-04-01T00:00:00Z"},
			&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs},
			stamp{Version: "v0.3.0", Commit: "abc", Date: "2026-04-01T00:00:00Z"}},
		{"ldflags version only", stamp{Version: "v0.3.0"}, &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs},
			stamp{Version: "v0.3.0", Commit: "1c7356139d25b458f6694bf09b9f51966a025af4", Date: "2026-03-01T12:00:00Z", Modified: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := resolveStamp(tc.ld, tc.bi); got != tc.want {
				t.Errorf("resolveStamp = %+v, want %+v", got, tc.want)
			}
		})
	}
	platform := runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
	for _, tc := range []struct {
		s    stamp
		want string
	}{
		{stamp{Version: "v0.2.0"}, "mcp-conform v0.2.0 (commit unknown, date unknown; " + platform + ")"},
		{stamp{Version: "v0.2.1", Commit: "abc", Date: "2026-03-01T12:00:00Z", Modified: true},
			"mcp-conform v0.2.1 (commit abc with uncommitted changes, 2026-03-01T12:00:00Z; " + platform + ")"},
	} {
		if got := tc.s.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}

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

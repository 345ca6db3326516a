// Package refbin finds the slim reference server binary
// (cmd/mcp-conform-reference) beside the running mcp-conform, for the
// harness to start as the built-in target instead of mcp-conform itself.
//
// Both serve the same server (package fixtures); the slim one starts in
// about a third of the CPU time, which a run pays once per check run. It
// is used only when it is certainly the same build: the same Go version,
// main module version and sum, dependency versions, build settings (race
// detector, tags, platform) and a committed VCS revision with no local
// changes (or a module version, as go install @version builds). Anything
// else — a dev build from a modified tree, a binary built at another
// commit, none there — and mcp-conform serves the target itself.
package refbin

import (
	"debug/buildinfo"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
)

// Name is the slim reference binary's file name (".exe" added on Windows).
const Name = "mcp-conform-reference"

// Env overrides the choice: "self" serves the built-in target from the
// executable itself; "beside" takes the slim binary beside it whenever it
// is there, without comparing builds (for a caller that built both from
// one tree at once, as the cmd tests do, on a machine whose builds carry no
// VCS information: GOFLAGS=-buildvcs=false).
const Env = "MCP_CONFORM_REFERENCE_BIN"

var (
	once   sync.Once
	cached string
)

// For is the executable to start as the built-in target for the running
// executable exe: the slim binary beside it when it is the same build,
// else exe. Computed once per process.
func For(exe string) string {
	once.Do(func() { cached = find(exe) })
	return cached
}

func find(exe string) string {
	mode := os.Getenv(Env)
	if mode == "self" {
		return exe
	}
	name := Name
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	slim := filepath.Join(filepath.Dir(exe), name)
	if mode == "beside" {
		if st, err := os.Stat(slim); err == nil && st.Mode().IsRegular() {
			return slim
		}
		return exe
	}
	self, ok := debug.ReadBuildInfo()
	if !ok {
		return exe
	}
	other, err := buildinfo.ReadFile(slim)
	if err != nil {
		return exe
	}
	if !SameBuild(self, other) {
		return exe
	}
	return slim
}

// compared are the build settings two builds must share (the linker flags
// may differ: a release stamps its version into mcp-conform only).
var compared = []string{"-race", "-msan", "-asan", "-tags", "-trimpath", "-buildmode", "-compiler",
	"CGO_ENABLED", "GOOS", "GOARCH", "GOAMD64", "GOARM64", "GOEXPERIMENT",
	"vcs", "vcs.revision", "vcs.time", "vcs.modified"}

// SameBuild reports whether the slim binary's build info slim shows it was
// built from the same source as the harness's, self: see the package
// comment. The slim binary links fewer modules; each it links must be at
// the harness's version.
func SameBuild(self, slim *debug.BuildInfo) bool {
	if self == nil || slim == nil || self.GoVersion != slim.GoVersion || self.Main != slim.Main {
		return false
	}
	a, b := settings(self), settings(slim)
	for _, k := range compared {
		if a[k] != b[k] {
			return false
		}
	}
	devel := self.Main.Version == "" || self.Main.Version == "(devel)" || strings.HasSuffix(self.Main.Version, "+dirty")
	if devel && (a["vcs.revision"] == "" || a["vcs.modified"] != "false") {
		return false // a tree with changes no revision names
	}
	deps := map[string]debug.Module{}
	for _, d := range self.Deps {
		deps[d.Path] = flat(d)
	}
	for _, d := range slim.Deps {
		if m, ok := deps[d.Path]; !ok || m != flat(d) {
			return false
		}
	}
	return true
}

func settings(bi *debug.BuildInfo) map[string]string {
	m := map[string]string{}
	for _, s := range bi.Settings {
		m[s.Key] = s.Value
	}
	return m
}

// flat is a module with its replacement's path, version and sum folded in
// (so that two Modules compare with ==).
func flat(m *debug.Module) debug.Module {
	out := debug.Module{Path: m.Path, Version: m.Version, Sum: m.Sum}
	if m.Replace != nil {
		out.Path += " => " + m.Replace.Path
		out.Version += " " + m.Replace.Version
		out.Sum += " " + m.Replace.Sum
	}
	return out
}

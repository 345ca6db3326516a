package refbin

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

func info(version string, mod func(*debug.BuildInfo)) *debug.BuildInfo {
	bi := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/mcp-conform/mcp-conform", Version: version},
		Deps: []*debug.Module{
			{Path: "modernc.org/sqlite", Version: "v1.40.0", Sum: "h1:a"},
			{Path: "github.com/google/jsonschema-go", Version: "v0.4.3", Sum: "h1:b"},
		},
		Settings: []debug.BuildSetting{
			{Key: "-race", Value: "true"}, {Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "amd64"},
			{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "4457cae"}, {Key: "vcs.time", Value: "2026-12-02T05:00:00Z"},
			{Key: "vcs.modified", Value: "false"}, {Key: "-ldflags", Value: "-X main.version=v1"},
		},
	}
	if mod != nil {
		mod(bi)
	}
	return bi
}

func set(key, value string) func(*debug.BuildInfo) {
	return func(bi *debug.BuildInfo) {
		for i, s := range bi.Settings {
			if s.Key == key {
				bi.Settings[i].Value = value
				return
			}
		}
		bi.Settings = append(bi.Settings, debug.BuildSetting{Key: key, Value: value})
	}
}

// TestSameBuild: the slim binary is taken only when its build info shows
// the same source and settings as the harness's.
func TestSameBuild(t *testing.T) {
	const pseudo = "v0.0.0-20261202050000-4457cae00000"
	for _, tc := range []struct {
		name string
		slim *debug.BuildInfo
		self *debug.BuildInfo
		want bool
	}{
		{"same commit, clean tree", info(pseudo, nil), info(pseudo, nil), true},
		{"linker flags differ (a release stamps mcp-conform)", info(pseudo, set("-ldflags", "")), info(pseudo, nil), true},
		{"slim links fewer modules", info(pseudo, func(bi *debug.BuildInfo) { bi.Deps = bi.Deps[:1] }), info(pseudo, nil), true},
		{"another commit", info(pseudo, set("vcs.revision", "68480bf")), info(pseudo, nil), false},
		{"a modified tree", info(pseudo+"+dirty", set("vcs.modified", "true")), info(pseudo+"+dirty", set("vcs.modified", "true")), false},
		{"devel, no VCS information", info("(devel)", func(bi *debug.BuildInfo) { bi.Settings = bi.Settings[:3] }),
			info("(devel)", func(bi *debug.BuildInfo) { bi.Settings = bi.Settings[:3] }), false},
		{"a module version (go install @v), no VCS information", info("v0.3.0", func(bi *debug.BuildInfo) { bi.Settings = bi.Settings[:3] }),
			info("v0.3.0", func(bi *debug.BuildInfo) { bi.Settings = bi.Settings[:3] }), true},
		{"race detector in one only", info(pseudo, set("-race", "false")), info(pseudo, nil), false},
		{"another Go", info(pseudo, func(bi *debug.BuildInfo) { bi.GoVersion = "go1.26.7" }), info(pseudo, nil), false},
		{"a dependency at another version", info(pseudo, func(bi *debug.BuildInfo) {
			bi.Deps[0] = &debug.Module{Path: "modernc.org/sqlite", Version: "v1.39.0", Sum: "h1:c"}
		}), info(pseudo, nil), false},
		{"a dependency the harness lacks", info(pseudo, func(bi *debug.BuildInfo) {
			bi.Deps = append(bi.Deps, &debug.Module{Path: "example.com/x", Version: "v1.0.0"})
		}), info(pseudo, nil), false},
		{"a replaced dependency", info(pseudo, func(bi *debug.BuildInfo) {
			bi.Deps[0] = &debug.Module{Path: "modernc.org/sqlite", Version: "v1.40.0", Sum: "h1:a", Replace: &debug.Module{Path: "../sqlite"}}
		}), info(pseudo, nil), false},
		{"no build info", nil, info(pseudo, nil), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := SameBuild(tc.self, tc.slim); got != tc.want {
				t.Errorf("SameBuild = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestFindFallsBackToSelf: with no slim binary beside the executable, or
// one that is not a Go binary, or when asked, the executable serves.
func TestFindFallsBackToSelf(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "mcp-conform")
	if got := find(exe); got != exe {
		t.Errorf("no slim binary: %s, want %s", got, exe)
	}
	if err := os.WriteFile(filepath.Join(dir, Name), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := find(exe); got != exe {
		t.Errorf("a slim binary that is no Go binary: %s, want %s", got, exe)
	}
	// "beside" takes any file there without comparing builds; "self"
	// never does.
	t.Setenv(Env, "beside")
	if got := find(exe); got != filepath.Join(dir, Name) {
		t.Errorf("%s=beside: %s, want the file beside", Env, got)
	}
	t.Setenv(Env, "self")
	if got := find(exe); got != exe {
		t.Errorf("%s=self: %s, want %s", Env, got, exe)
	}
}

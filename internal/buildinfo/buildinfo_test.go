package buildinfo

import (
	"runtime"
	"runtime/debug"
	"testing"
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
		ld   Stamp
		bi   *debug.BuildInfo
		want Stamp
	}{
		{"go install @v0.2.0", Stamp{}, &debug.BuildInfo{Main: debug.Module{Path: "github.com/mcp-conform/mcp-conform", Version: "v0.2.0"}},
			Stamp{Version: "v0.2.0"}},
		{"git clone build", Stamp{}, &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20260301120000-1c7356139d25+dirty"}, Settings: vcs},
			Stamp{Version: "v0.0.0-20260301120000-1c7356139d25+dirty", Commit: "1c7356139d25b458f6694bf09b9f51966a025af4", Date: "2026-03-01T12:00:00Z", Modified: true}},
		{"no VCS stamp", Stamp{}, &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, Stamp{Version: "(devel)"}},
		{"no build info", Stamp{}, nil, Stamp{Version: "(devel)"}},
		{"release.sh ldflags win", Stamp{Version: "v0.3.0", Commit: "abc", Date: "2026-04-01T00:00:00Z"},
			&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs},
			Stamp{Version: "v0.3.0", Commit: "abc", Date: "2026-04-01T00:00:00Z"}},
		{"ldflags version only", Stamp{Version: "v0.3.0"}, &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs},
			Stamp{Version: "v0.3.0", Commit: "1c7356139d25b458f6694bf09b9f51966a025af4", Date: "2026-03-01T12:00:00Z", Modified: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Resolve(tc.ld, tc.bi); got != tc.want {
				t.Errorf("Resolve = %+v, want %+v", got, tc.want)
			}
		})
	}
	platform := runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
	for _, tc := range []struct {
		s    Stamp
		want string
	}{
		{Stamp{Version: "v0.2.0"}, "mcp-conform v0.2.0 (commit unknown, date unknown; " + platform + ")"},
		{Stamp{Version: "v0.2.1", Commit: "abc", Date: "2026-03-01T12:00:00Z", Modified: true},
			"mcp-conform v0.2.1 (commit abc with uncommitted changes, 2026-03-01T12:00:00Z; " + platform + ")"},
	} {
		if got := tc.s.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}

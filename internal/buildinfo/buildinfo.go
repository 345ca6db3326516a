// Package buildinfo is what a binary knows of its own build: the version,
// commit and date given by linker flags or read from the module's build
// info, and the one line "mcp-conform version" prints.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Stamp is what a binary knows of its own build.
type Stamp struct {
	Version, Commit, Date string
	// Modified: the VCS working tree had uncommitted changes.
	Modified bool
}

// Resolve fills what the linker flags left empty in ld from the build
// info bi (nil when the binary has none): the main module's version, and
// the vcs.revision, vcs.time and vcs.modified settings. A version still
// unknown is "(devel)".
func Resolve(ld Stamp, bi *debug.BuildInfo) Stamp {
	s := ld
	if bi != nil {
		if s.Version == "" {
			s.Version = bi.Main.Version
		}
		for _, kv := range bi.Settings {
			switch kv.Key {
			case "vcs.revision":
				if ld.Commit == "" {
					s.Commit = kv.Value
				}
			case "vcs.time":
				if ld.Date == "" {
					s.Date = kv.Value
				}
			case "vcs.modified":
				if ld.Commit == "" {
					s.Modified = kv.Value == "true"
				}
			}
		}
	}
	if s.Version == "" {
		s.Version = "(devel)"
	}
	return s
}

// Own is this binary's stamp: the linker flags' version, commit and date,
// completed from its own build info (Resolve).
func Own(version, commit, date string) Stamp {
	bi, _ := debug.ReadBuildInfo()
	return Resolve(Stamp{Version: version, Commit: commit, Date: date}, bi)
}

// String is the one line "mcp-conform version" and "mcp-conform --version"
// print:
//
//	mcp-conform v0.2.0 (commit 1c73561…, 2026-03-01T12:00:00Z; go1.26.8 linux/amd64)
//
// An unknown commit or date says so ("commit unknown" for a go install from
// the module proxy, which records no VCS information).
func (s Stamp) String() string {
	c := s.Commit
	switch {
	case c == "":
		c = "unknown"
	case s.Modified:
		c += " with uncommitted changes"
	}
	d := s.Date
	if d == "" {
		d = "date unknown"
	}
	return fmt.Sprintf("mcp-conform %s (commit %s, %s; %s %s/%s)", s.Version, c, d,
		runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

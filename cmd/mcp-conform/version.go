package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version, commit and date may be set at build time, as scripts/release.sh
// and the Dockerfile do:
//
//	go build -ldflags "-X main.version=v0.2.0 -X main.commit=<sha> -X main.date=<RFC 3339>"
//
// What is left empty comes from the module's build info (init): "go install
// …/cmd/mcp-conform@v0.2.0" records v0.2.0; a build in a git clone records
// a pseudo-version and the VCS revision and time; other builds say
// "(devel)". After init, version is what every report names as the tool's
// version.
var (
	version string
	commit  string
	date    string
)

// modified is set by init when the build info says the working tree had
// uncommitted changes.
var modified bool

func init() {
	bi, _ := debug.ReadBuildInfo()
	s := resolveStamp(stamp{Version: version, Commit: commit, Date: date}, bi)
	version, commit, date, modified = s.Version, s.Commit, s.Date, s.Modified
}

// stamp is what a binary knows of its own build.
type stamp struct {
	Version, Commit, Date string
	// Modified: the VCS working tree had uncommitted changes.
	Modified bool
}

// resolveStamp fills what the linker flags left empty in ld from the build
// info bi (nil when the binary has none): the main module's version, and
// the vcs.revision, vcs.time and vcs.modified settings. A version still
// unknown is "(devel)".
func resolveStamp(ld stamp, bi *debug.BuildInfo) stamp {
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

// String is the one line "mcp-conform version" and "mcp-conform --version"
// print:
//
//	mcp-conform v0.2.0 (commit 1c73561…, 2026-03-01T12:00:00Z; go1.26.8 linux/amd64)
//
// An unknown commit or date says so ("commit unknown" for a go install from
// the module proxy, which records no VCS information).
func (s stamp) String() string {
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

// versionLine is this binary's stamp line.
func versionLine() string {
	return stamp{Version: version, Commit: commit, Date: date, Modified: modified}.String()
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, the commit and the date it was built from",
		Long: `Print mcp-conform's version, the commit and commit date it was built from, and the
Go toolchain and platform, on one line (the same as --version). A binary from
"go install …@v0.2.0" says v0.2.0 (the module proxy records no commit); a
release binary (scripts/release.sh) or a build in a git clone names its commit.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), versionLine())
			return err
		},
	}
}

package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/mcp-conform/mcp-conform/internal/buildinfo"
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
	s := buildinfo.Resolve(buildinfo.Stamp{Version: version, Commit: commit, Date: date}, bi)
	version, commit, date, modified = s.Version, s.Commit, s.Date, s.Modified
}

// versionLine is this binary's stamp line.
func versionLine() string {
	return buildinfo.Stamp{Version: version, Commit: commit, Date: date, Modified: modified}.String()
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, the commit and the date it was built from",
		Long:  help("version.txt"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), versionLine())
			return err
		},
	}
}

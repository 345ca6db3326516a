package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mcp-conform/mcp-conform/internal/buildinfo"
)

// version, commit and date may be set at build time, as scripts/release.sh
// and the Dockerfile do:
//
//	go build -ldflags "-X main.version=v0.2.0 -X main.commit=<sha> -X main.date=<RFC 3339>"
//
// What is left empty comes from the module's build info (buildinfo.Own):
// "go install …/cmd/mcp-conform@v0.2.0" records v0.2.0; a build in a git
// clone records a pseudo-version and the VCS revision and time; other
// builds say "(devel)". After init, version is what every report names as
// the tool's version, and stamp is the whole of it.
var (
	version string
	commit  string
	date    string
	stamp   buildinfo.Stamp
)

func init() {
	stamp = buildinfo.Own(version, commit, date)
	version = stamp.Version
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, the commit and the date it was built from",
		Long:  help("version.txt"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), stamp.String())
			return err
		},
	}
}

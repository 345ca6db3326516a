// Command mcp-conform tests whether an MCP server keeps the reliability
// contract of the Model Context Protocol when the network and the client
// misbehave. It drives the server through a fault-injection proxy with
// Ginkgo specs and writes a pass/fail report a CI pipeline can gate on.
//
// Exit codes: 0 no FAIL (and no WARN with --strict); 1 at least one FAIL;
// 2 the harness could not run (bad usage, target never started, ERROR).
package main

import (
	"embed"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcp-conform/mcp-conform/fixtures"
	"github.com/mcp-conform/mcp-conform/reports"
)

// usageError marks a bad command line: exit code 2.
type usageError struct{ error }

// exitError carries an exit code out of a command.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// exit ends a command with what a package's RunCLI returned: its error
// (printed by execute, exit code 2), else its exit code.
func exit(code int, err error) error {
	if err == nil && code != 0 {
		return exitError{code}
	}
	return err
}

func main() {
	fixtures.ServeIfAsked()
	os.Exit(execute(os.Args[1:]))
}

// execute runs the command line and returns the process exit code.
func execute(args []string) int {
	root := newRoot()
	root.SetArgs(args)
	err := root.Execute()
	var ee exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.code
	default:
		fmt.Fprintln(os.Stderr, "mcp-conform:", reports.Secrets.String(err.Error()))
		return 2
	}
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "mcp-conform",
		Short:         "Conformance tests and fault injection for MCP servers",
		Long:          help("root.txt"),
		Example:       help("root.example.txt"),
		Version:       stamp.String(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newRunCmd(), newFixtureCmd(), newListCmd(), newExplainCmd(), newProxyCmd(), newCoverageCmd(),
		newReviewCmd(), newHerdCmd(), newVersionCmd(), newSummaryCmd(), newInitCmd(), newReportCmd(),
		newClientCmd(), newServeScenarioCmd(), newReliableDriverCmd())
	return root
}

// helpTexts are the commands' long help and examples, one file each.
//
//go:embed help/*.txt
var helpTexts embed.FS

// help is the text of help/NAME, without its final line break.
func help(name string) string {
	b, err := helpTexts.ReadFile("help/" + name)
	if err != nil {
		panic(err) // a file named here is embedded: a test of every command's help fails first
	}
	return strings.TrimSuffix(string(b), "\n")
}

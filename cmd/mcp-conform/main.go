// Command mcp-conform tests whether an MCP server keeps the reliability
// contract of the Model Context Protocol when the network and the client
// misbehave. It drives the server through a fault-injection proxy with
// Ginkgo specs and writes a pass/fail report a CI pipeline can gate on.
//
// Exit codes: 0 no FAIL (and no WARN with --strict); 1 at least one FAIL;
// 2 the harness could not run (bad usage, target never started, ERROR).
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/mcp-conform/mcp-conform/suites"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

// usageError marks a bad command line: exit code 2.
type usageError struct{ error }

// exitError carries an exit code out of a command.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

func main() {
	suites.ServeFixtureIfAsked()
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
		fmt.Fprintln(os.Stderr, "mcp-conform:", err)
		return 2
	}
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "mcp-conform",
		Short: "Conformance tests and fault injection for MCP servers",
		Long: `mcp-conform stands between a client and an MCP server as a fault-injection proxy
and checks that the server keeps the protocol's reliability contract: cancellation,
progress, and (in later versions) timeouts, idempotency, flow control and more.

With no target, "mcp-conform run" checks the built-in reference server.`,
		Example: `  mcp-conform run
  mcp-conform run --stdio "npx -y @modelcontextprotocol/server-everything" --json report.json
  mcp-conform run --manifest fixtures/targets/server-everything.yaml --junit junit.xml
  mcp-conform run --mutant respond-after-cancel
  mcp-conform list
  mcp-conform explain CANCEL-STDIO-SUPPRESS`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newRunCmd(), newFixtureCmd(), newListCmd(), newExplainCmd(), newProxyCmd())
	root.AddCommand(newReviewCmd())
	root.AddCommand(newHerdCmd())
	root.AddCommand(newClientCmd(), newServeScenarioCmd(), newReliableDriverCmd())
	return root
}

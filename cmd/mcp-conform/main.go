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

	"github.com/mcp-conform/mcp-conform/fixtures"
	"github.com/mcp-conform/mcp-conform/reports"
)

// usageError marks a bad command line: exit code 2.
type usageError struct{ error }

// exitError carries an exit code out of a command.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

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
		Use:   "mcp-conform",
		Short: "Conformance tests and fault injection for MCP servers",
		Long: `mcp-conform checks that an MCP server keeps the reliability contract of the Model
Context Protocol when the network and the client misbehave. A fault-injection proxy
stands between the harness and the server (stdio, Streamable HTTP or WebSocket, in
the 2025-06-18, 2025-11-25 and 2026-07-28 versions): it drops, delays, holds,
duplicates and injects messages, throttles and cuts streams, and kills or pauses
the server, while the checks judge what the server does: CANCEL, PROGRESS,
TIMEOUT, IDEM (idempotent retries), FLOW, SSE, RECONNECT, SESSION, TASK, ROBUST,
SECURITY, LIFECYCLE, HTTP (the 2026-07-28 request headers), VERSION, TOOLS,
PAGINATION and LOGGING, and SCHEMA (every message the server sends, against the
negotiated version's schema). Each verdict is PASS, FAIL (a broken MUST), WARN (a broken SHOULD),
SKIP (with the reason) or ERROR (the harness could not run the check), with the
clause it enforces and the transcript that shows why.

"mcp-conform run" writes the console summary and, on request, JSON, JUnit, HTML
and Markdown reports; its exit code is a CI gate (0 no FAIL, 1 a MUST failed,
2 the harness could not run). A target manifest names the server's tools that
play each role (slow, probe, mutation ...); without one, the checks that need a
role SKIP. With no target, "mcp-conform run" checks the built-in reference server.
"mcp-conform proxy" runs the fault proxy alone, "review" prints each tool's retry
class, "coverage" shows which clauses of the specification the checks cover,
"herd" measures a reconnect herd, "summary" turns a JSON report into the
Markdown summary and GitHub annotations the Action shows.`,
		Example: `  mcp-conform run
  mcp-conform run --stdio "npx -y @modelcontextprotocol/server-everything" --json report.json
  mcp-conform run --manifest fixtures/targets/server-everything.yaml --junit junit.xml
  mcp-conform run --mutant respond-after-cancel
  mcp-conform list
  mcp-conform explain CANCEL-STDIO-SUPPRESS
  mcp-conform version`,
		Version:       versionLine(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newRunCmd(), newFixtureCmd(), newListCmd(), newExplainCmd(), newProxyCmd())
	root.AddCommand(newCoverageCmd())
	root.AddCommand(newReviewCmd())
	root.AddCommand(newHerdCmd())
	root.AddCommand(newVersionCmd(), newSummaryCmd())
	root.AddCommand(newInitCmd())
	root.AddCommand(newReportCmd())
	root.AddCommand(newClientCmd(), newServeScenarioCmd(), newReliableDriverCmd())
	return root
}

// Command mcp-conform-reference is the reference MCP server alone: the
// built-in target of mcp-conform (or one of its mutants), which every check
// run against the built-in target starts as a process of its own.
//
// mcp-conform serves the built-in target itself when it finds no such
// binary beside it; this one links only the server (no harness, no check
// catalog, no JSON Schema meta-schemas compiled at start), so a process
// starts in about a third of the CPU time (internal/refbin says when it is
// used). It reads what to serve from the environment the harness sets
// (fixtures.ServeEnv and the others); run by hand without it, it serves
// the reference over stdio.
package main

import (
	"os"

	"github.com/mcp-conform/mcp-conform/fixtures"
)

func main() {
	if _, set := os.LookupEnv(fixtures.ServeEnv); !set {
		_ = os.Setenv(fixtures.ServeEnv, "reference")
	}
	fixtures.ServeIfAsked()
}

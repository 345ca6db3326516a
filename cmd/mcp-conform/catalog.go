package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcp-conform/mcp-conform/fixtures"
	"github.com/mcp-conform/mcp-conform/internal/describe"
)

func newListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List every check: id, level by version, transports, roles, spec reference",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return describe.List(cmd.OutOrStdout()) },
	}
}

func newExplainCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "explain CHECK-ID",
		Short: "Explain a check: the clause, the spec sentence, how it is provoked, and its mutant",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !describe.ExplainID(cmd.OutOrStdout(), args[0]) {
				return usageError{fmt.Errorf("no check %q (see 'mcp-conform list')", args[0])}
			}
			return nil
		},
	}
}

func newFixtureCmd() *cobra.Command {
	var c fixtures.CommandOptions
	var list bool
	cmd := &cobra.Command{
		Use:   "fixture",
		Short: "Serve the reference MCP server (or one of its mutants) on stdio",
		Long:  help("fixture.txt"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if list {
				return describe.Mutants(cmd.OutOrStdout())
			}
			return exit(fixtures.RunCommand(cmd.Context(), c, os.Stderr))
		},
	}
	cmd.Flags().StringVar(&c.Mutant, "mutant", "", "switch on one deliberate bug")
	cmd.Flags().StringVar(&c.HTTP, "http", "", "serve Streamable HTTP on this address (e.g. 127.0.0.1:3001; the endpoint is /mcp, printed once listening)")
	cmd.Flags().StringVar(&c.WS, "ws", "", "serve JSON-RPC over WebSocket on this address (one message per text frame, one session per connection; the endpoint ws://ADDR/mcp is printed once listening)")
	cmd.Flags().DurationVar(&c.Heartbeat, "heartbeat", 15*time.Second, "interval of SSE comment keep-alives on silent streams (--http)")
	cmd.Flags().BoolVar(&list, "list", false, "list the mutants and the check each one breaks, and the correct variants")
	cmd.Flags().StringVar(&c.Variant, "variant", "", "serve correct variants of the reference (comma-separated, see --list; default $"+fixtures.VariantEnv+"): the same contract in another shape")
	cmd.Flags().StringArrayVar(&c.Tokens, "require-token", nil, "--http: serve only requests with 'Authorization: Bearer TOKEN' (repeatable: any of them); others get 401 with a WWW-Authenticate Bearer challenge (default: no authorization)")
	cmd.Flags().StringVar(&c.Introspection, "token-introspection", "", "--http: also accept bearer tokens this RFC 7662 introspection endpoint says are active and issued for this server (aud)")
	cmd.Flags().StringArrayVar(&c.AuthorizationServers, "authorization-server", nil, "--http, with --require-token or --token-introspection: issuer listed in the protected-resource metadata served at /.well-known/oauth-protected-resource/mcp and named by the 401 challenge (repeatable)")
	cmd.Flags().StringVar(&c.Ledger, "ledger", "", "SQLite file of the keyed mutation tools' ledger (default $"+fixtures.LedgerEnv+", else a private temporary file); servers given one file share it")
	return cmd
}

package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcp-conform/mcp-conform/clientsuite"
	"github.com/mcp-conform/mcp-conform/fixtures"
	"github.com/mcp-conform/mcp-conform/internal/describe"
	"github.com/mcp-conform/mcp-conform/suites"
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
			c, ok := suites.Lookup(args[0])
			if cc, isClient := clientsuite.Lookup(args[0]); !ok && isClient {
				describe.ExplainClient(cmd.OutOrStdout(), cc)
				return nil
			}
			if !ok {
				return usageError{fmt.Errorf("no check %q (see 'mcp-conform list')", args[0])}
			}
			describe.Explain(cmd.OutOrStdout(), c)
			return nil
		},
	}
}

func newFixtureCmd() *cobra.Command {
	var mutant, httpAddr, wsAddr, ledger, variant, introspect string
	var tokens, authServers []string
	var heartbeat time.Duration
	var list bool
	cmd := &cobra.Command{
		Use:   "fixture",
		Short: "Serve the reference MCP server (or one of its mutants) on stdio",
		Long: `Serve the reference server over stdio: it keeps the whole contract mcp-conform
checks. --mutant switches on exactly one deliberate bug, to see a check fail.
--http serves Streamable HTTP instead (both protocol eras on one endpoint); --ws serves
JSON-RPC over WebSocket (one message per text frame), a custom transport with the
stdio message rules.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if list {
				return describe.Mutants(cmd.OutOrStdout())
			}
			vs, err := fixtures.ParseVariants(variant)
			if err != nil {
				return usageError{fmt.Errorf("--variant: %w (see 'mcp-conform fixture --list')", err)}
			}
			if variant == "" {
				// A manifest's env may name them.
				if vs, err = fixtures.ParseVariants(os.Getenv(fixtures.VariantEnv)); err != nil {
					fmt.Fprintf(os.Stderr, "mcp-conform fixture: %v\n", err)
					return exitError{fixtures.ExitBadArgs}
				}
			}
			if mutant != "" && !fixtures.ValidMutant(mutant) {
				return usageError{fmt.Errorf("unknown mutant %q (see 'mcp-conform fixture --list')", mutant)}
			}
			if ledger == "" {
				// A manifest's env may name it (fixtures/targets/reference.yaml).
				ledger = os.Getenv(fixtures.LedgerEnv)
			}
			if (len(tokens) > 0 || introspect != "" || len(authServers) > 0) && httpAddr == "" {
				return usageError{fmt.Errorf("fixture: --require-token, --token-introspection and --authorization-server need --http")}
			}
			if len(authServers) > 0 && len(tokens) == 0 && introspect == "" {
				return usageError{fmt.Errorf("fixture: --authorization-server needs --require-token or --token-introspection")}
			}
			if wsAddr != "" && httpAddr != "" {
				return usageError{fmt.Errorf("fixture: give --http or --ws, not both")}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			o := fixtures.ProcessOptions{Mutant: mutant, Variants: vs, Ledger: ledger, WS: wsAddr, HTTP: httpAddr}
			if httpAddr != "" {
				// A manifest's env may ask for authorization, as the flags do.
				o.Heartbeat = heartbeat
				o.Tokens, o.Introspection, o.AuthorizationServers = tokens, introspect, authServers
				if len(tokens) == 0 {
					o.Tokens = fixtures.SplitList(os.Getenv(fixtures.TokensEnv))
				}
				if introspect == "" {
					o.Introspection = os.Getenv(fixtures.IntrospectEnv)
				}
				if len(authServers) == 0 {
					o.AuthorizationServers = fixtures.SplitList(os.Getenv(fixtures.AuthServersEnv))
				}
			}
			if code := fixtures.RunProcess(ctx, o); code != fixtures.ExitOK {
				return exitError{code}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&mutant, "mutant", "", "switch on one deliberate bug")
	cmd.Flags().StringVar(&httpAddr, "http", "", "serve Streamable HTTP on this address (e.g. 127.0.0.1:3001; the endpoint is /mcp, printed once listening)")
	cmd.Flags().StringVar(&wsAddr, "ws", "", "serve JSON-RPC over WebSocket on this address (one message per text frame, one session per connection; the endpoint ws://ADDR/mcp is printed once listening)")
	cmd.Flags().DurationVar(&heartbeat, "heartbeat", 15*time.Second, "interval of SSE comment keep-alives on silent streams (--http)")
	cmd.Flags().BoolVar(&list, "list", false, "list the mutants and the check each one breaks, and the correct variants")
	cmd.Flags().StringVar(&variant, "variant", "", "serve correct variants of the reference (comma-separated, see --list; default $"+fixtures.VariantEnv+"): the same contract in another shape")
	cmd.Flags().StringArrayVar(&tokens, "require-token", nil, "--http: serve only requests with 'Authorization: Bearer TOKEN' (repeatable: any of them); others get 401 with a WWW-Authenticate Bearer challenge (default: no authorization)")
	cmd.Flags().StringVar(&introspect, "token-introspection", "", "--http: also accept bearer tokens this RFC 7662 introspection endpoint says are active and issued for this server (aud)")
	cmd.Flags().StringArrayVar(&authServers, "authorization-server", nil, "--http, with --require-token or --token-introspection: issuer listed in the protected-resource metadata served at /.well-known/oauth-protected-resource/mcp and named by the 401 challenge (repeatable)")
	cmd.Flags().StringVar(&ledger, "ledger", "", "SQLite file of the keyed mutation tools' ledger (default $"+fixtures.LedgerEnv+", else a private temporary file); servers given one file share it")
	return cmd
}

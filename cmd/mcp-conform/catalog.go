package main

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcp-conform/mcp-conform/clientsuite"
	"github.com/mcp-conform/mcp-conform/fixtures"
	"github.com/mcp-conform/mcp-conform/suites"
)

func newListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List every check: id, level by version, transports, roles, spec reference",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tLEVEL\tVERSIONS\tTRANSPORTS\tROLES\tSPEC")
			for _, c := range suites.Catalog() {
				vs := c.Versions()
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", c.ID, levels(c), strings.Join(vs, ","),
					strings.Join(c.Transports, ","), orDash(strings.Join(c.Roles, ",")), c.Rules[vs[0]].Spec)
			}
			listClientChecks(tw)
			return tw.Flush()
		},
	}
}

// levels summarises a check's level across versions, e.g. "MUST" or
// "SHOULD (2025-*), MUST (2026-07-28)".
func levels(c *suites.Check) string {
	byLevel := map[string][]string{}
	for _, v := range c.Versions() {
		l := string(c.Rules[v].Level)
		byLevel[l] = append(byLevel[l], v)
	}
	if len(byLevel) == 1 {
		for l := range byLevel {
			return l
		}
	}
	var parts []string
	for l, vs := range byLevel {
		parts = append(parts, fmt.Sprintf("%s(%s)", l, strings.Join(vs, ",")))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func newExplainCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "explain CHECK-ID",
		Short: "Explain a check: the clause, the spec sentence, how it is provoked, and its mutant",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ok := suites.Lookup(args[0])
			if cc, isClient := clientsuite.Lookup(args[0]); !ok && isClient {
				explainClientCheck(cmd.OutOrStdout(), cc)
				return nil
			}
			if !ok {
				return usageError{fmt.Errorf("no check %q (see 'mcp-conform list')", args[0])}
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "%s — %s\n\n", c.ID, c.Title)
			fmt.Fprintf(w, "How it is checked:\n  %s\n\n", c.How)
			fmt.Fprintf(w, "Transports: %s    Roles needed: %s\n\n", strings.Join(c.Transports, ", "), orDash(strings.Join(c.Roles, ", ")))
			for _, v := range c.Versions() {
				r := c.Rules[v]
				fmt.Fprintf(w, "%s  %s  (%s)\n  %q\n", v, r.Level, r.Spec, r.Clause)
			}
			for _, m := range fixtures.Mutants() {
				if m.Breaks == c.ID {
					fmt.Fprintf(w, "\nMutant that breaks it: %s — %s\n  try: mcp-conform run --mutant %s --focus %s\n", m.Name, m.Description, m.Name, c.ID)
				}
			}
			return nil
		},
	}
}

func newFixtureCmd() *cobra.Command {
	var mutant, httpAddr, wsAddr, ledger string
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
				tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "MUTANT\tBREAKS\tWHAT IT DOES")
				for _, m := range fixtures.Mutants() {
					fmt.Fprintf(tw, "%s\t%s\t%s\n", m.Name, orDash(m.Breaks), m.Description)
				}
				return tw.Flush()
			}
			if mutant != "" && !fixtures.ValidMutant(mutant) {
				return usageError{fmt.Errorf("unknown mutant %q (see 'mcp-conform fixture --list')", mutant)}
			}
			if ledger != "" {
				if err := os.Setenv(suites.FixtureLedgerEnv, ledger); err != nil {
					return fmt.Errorf("--ledger: %w", err)
				}
			}
			if wsAddr != "" {
				if httpAddr != "" {
					return usageError{fmt.Errorf("fixture: give --http or --ws, not both")}
				}
				if code := suites.ServeFixtureWS(mutant, wsAddr); code != 0 {
					return exitError{code}
				}
				return nil
			}
			if httpAddr != "" {
				if code := suites.ServeFixtureHTTP(mutant, httpAddr, heartbeat); code != 0 {
					return exitError{code}
				}
				return nil
			}
			if code := suites.ServeFixture(mutant); code != 0 {
				return exitError{code}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&mutant, "mutant", "", "switch on one deliberate bug")
	cmd.Flags().StringVar(&httpAddr, "http", "", "serve Streamable HTTP on this address (e.g. 127.0.0.1:3001; the endpoint is /mcp, printed once listening)")
	cmd.Flags().StringVar(&wsAddr, "ws", "", "serve JSON-RPC over WebSocket on this address (one message per text frame, one session per connection; the endpoint ws://ADDR/mcp is printed once listening)")
	cmd.Flags().DurationVar(&heartbeat, "heartbeat", 15*time.Second, "interval of SSE comment keep-alives on silent streams (--http)")
	cmd.Flags().BoolVar(&list, "list", false, "list the mutants and the check each one breaks")
	cmd.Flags().StringVar(&ledger, "ledger", "", "SQLite file of the keyed mutation tools' ledger (default $"+suites.FixtureLedgerEnv+", else a private temporary file); servers given one file share it")
	return cmd
}

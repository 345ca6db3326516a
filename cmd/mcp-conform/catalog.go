package main

import (
	"fmt"
	"os"

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
	c.Register(cmd.Flags())
	cmd.Flags().BoolVar(&list, "list", false, "list the mutants and the check each one breaks, and the correct variants")
	return cmd
}

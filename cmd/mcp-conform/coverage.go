package main

import (
	"github.com/spf13/cobra"

	"github.com/mcp-conform/mcp-conform/internal/describe"
)

func newCoverageCmd() *cobra.Command {
	var format string
	var pages []string
	cmd := &cobra.Command{
		Use:   "coverage",
		Short: "Every clause of docs/CLAUSES.md with its status and the checks and mutants that prove it",
		Long:  help("coverage.txt"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return describe.WriteCoverage(cmd.OutOrStdout(), format, pages)
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "text or json")
	cmd.Flags().StringSliceVar(&pages, "page", nil, "keep only these clause prefixes (e.g. --page basic,tr,lc)")
	return cmd
}

package main

import (
	"github.com/spf13/cobra"

	"github.com/mcp-conform/mcp-conform/internal/runner"
	"github.com/mcp-conform/mcp-conform/reports"
)

func newReportCmd() *cobra.Command {
	report := &cobra.Command{Use: "report", Short: "Work with JSON reports of earlier runs"}
	var o outputFlags
	merge := &cobra.Command{
		Use:   "merge REPORT.json...",
		Short: "Merge the JSON reports of runs that each checked a part (--shard slices, CI jobs, targets)",
		Long: `Merge the JSON reports of runs that each checked a part of a whole — the slices
of 'mcp-conform run --shard i/n' run by CI jobs, or runs of different targets — into
the report the whole run gives: every check in report order, the retry-class table,
the versions each target accepted and refused, the totals. A check run found in two
reports is an error. Print the summary, write the requested reports, and exit as run
does: 0 no FAIL (and no WARN with --strict), 1 a FAIL, 2 an ERROR.`,
		Example: `  mcp-conform run --shard 1/2 --json part1.json
  mcp-conform run --shard 2/2 --json part2.json
  mcp-conform report merge part1.json part2.json --json report.json --junit junit.xml`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var parts []*reports.Report
			for _, a := range args {
				rep, err := runner.ReadReport(a)
				if err != nil {
					return usageError{err}
				}
				parts = append(parts, rep)
			}
			rep, err := runner.Merge(parts)
			if err != nil {
				return usageError{err}
			}
			return o.finish(cmd, rep, nil)
		},
	}
	o.register(merge)
	report.AddCommand(merge)
	return report
}

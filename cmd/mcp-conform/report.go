package main

import (
	"github.com/spf13/cobra"

	"github.com/mcp-conform/mcp-conform/internal/runner"
)

func newReportCmd() *cobra.Command {
	report := &cobra.Command{Use: "report", Short: "Work with JSON reports of earlier runs"}
	var o outputFlags
	merge := &cobra.Command{
		Use:     "merge REPORT.json...",
		Short:   "Merge the JSON reports of runs that each checked a part (--shard slices, CI jobs, targets)",
		Long:    help("report-merge.txt"),
		Example: help("report-merge.example.txt"),
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rep, err := runner.MergeFiles(args)
			if err != nil {
				return err
			}
			return o.finish(cmd, rep, nil)
		},
	}
	o.register(merge)
	report.AddCommand(merge)
	return report
}

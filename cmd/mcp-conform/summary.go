package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/mcp-conform/mcp-conform/reports"
)

func newSummaryCmd() *cobra.Command {
	var o reports.SummaryOptions
	exitCode := -1
	cmd := &cobra.Command{
		Use:     "summary REPORT.json",
		Short:   "Turn a JSON report into the Markdown summary (and GitHub annotations and outputs)",
		Long:    help("summary.txt"),
		Example: help("summary.example.txt"),
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.SetCLI(exitCode, os.Getenv); err != nil {
				return usageError{err}
			}
			return reports.WriteSummary(cmd.OutOrStdout(), args[0], o)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Markdown, "markdown", "", "write the summary to this file (default: stdout; with --github, also $GITHUB_STEP_SUMMARY)")
	fl.BoolVar(&o.GitHub, "github", false, "GitHub Actions: append the summary to $GITHUB_STEP_SUMMARY, print workflow annotations, write the step outputs")
	fl.IntVar(&exitCode, "exit-code", -1, "the exit code the run ended with; the verdict follows it (default: computed from the report)")
	fl.BoolVar(&o.Strict, "strict", false, "without --exit-code: WARN fails the verdict, as run --strict")
	fl.BoolVar(&o.StrictBaseline, "strict-baseline", false, "without --exit-code: stale baseline entries fail the verdict, as run --strict-baseline")
	fl.StringVar(&o.HTMLName, "html-name", "", "file name of the HTML report written beside the JSON one (e.g. report.html)")
	fl.StringVar(&o.SpecBase, "spec-base", reports.DefaultSpecBase, "URL specification references are linked under")
	fl.StringVar(&o.ArtifactName, "artifact-name", "", "name of the CI artifact holding the HTML report")
	fl.StringVar(&o.ArtifactURL, "artifact-url", "", "link to that artifact; each failing check's row links to it")
	return cmd
}

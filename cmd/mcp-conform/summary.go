package main

import (
	"errors"
	"os"

	"github.com/spf13/cobra"

	"github.com/mcp-conform/mcp-conform/reports"
)

type summaryFlags struct {
	markdown               string
	github                 bool
	exitCode               int
	strict, strictBaseline bool
	htmlName, specBase     string
	artifactName           string
	artifactURL            string
}

func newSummaryCmd() *cobra.Command {
	var f summaryFlags
	cmd := &cobra.Command{
		Use:     "summary REPORT.json",
		Short:   "Turn a JSON report into the Markdown summary (and GitHub annotations and outputs)",
		Long:    help("summary.txt"),
		Example: help("summary.example.txt"),
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSummary(cmd, args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.markdown, "markdown", "", "write the summary to this file (default: stdout; with --github, also $GITHUB_STEP_SUMMARY)")
	fl.BoolVar(&f.github, "github", false, "GitHub Actions: append the summary to $GITHUB_STEP_SUMMARY, print workflow annotations, write the step outputs")
	fl.IntVar(&f.exitCode, "exit-code", -1, "the exit code the run ended with; the verdict follows it (default: computed from the report)")
	fl.BoolVar(&f.strict, "strict", false, "without --exit-code: WARN fails the verdict, as run --strict")
	fl.BoolVar(&f.strictBaseline, "strict-baseline", false, "without --exit-code: stale baseline entries fail the verdict, as run --strict-baseline")
	fl.StringVar(&f.htmlName, "html-name", "", "file name of the HTML report written beside the JSON one (e.g. report.html)")
	fl.StringVar(&f.specBase, "spec-base", reports.DefaultSpecBase, "URL specification references are linked under")
	fl.StringVar(&f.artifactName, "artifact-name", "", "name of the CI artifact holding the HTML report")
	fl.StringVar(&f.artifactURL, "artifact-url", "", "link to that artifact; each failing check's row links to it")
	return cmd
}

func runSummary(cmd *cobra.Command, path string, f summaryFlags) error {
	if f.exitCode < -1 {
		return usageError{errors.New("--exit-code: want 0 or more")}
	}
	o := reports.SummaryOptions{Markdown: f.markdown, GitHub: f.github, MarkdownOptions: reports.MarkdownOptions{
		Strict: f.strict, StrictBaseline: f.strictBaseline, SpecBase: f.specBase,
		HTMLName: f.htmlName, ArtifactName: f.artifactName, ArtifactURL: f.artifactURL}}
	if f.github {
		o.StepSummary, o.StepOutput = os.Getenv("GITHUB_STEP_SUMMARY"), os.Getenv("GITHUB_OUTPUT")
		if o.StepSummary == "" || o.StepOutput == "" {
			return usageError{errors.New("--github needs $GITHUB_STEP_SUMMARY and $GITHUB_OUTPUT (set by the GitHub Actions runner)")}
		}
	}
	if f.exitCode >= 0 {
		o.ExitCode = &f.exitCode
	}
	return reports.WriteSummary(cmd.OutOrStdout(), path, o)
}

package main

import (
	"github.com/spf13/cobra"

	"github.com/mcp-conform/mcp-conform/reports"
)

// outputFlags are the report files, console settings and exit-code rules
// that run and report merge share.
type outputFlags struct{ reports.Output }

func (o *outputFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&o.JSON, "json", "", "write the JSON report (schema mcp-conform/report/v1) to this file")
	fl.StringVar(&o.JUnit, "junit", "", "write a JUnit XML report to this file")
	fl.StringVar(&o.HTML, "html", "", "write a self-contained HTML report (sequence diagrams of failing checks) to this file")
	fl.StringVar(&o.Markdown, "markdown", "", "write the Markdown summary (verdict, counts, a row per failing check with its clause) to this file, for a CI page")
	fl.StringVar(&o.SpecBase, "spec-base", reports.DefaultSpecBase, "URL or relative path the HTML report links spec references under (e.g. spec/ for a local copy of the spec tree)")
	fl.BoolVar(&o.Strict, "strict", false, "WARN (a broken SHOULD) fails the exit code too")
	fl.BoolVar(&o.StrictBaseline, "strict-baseline", false, "a baseline entry whose check now passes (stale) fails the exit code")
	fl.BoolVarP(&o.Verbose, "verbose", "v", false, "print transcripts of failing checks and the server's stderr")
	fl.StringVar(&o.Color, "color", "auto", "colour output: auto, always or never")
}

// finish writes the reports and the console summary and ends with the
// run's exit code.
func (o outputFlags) finish(cmd *cobra.Command, rep *reports.Report, runErr error) error {
	return exit(o.Finish(cmd.OutOrStdout(), cmd.ErrOrStderr(), rep, runErr))
}

package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/mcp-conform/mcp-conform/reports"
)

// outputFlags are the report files, console settings and exit-code rules
// that run and report merge share.
type outputFlags struct {
	jsonOut, junitOut, htmlOut, specBase, color string
	markdownOut                                 string
	strict, strictBaseline, verbose             bool
}

func (o *outputFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&o.jsonOut, "json", "", "write the JSON report (schema mcp-conform/report/v1) to this file")
	fl.StringVar(&o.junitOut, "junit", "", "write a JUnit XML report to this file")
	fl.StringVar(&o.htmlOut, "html", "", "write a self-contained HTML report (sequence diagrams of failing checks) to this file")
	fl.StringVar(&o.markdownOut, "markdown", "", "write the Markdown summary (verdict, counts, a row per failing check with its clause) to this file, for a CI page")
	fl.StringVar(&o.specBase, "spec-base", reports.DefaultSpecBase, "URL or relative path the HTML report links spec references under (e.g. spec/ for a local copy of the spec tree)")
	fl.BoolVar(&o.strict, "strict", false, "WARN (a broken SHOULD) fails the exit code too")
	fl.BoolVar(&o.strictBaseline, "strict-baseline", false, "a baseline entry whose check now passes (stale) fails the exit code")
	fl.BoolVarP(&o.verbose, "verbose", "v", false, "print transcripts of failing checks and the server's stderr")
	fl.StringVar(&o.color, "color", "auto", "colour output: auto, always or never")
}

// finish writes the requested report files and the console summary, and
// turns the report (or runErr, a run that checked nothing) into the exit
// code.
func (o outputFlags) finish(cmd *cobra.Command, rep *reports.Report, runErr error) error {
	// Recorded results are scrubbed as they are recorded; this is the last
	// net under every file and line written from here.
	reports.Secrets.Report(rep)
	write := func(path string, fn func(io.Writer, *reports.Report) error) error {
		if path == "" {
			return nil
		}
		out, err := os.Create(path)
		if err != nil {
			return fmt.Errorf("write report: %w", err)
		}
		if err := fn(out, rep); err != nil {
			_ = out.Close()
			return fmt.Errorf("write report %s: %w", path, err)
		}
		return out.Close()
	}
	html := func(w io.Writer, r *reports.Report) error {
		return reports.WriteHTML(w, r, reports.HTMLOptions{SpecBase: o.specBase})
	}
	markdown := func(w io.Writer, r *reports.Report) error { return writeMarkdown(w, r, o) }
	for _, err := range []error{write(o.jsonOut, reports.WriteJSON), write(o.htmlOut, html), write(o.markdownOut, markdown), write(o.junitOut, reports.WriteJUnit)} {
		if err != nil {
			return err
		}
	}
	stdout := cmd.OutOrStdout()
	if err := reports.WriteConsole(stdout, rep, reports.ConsoleOptions{
		Color: useColor(o.color, stdout), Verbose: o.verbose, Strict: o.strict, StrictBaseline: o.strictBaseline,
	}); err != nil {
		return err
	}
	if runErr != nil {
		fmt.Fprintln(cmd.ErrOrStderr(), "mcp-conform:", reports.Secrets.String(runErr.Error()))
		return exitError{2}
	}
	if code := reports.RunExitCode(rep, o.strict, o.strictBaseline); code != 0 {
		return exitError{code}
	}
	return nil
}

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcp-conform/mcp-conform/reports"
)

// githubOutputs are the step outputs "summary --github" writes, in order.
var githubOutputs = []string{"pass", "fail", "warn", "skip", "error", "report-json"}

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
		Use:   "summary REPORT.json",
		Short: "Turn a JSON report into the Markdown summary (and GitHub annotations and outputs)",
		Long: `Read a JSON report written by "mcp-conform run --json" and write its Markdown
summary (the one "run --markdown" writes): the verdict, the checks counted by level
and status, and a row per FAIL, ERROR and WARN check with its clause, spec links
and where its transcript is. It goes to stdout, or to --markdown FILE.

With --github (what the GitHub Action runs, after uploading the reports) it speaks
to GitHub Actions instead: it appends the summary to $GITHUB_STEP_SUMMARY, prints an
::error, ::warning or ::notice workflow command for each check that did not pass,
and appends the outputs pass, fail, warn, skip, error (counts) and report-json (the
report's absolute path) to $GITHUB_OUTPUT. When the run wrote no report (it could not
start), the summary and an ::error say so and the outputs are empty.

The verdict follows --exit-code, the code the run ended with; without it, it is
computed from the report as run does (with --strict and --strict-baseline).`,
		Example: `  mcp-conform summary report.json > summary.md
  mcp-conform summary reports/report.json --github --exit-code "$code" --artifact-url "$url"`,
		Args: cobra.ExactArgs(1),
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
	var stepSummary, stepOutput string
	if f.github {
		stepSummary, stepOutput = os.Getenv("GITHUB_STEP_SUMMARY"), os.Getenv("GITHUB_OUTPUT")
		if stepSummary == "" || stepOutput == "" {
			return usageError{errors.New("--github needs $GITHUB_STEP_SUMMARY and $GITHUB_OUTPUT (set by the GitHub Actions runner)")}
		}
	}
	opts := reports.MarkdownOptions{Strict: f.strict, StrictBaseline: f.strictBaseline, SpecBase: f.specBase,
		HTMLName: f.htmlName, ArtifactName: f.artifactName, ArtifactURL: f.artifactURL}
	if f.exitCode >= 0 {
		opts.ExitCode = &f.exitCode
	}

	rep, readErr := readReport(path)
	var md, annotations bytes.Buffer
	outputs := map[string]string{}
	switch {
	case readErr != nil && !(f.github && errors.Is(readErr, os.ErrNotExist)):
		return readErr
	case readErr != nil:
		// The run could not start: say so where the reports would be.
		why := "mcp-conform run wrote no report"
		if f.exitCode >= 0 {
			why += " (it exited " + strconv.Itoa(f.exitCode) + ")"
		}
		why += ": the harness could not run (the run step's log says why)."
		fmt.Fprintf(&md, "## mcp-conform: ⛔ ERROR\n\n%s\n", why)
		fmt.Fprintf(&annotations, "::error title=mcp-conform::%s\n", strings.ReplaceAll(why, "%", "%25"))
	default:
		if err := reports.WriteMarkdown(&md, rep, opts); err != nil {
			return err
		}
		if err := reports.WriteGitHubAnnotations(&annotations, rep); err != nil {
			return err
		}
		s := reports.Summarize(rep.Checks)
		for k, v := range map[string]int{"pass": s.Pass, "fail": s.Fail, "warn": s.Warn, "skip": s.Skip, "error": s.Error} {
			outputs[k] = strconv.Itoa(v)
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			return fmt.Errorf("summary: %w", err)
		}
		outputs["report-json"] = abs
	}

	if f.markdown != "" {
		if err := os.WriteFile(f.markdown, md.Bytes(), 0o644); err != nil {
			return fmt.Errorf("summary: %w", err)
		}
	}
	if !f.github {
		if f.markdown == "" {
			_, err := cmd.OutOrStdout().Write(md.Bytes())
			return err
		}
		return nil
	}
	if err := appendFile(stepSummary, md.Bytes()); err != nil {
		return err
	}
	var out bytes.Buffer
	for _, k := range githubOutputs {
		v := outputs[k]
		if strings.ContainsAny(v, "\r\n") {
			return fmt.Errorf("summary: output %s holds a line break: %q", k, v)
		}
		fmt.Fprintf(&out, "%s=%s\n", k, v)
	}
	if err := appendFile(stepOutput, out.Bytes()); err != nil {
		return err
	}
	_, err := cmd.OutOrStdout().Write(annotations.Bytes())
	return err
}

// readReport reads a JSON report file.
func readReport(path string) (*reports.Report, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("summary: %w", err)
	}
	defer fh.Close()
	rep, err := reports.ReadJSON(fh)
	if err != nil {
		return nil, fmt.Errorf("summary: %s: %w", path, err)
	}
	return rep, nil
}

// appendFile appends b to the file at path, as the runner's files want.
func appendFile(path string, b []byte) error {
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("summary: %w", err)
	}
	_, err = io.Copy(fh, bytes.NewReader(b))
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("summary: write %s: %w", path, err)
	}
	return nil
}

// writeMarkdown writes run's --markdown summary: the verdict as the run's
// exit code has it, and the HTML report's name when one is written.
func writeMarkdown(w io.Writer, r *reports.Report, f runFlags) error {
	opts := reports.MarkdownOptions{Strict: f.strict, StrictBaseline: f.strictBaseline, SpecBase: f.specBase}
	if f.htmlOut != "" {
		opts.HTMLName = filepath.Base(f.htmlOut)
	}
	return reports.WriteMarkdown(w, r, opts)
}

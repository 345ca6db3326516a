package reports

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// GitHubOutputs are the step outputs "summary --github" writes, in order.
var GitHubOutputs = []string{"pass", "fail", "warn", "skip", "error", "report-json"}

// SummaryOptions is what "mcp-conform summary" does with a JSON report.
type SummaryOptions struct {
	// MarkdownOptions decide the summary's verdict and links.
	MarkdownOptions
	// Markdown is the file the summary is written to; empty: stdout (or,
	// with GitHub, only the step summary).
	Markdown string
	// GitHub speaks to GitHub Actions: the summary is appended to
	// StepSummary, the annotations go to stdout and the step outputs are
	// appended to StepOutput ($GITHUB_STEP_SUMMARY, $GITHUB_OUTPUT).
	GitHub                  bool
	StepSummary, StepOutput string
}

// SetCLI completes o from the summary command's own flags: exitCode (-1:
// none given; the verdict is then computed from the report) and, with
// GitHub, the step files the Actions runner names in its environment
// (getenv). Its errors are bad usage.
func (o *SummaryOptions) SetCLI(exitCode int, getenv func(string) string) error {
	if exitCode < -1 {
		return errors.New("--exit-code: want 0 or more")
	}
	if o.GitHub {
		o.StepSummary, o.StepOutput = getenv("GITHUB_STEP_SUMMARY"), getenv("GITHUB_OUTPUT")
		if o.StepSummary == "" || o.StepOutput == "" {
			return errors.New("--github needs $GITHUB_STEP_SUMMARY and $GITHUB_OUTPUT (set by the GitHub Actions runner)")
		}
	}
	if exitCode >= 0 {
		o.ExitCode = &exitCode
	}
	return nil
}

// WriteSummary reads the JSON report at path and writes its Markdown
// summary as o says; with o.GitHub, a report that does not exist (the run
// could not start) is summarised as an ERROR with empty outputs.
func WriteSummary(stdout io.Writer, path string, o SummaryOptions) error {
	rep, readErr := readSummaryReport(path)
	var md, annotations bytes.Buffer
	outputs := map[string]string{}
	switch {
	case readErr != nil && !(o.GitHub && errors.Is(readErr, os.ErrNotExist)):
		return readErr
	case readErr != nil:
		// The run could not start: say so where the reports would be.
		why := "mcp-conform run wrote no report"
		if o.ExitCode != nil {
			why += " (it exited " + strconv.Itoa(*o.ExitCode) + ")"
		}
		why += ": the harness could not run (the run step's log says why)."
		fmt.Fprintf(&md, "## mcp-conform: ⛔ ERROR\n\n%s\n", why)
		fmt.Fprintf(&annotations, "::error title=mcp-conform::%s\n", strings.ReplaceAll(why, "%", "%25"))
	default:
		if err := WriteMarkdown(&md, rep, o.MarkdownOptions); err != nil {
			return err
		}
		if err := WriteGitHubAnnotations(&annotations, rep); err != nil {
			return err
		}
		s := Summarize(rep.Checks)
		for k, v := range map[string]int{"pass": s.Pass, "fail": s.Fail, "warn": s.Warn, "skip": s.Skip, "error": s.Error} {
			outputs[k] = strconv.Itoa(v)
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			return fmt.Errorf("summary: %w", err)
		}
		outputs["report-json"] = abs
	}

	if o.Markdown != "" {
		if err := os.WriteFile(o.Markdown, md.Bytes(), 0o644); err != nil {
			return fmt.Errorf("summary: %w", err)
		}
	}
	if !o.GitHub {
		if o.Markdown == "" {
			_, err := stdout.Write(md.Bytes())
			return err
		}
		return nil
	}
	if err := appendFile(o.StepSummary, md.Bytes()); err != nil {
		return err
	}
	var out bytes.Buffer
	for _, k := range GitHubOutputs {
		v := outputs[k]
		if strings.ContainsAny(v, "\r\n") {
			return fmt.Errorf("summary: output %s holds a line break: %q", k, v)
		}
		fmt.Fprintf(&out, "%s=%s\n", k, v)
	}
	if err := appendFile(o.StepOutput, out.Bytes()); err != nil {
		return err
	}
	_, err := stdout.Write(annotations.Bytes())
	return err
}

// readSummaryReport reads a JSON report file.
func readSummaryReport(path string) (*Report, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("summary: %w", err)
	}
	defer fh.Close()
	rep, err := ReadJSON(fh)
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

package reports

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/term"
)

// Output is where a finished run's report goes — its report files, the
// console summary and the exit-code rules — as "run" and "report merge"
// share them (their --json, --junit, --html, --markdown, --spec-base,
// --color, --strict, --strict-baseline and --verbose flags).
type Output struct {
	JSON, JUnit, HTML, Markdown, SpecBase, Color string
	Strict, StrictBaseline, Verbose              bool
}

// Finish writes the requested report files and the console summary to
// stdout, and turns the report (or runErr, a run that checked nothing,
// printed on stderr) into the exit code: 0 when nothing fails. An error is
// a report that could not be written.
func (o Output) Finish(stdout, stderr io.Writer, rep *Report, runErr error) (int, error) {
	// Recorded results are scrubbed as they are recorded; this is the last
	// net under every file and line written from here.
	Secrets.Report(rep)
	html := func(w io.Writer, r *Report) error {
		return WriteHTML(w, r, HTMLOptions{SpecBase: o.SpecBase})
	}
	markdown := func(w io.Writer, r *Report) error { return o.writeMarkdown(w, r) }
	for _, err := range []error{WriteFile(o.JSON, rep, WriteJSON), WriteFile(o.HTML, rep, html), WriteFile(o.Markdown, rep, markdown), WriteFile(o.JUnit, rep, WriteJUnit)} {
		if err != nil {
			return 0, err
		}
	}
	if err := WriteConsole(stdout, rep, ConsoleOptions{
		Color: UseColor(o.Color, stdout), Verbose: o.Verbose, Strict: o.Strict, StrictBaseline: o.StrictBaseline,
	}); err != nil {
		return 0, err
	}
	if runErr != nil {
		fmt.Fprintln(stderr, "mcp-conform:", Secrets.String(runErr.Error()))
		return 2, nil
	}
	return RunExitCode(rep, o.Strict, o.StrictBaseline), nil
}

// writeMarkdown writes the --markdown summary of run and report merge: the
// verdict as the run's exit code has it, and the HTML report's name when
// one is written.
func (o Output) writeMarkdown(w io.Writer, r *Report) error {
	opts := MarkdownOptions{Strict: o.Strict, StrictBaseline: o.StrictBaseline, SpecBase: o.SpecBase}
	if o.HTML != "" {
		opts.HTMLName = filepath.Base(o.HTML)
	}
	return WriteMarkdown(w, r, opts)
}

// WriteFile writes rep to a new file at path with write; an empty path
// writes nothing.
func WriteFile(path string, rep *Report, write func(io.Writer, *Report) error) error {
	if path == "" {
		return nil
	}
	out, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if err := write(out, rep); err != nil {
		_ = out.Close()
		return fmt.Errorf("write report %s: %w", path, err)
	}
	return out.Close()
}

// UseColor reports whether console output to w is coloured: mode "always"
// or "never", or else (auto) when w is a terminal and $NO_COLOR is unset.
func UseColor(mode string, w io.Writer) bool {
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

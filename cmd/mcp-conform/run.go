package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/mcp-conform/mcp-conform/fixtures"
	"github.com/mcp-conform/mcp-conform/reports"
	"github.com/mcp-conform/mcp-conform/suites"
)

type runFlags struct {
	stdio, url, manifest, mutant string
	jsonOut, junitOut, htmlOut   string
	markdownOut                  string
	spec, labelFilter            string
	focus                        []string
	strict, verbose, quiet       bool
	color                        string
	callTimeout, opTimeout       time.Duration
	startTimeout, budget         time.Duration
	specBase                     string
	baseline                     string
	strictBaseline               bool
	// websocket adds the reference server over WebSocket to the built-in
	// targets.
	websocket bool
	// jobs bounds the child processes of a --spec all run (one per
	// version); 1 runs every version in this process.
	jobs int
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the conformance checks against a target and print the report",
		Long: `Run every selected check against the target and print a summary; write JSON and
JUnit reports on request. With no target, the built-in reference server is used
(--mutant switches one deliberate bug on). Progress is printed on stderr as each
check ends.

Exit codes: 0 no FAIL (and no WARN with --strict); 1 at least one FAIL;
2 the harness could not run (bad usage, target never started, ERROR).
With --baseline FILE, the FAIL and WARN checks listed there do not count;
a listed check that now passes is reported as stale (and fails with
--strict-baseline).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runChecks(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.stdio, "stdio", "", "command line of a stdio MCP server to test")
	fl.StringVar(&f.url, "url", "", "URL of a running Streamable HTTP MCP server (its endpoint, e.g. http://127.0.0.1:3001/mcp)")
	fl.StringVar(&f.manifest, "manifest", "", "target manifest (YAML) naming the server and its roles")
	fl.StringVar(&f.mutant, "mutant", "", "built-in target with this mutant switched on (see 'mcp-conform fixture --list')")
	fl.StringVar(&f.jsonOut, "json", "", "write the JSON report (schema mcp-conform/report/v1) to this file")
	fl.StringVar(&f.junitOut, "junit", "", "write a JUnit XML report to this file")
	fl.StringVar(&f.htmlOut, "html", "", "write a self-contained HTML report (sequence diagrams of failing checks) to this file")
	fl.StringVar(&f.markdownOut, "markdown", "", "write the Markdown summary (verdict, counts, a row per failing check with its clause) to this file, for a CI page")
	fl.StringVar(&f.specBase, "spec-base", reports.DefaultSpecBase, "URL or relative path the HTML report links spec references under (e.g. spec/ for a local copy of the spec tree)")
	fl.StringVar(&f.spec, "spec", "", "force a protocol version: 2026-07-28, 2025-11-25 or 2025-06-18 (default: the newest the server accepts), or all: each target once per version")
	fl.BoolVar(&f.strict, "strict", false, "WARN (a broken SHOULD) fails the exit code too")
	fl.StringVar(&f.baseline, "baseline", "", "expected-failures file (YAML list of {id, reason}, optional transport/spec/target): listed failures do not fail the exit code")
	fl.BoolVar(&f.strictBaseline, "strict-baseline", false, "a baseline entry whose check now passes (stale) fails the exit code")
	fl.StringVar(&f.labelFilter, "label-filter", "", "select checks by label, ginkgo syntax (e.g. 'area:cancel && level:must')")
	fl.StringArrayVar(&f.focus, "focus", nil, "select checks whose id or title matches this regular expression (repeatable)")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "print transcripts of failing checks and the server's stderr")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress lines")
	fl.StringVar(&f.color, "color", "auto", "colour output: auto, always or never")
	fl.DurationVar(&f.callTimeout, "call-timeout", 30*time.Second, "bound on one call of a role tool")
	fl.DurationVar(&f.opTimeout, "op-timeout", 5*time.Second, "bound on one ordinary exchange (ping, barrier)")
	fl.DurationVar(&f.startTimeout, "start-timeout", 15*time.Second, "bound on starting the target and negotiating a version")
	fl.DurationVar(&f.budget, "budget", 15*time.Minute, "bound on the whole run")
	fl.IntVar(&f.jobs, "jobs", 0, "how many targets (a transport in a protocol version) are checked at once, each in its own process (0: up to 4; 1: one after another in this process)")
	fl.BoolVar(&f.websocket, "websocket", false, "built-in target: also check the reference server over WebSocket (JSON-RPC, one message per frame; the CANCEL, PROGRESS and ROBUST checks)")
	return cmd
}

// configFromFlags builds the run configuration, or a usage error.
func configFromFlags(f runFlags) (*suites.Config, error) {
	targets := 0
	for _, s := range []string{f.stdio, f.url, f.manifest} {
		if s != "" {
			targets++
		}
	}
	switch {
	case targets > 1:
		return nil, usageError{errors.New("give at most one of --stdio, --url and --manifest")}
	case f.mutant != "" && targets > 0:
		return nil, usageError{errors.New("--mutant applies to the built-in target only")}
	case f.mutant != "" && !fixtures.ValidMutant(f.mutant):
		return nil, usageError{fmt.Errorf("unknown mutant %q (see 'mcp-conform fixture --list')", f.mutant)}
	case f.spec != "" && f.spec != suites.AllVersions && !isKnownVersion(f.spec):
		return nil, usageError{fmt.Errorf("--spec %q: known versions are 2026-07-28, 2025-11-25, 2025-06-18, or all", f.spec)}
	}
	cfg := &suites.Config{Spec: f.spec, Mutant: f.mutant, Strict: f.strict, Verbose: f.verbose,
		CallTimeout: f.callTimeout, OpTimeout: f.opTimeout, StartTimeout: f.startTimeout}
	var err error
	cfg.Targets, err = suites.TargetFlags{Stdio: f.stdio, URL: f.url, Manifest: f.manifest, Mutant: f.mutant}.Targets()
	if err != nil {
		return nil, usageError{err}
	}
	if f.websocket {
		if targets > 0 {
			return nil, usageError{errors.New("--websocket applies to the built-in target only (a WebSocket server of your own: --url ws://… or a manifest with transport: websocket)")}
		}
		cfg.Targets = append(cfg.Targets, suites.ReferenceWSManifest(f.mutant))
	}
	cfg.Targets = suites.ExpandVersions(cfg.Targets, f.spec)
	for _, t := range cfg.Targets {
		if err := checkProgram(t); err != nil {
			return nil, usageError{err}
		}
	}
	return cfg, nil
}

// checkProgram fails early when the target's program cannot be found: a
// run against it would start nothing, and with no roles declared every
// check would SKIP and the run would pass. Names without a slash are looked
// up in PATH as exec does; other relative paths are taken from the
// manifest's directory, where the server is started.
func checkProgram(m *suites.Manifest) error {
	if len(m.Command) == 0 {
		return nil
	}
	prog := m.Command[0]
	if prog == "mcp-conform" && len(m.Command) > 1 && m.Command[1] == "fixture" {
		return nil // served by this executable
	}
	if !strings.Contains(prog, "/") {
		if _, err := exec.LookPath(prog); err != nil {
			return fmt.Errorf("target command %q: %w", prog, err)
		}
		return nil
	}
	path := prog
	if !filepath.IsAbs(path) {
		path = filepath.Join(m.Dir, path)
	}
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return fmt.Errorf("target command %q: %w", prog, err)
	case fi.IsDir() || fi.Mode()&0o111 == 0:
		return fmt.Errorf("target command %q: %s is not an executable file", prog, path)
	}
	return nil
}

// ansiEscape matches the colour sequences of a terminal.
var ansiEscape = regexp.MustCompile("\x1b\\[[0-9;]*m")

func isKnownVersion(v string) bool {
	switch v {
	case "2026-07-28", "2025-11-25", "2025-06-18":
		return true
	}
	return false
}

func useColor(mode string, w io.Writer) bool {
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

func runChecks(cmd *cobra.Command, f runFlags) error {
	cfg, err := configFromFlags(f)
	if err != nil {
		return err
	}
	var baseline *reports.Baseline
	switch {
	case f.baseline != "":
		if baseline, err = reports.LoadBaseline(f.baseline); err != nil {
			return usageError{err}
		}
	case f.strictBaseline:
		return usageError{errors.New("--strict-baseline needs --baseline FILE")}
	}
	opts := suites.RunOptions{LabelFilter: f.labelFilter, Focus: f.focus, ToolVersion: version, Budget: f.budget}
	selected, err := suites.Planned(cfg, opts)
	if err != nil {
		// Ginkgo colours its label filter errors whatever the output.
		return usageError{errors.New(ansiEscape.ReplaceAllString(err.Error(), ""))}
	}
	if selected == 0 {
		return usageError{errors.New("no check matches --label-filter/--focus (see 'mcp-conform list')")}
	}
	if err := shardTargets(cfg); err != nil {
		return err
	}
	if f.jobs < 0 {
		return usageError{errors.New("--jobs: want 0 (one process per version) or more")}
	}
	if !isShard() { // a split run's parent has validated already
		if err := suites.ValidateRoles(cmd.Context(), cfg); err != nil {
			return usageError{err}
		}
	}
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	errColor := useColor(f.color, stderr)
	switch {
	case isShard():
		opts.OnResult = progressWriter(stderr)
	case !f.quiet:
		fmt.Fprintf(stderr, "mcp-conform %s: %d check(s) against %s\n", version, selected, cfg.Name())
		opts.OnResult = func(done, total int, c reports.Check) {
			_ = reports.WriteProgress(stderr, done, total, c, errColor)
		}
	}
	var rep *reports.Report
	if n := shardCount(f, cfg); n > 0 {
		rep, err = runSharded(cmd.Context(), cmd, f, cfg, n, selected, opts.OnResult)
	} else {
		rep, err = suites.Run(cfg, opts)
	}
	if err != nil {
		return err
	}
	if baseline != nil {
		baseline.Apply(rep)
	}
	if err := writeReports(rep, f); err != nil {
		return err
	}
	if err := reports.WriteConsole(stdout, rep, reports.ConsoleOptions{
		Color: useColor(f.color, stdout), Verbose: f.verbose, Strict: f.strict, StrictBaseline: f.strictBaseline,
	}); err != nil {
		return err
	}
	if code := reports.RunExitCode(rep, f.strict, f.strictBaseline); code != 0 {
		return exitError{code}
	}
	return nil
}

// writeReports writes the requested report files.
func writeReports(rep *reports.Report, f runFlags) error {
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
	if err := write(f.jsonOut, reports.WriteJSON); err != nil {
		return err
	}
	if err := write(f.htmlOut, func(w io.Writer, r *reports.Report) error {
		return reports.WriteHTML(w, r, reports.HTMLOptions{SpecBase: f.specBase})
	}); err != nil {
		return err
	}
	if err := write(f.markdownOut, func(w io.Writer, r *reports.Report) error { return writeMarkdown(w, r, f) }); err != nil {
		return err
	}
	return write(f.junitOut, reports.WriteJUnit)
}

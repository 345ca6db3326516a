package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcp-conform/mcp-conform/clientsuite"
	"github.com/mcp-conform/mcp-conform/internal/clientgrade"
	"github.com/mcp-conform/mcp-conform/internal/reliabledriver"
	"github.com/mcp-conform/mcp-conform/reports"
)

type clientFlags struct {
	command, transport, spec   string
	scenarios                  []string
	jsonOut, junitOut, htmlOut string
	specBase, baseline, color  string
	strict, strictBaseline     bool
	verbose, quiet             bool
	jobs                       int
	scale                      float64
	budget                     time.Duration
}

func newClientCmd() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "client --command \"CMD ARGS\"",
		Short: "Grade a real MCP client: run its driver against each scenario and judge what it sends",
		Long: `Grade an MCP client program. For each scenario (mcp-conform list: the CLIENT checks),
transport and protocol version, mcp-conform serves a server behaviour (its reference
server, with a scripted twist where the scenario needs one) behind the fault proxy, runs
the driver command once, and judges what the client sent, from the proxy's transcript.

The driver contract is docs/CLIENT-DRIVERS.md: the scenario is in MCP_CONFORM_SCENARIO and
its parameters in MCP_CONFORM_CONTEXT; on HTTP the server URL is appended to the command
(or replaces {url}); on stdio the client spawns the server command in MCP_CONFORM_SERVER
(or {server}), which is mcp-conform itself serving the scenario.

Exit codes: 0 no FAIL (and no WARN with --strict); 1 at least one FAIL; 2 the harness
could not run (bad usage, ERROR). --baseline works as for run.`,
		Example: `  mcp-conform client --command "mcp-conform reliable-driver"
  mcp-conform client --command "mcp-conform reliable-driver --mutant one-clock" --scenario progress-max-timeout
  mcp-conform client --transport http --spec 2026-07-28 --command "node driver.js"
  mcp-conform client --transport stdio --command "my-client --server {server}" --json client.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runClientChecks(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.command, "command", "", "the client's driver command line (run with /bin/sh -c; see docs/CLIENT-DRIVERS.md)")
	fl.StringVar(&f.transport, "transport", "", "stdio or http (default: both)")
	fl.StringVar(&f.spec, "spec", "all", "protocol version: 2026-07-28, 2025-11-25, 2025-06-18, or all")
	fl.StringArrayVar(&f.scenarios, "scenario", nil, "run only this scenario (repeatable; default: all): "+strings.Join(clientsuite.ScenarioNames(), ", "))
	fl.StringVar(&f.jsonOut, "json", "", "write the JSON report (schema mcp-conform/report/v1) to this file")
	fl.StringVar(&f.junitOut, "junit", "", "write a JUnit XML report to this file")
	fl.StringVar(&f.htmlOut, "html", "", "write a self-contained HTML report (sequence diagrams: the client is the lane under test) to this file")
	fl.StringVar(&f.specBase, "spec-base", reports.DefaultSpecBase, "URL or relative path the HTML report links spec references under")
	fl.StringVar(&f.baseline, "baseline", "", "expected-failures file (as for run): listed failures do not fail the exit code")
	fl.BoolVar(&f.strictBaseline, "strict-baseline", false, "a baseline entry whose check now passes (stale) fails the exit code")
	fl.BoolVar(&f.strict, "strict", false, "WARN (a broken SHOULD) fails the exit code too")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "print the transcripts of checks that did not pass")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress lines")
	fl.StringVar(&f.color, "color", "auto", "colour output: auto, always or never")
	fl.IntVar(&f.jobs, "jobs", 4, "how many scenario runs at once")
	fl.Float64Var(&f.scale, "time-scale", 1, "multiply every timeout, deadline and tolerance of the scenarios (a slow machine or client)")
	fl.DurationVar(&f.budget, "budget", 15*time.Minute, "bound on the whole run")
	return cmd
}

func runClientChecks(cmd *cobra.Command, f clientFlags) error {
	o := clientgrade.Options{Command: f.command, Scenarios: f.scenarios, Jobs: f.jobs, Scale: f.scale, ToolVersion: version}
	switch {
	case strings.TrimSpace(f.command) == "":
		return usageError{errors.New("--command is required: the client's driver (docs/CLIENT-DRIVERS.md)")}
	case f.transport != "" && f.transport != clientsuite.Stdio && f.transport != clientsuite.HTTP:
		return usageError{fmt.Errorf("--transport %q: want stdio or http", f.transport)}
	case f.spec != "all" && !slices.Contains(clientsuite.Versions, f.spec):
		return usageError{fmt.Errorf("--spec %q: known versions are %s, or all", f.spec, strings.Join(clientsuite.Versions, ", "))}
	case f.jobs < 1:
		return usageError{errors.New("--jobs: want 1 or more")}
	case f.scale <= 0:
		return usageError{errors.New("--time-scale: want a positive factor")}
	case f.strictBaseline && f.baseline == "":
		return usageError{errors.New("--strict-baseline needs --baseline FILE")}
	}
	if f.transport != "" {
		o.Transports = []string{f.transport}
	}
	if f.spec != "all" {
		o.Versions = []string{f.spec}
	}
	plan, err := clientgrade.Plan(o)
	if err != nil {
		return usageError{err}
	}
	if len(plan) == 0 {
		return usageError{errors.New("no scenario runs in the selected transports and versions (see 'mcp-conform list')")}
	}
	var baseline *reports.Baseline
	if f.baseline != "" {
		if baseline, err = reports.LoadBaseline(f.baseline); err != nil {
			return usageError{err}
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("locate own executable: %w", err)
	}
	o.Exe = exe
	// The driver may name mcp-conform itself (mcp-conform reliable-driver):
	// this executable's directory goes first in its PATH.
	o.Env = []string{"PATH=" + exeDir(exe) + string(os.PathListSeparator) + os.Getenv("PATH"), "GORACE=atexit_sleep_ms=0"}
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if !f.quiet {
		fmt.Fprintf(stderr, "mcp-conform %s: %d scenario run(s) of client %q\n", version, len(plan), f.command)
		o.OnRun = func(done, total int, r *clientsuite.Run, elapsed time.Duration) {
			fmt.Fprintf(stderr, "[%*d/%d] %-20s %-5s %s  %s\n", len(fmt.Sprint(total)), done, total, r.Scenario.Name, r.Transport, r.Version, clientRunSummary(r, elapsed))
		}
	}
	ctx, cancel := contextWithBudget(cmd, f.budget)
	defer cancel()
	rep, err := clientgrade.Grade(ctx, o)
	if err != nil {
		return err
	}
	if baseline != nil {
		baseline.Apply(rep)
	}
	if err := writeClientReports(rep, f); err != nil {
		return err
	}
	if err := reports.WriteConsole(stdout, rep, reports.ConsoleOptions{
		Color: reports.UseColor(f.color, stdout), Verbose: f.verbose, Strict: f.strict, StrictBaseline: f.strictBaseline,
	}); err != nil {
		return err
	}
	if code := reports.RunExitCode(rep, f.strict, f.strictBaseline); code != 0 {
		return exitError{code}
	}
	return nil
}

// clientRunSummary is a progress line's end: how the client ended.
func clientRunSummary(r *clientsuite.Run, elapsed time.Duration) string {
	if r.HarnessErr != nil {
		return "harness: " + r.HarnessErr.Error()
	}
	var parts []string
	for _, p := range r.Clients {
		switch {
		case p.StartErr != nil:
			parts = append(parts, "could not start")
		case p.Killed:
			parts = append(parts, "killed at deadline")
		default:
			parts = append(parts, fmt.Sprintf("exit %d", p.ExitCode))
		}
	}
	slices.Sort(parts)
	parts = slices.Compact(parts)
	return fmt.Sprintf("%s (%s)", strings.Join(parts, ", "), elapsed.Round(time.Millisecond))
}

func exeDir(exe string) string {
	if i := strings.LastIndexByte(exe, '/'); i > 0 {
		return exe[:i]
	}
	return "."
}

// writeClientReports writes the requested report files.
func writeClientReports(rep *reports.Report, f clientFlags) error {
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
	return write(f.junitOut, reports.WriteJUnit)
}

// newServeScenarioCmd is the hidden server side of a stdio run: the command
// line a client under test is given in MCP_CONFORM_SERVER.
func newServeScenarioCmd() *cobra.Command {
	var o clientgrade.ServeOptions
	cmd := &cobra.Command{
		Use:    clientgrade.ServeCommand,
		Short:  "Serve one client scenario on stdio, behind the fault proxy (started by the client under test)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("locate own executable: %w", err)
			}
			o.Exe, o.In, o.Out, o.Signals = exe, os.Stdin, os.Stdout, clientgrade.NotifySignals()
			if code := clientgrade.ServeScenario(cmd.Context(), o); code != 0 {
				return exitError{code}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Scenario, "scenario", "", "scenario name")
	fl.StringVar(&o.Version, "version", "", "protocol version")
	fl.StringVar(&o.Report, "report", "", "the grader's transcript socket (host:port)")
	fl.StringVar(&o.Token, "token", "", "the run's token")
	fl.Float64Var(&o.Scale, "scale", 1, "time scale")
	return cmd
}

// newReliableDriverCmd is the driver of clients/reliable.
func newReliableDriverCmd() *cobra.Command {
	return &cobra.Command{
		Use:                "reliable-driver [--mutant NAME] [--list] [URL]",
		Short:              "The client-mode driver of mcp-conform's own reliable client (docs/CLIENT-DRIVERS.md)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if code := reliabledriver.Main(cmd.Context(), args, os.Getenv, cmd.OutOrStdout(), cmd.ErrOrStderr()); code != 0 {
				return exitError{code}
			}
			return nil
		},
	}
}

// contextWithBudget bounds a client run by d and by SIGINT/SIGTERM.
func contextWithBudget(cmd *cobra.Command, d time.Duration) (context.Context, context.CancelFunc) {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithTimeout(ctx, d)
	return ctx, func() { cancel(); stop() }
}

package clientgrade

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

	"github.com/mcp-conform/mcp-conform/clientsuite"
	"github.com/mcp-conform/mcp-conform/internal/usageerr"
	"github.com/mcp-conform/mcp-conform/reports"
)

// UsageError is a bad command line of "mcp-conform client" (exit code 2).
type UsageError = usageerr.Error

func usage(err error) error { return &UsageError{Err: err} }

// CLIOptions are the flags of "mcp-conform client".
type CLIOptions struct {
	Command, Transport, Spec  string
	Scenarios                 []string
	JSON, JUnit, HTML         string
	SpecBase, Baseline, Color string
	Strict, StrictBaseline    bool
	Verbose, Quiet            bool
	Jobs                      int
	Scale                     float64
	Budget                    time.Duration
	// ToolVersion is mcp-conform's version, named in the reports.
	ToolVersion string
}

// RunCLI grades the client f.Command as "mcp-conform client" does: it
// checks the options, plans the scenario runs, prints progress on stderr
// (unless Quiet), grades within the budget (and until SIGINT/SIGTERM),
// applies the baseline, writes the report files and the console summary
// on stdout, and returns the exit code. A bad option is a *UsageError.
func RunCLI(ctx context.Context, f CLIOptions, stdout, stderr io.Writer) (int, error) {
	o := Options{Command: f.Command, Scenarios: f.Scenarios, Jobs: f.Jobs, Scale: f.Scale, ToolVersion: f.ToolVersion}
	switch {
	case strings.TrimSpace(f.Command) == "":
		return 0, usage(errors.New("--command is required: the client's driver (docs/CLIENT-DRIVERS.md)"))
	case f.Transport != "" && f.Transport != clientsuite.Stdio && f.Transport != clientsuite.HTTP:
		return 0, usage(fmt.Errorf("--transport %q: want stdio or http", f.Transport))
	case f.Spec != "all" && !slices.Contains(clientsuite.Versions, f.Spec):
		return 0, usage(fmt.Errorf("--spec %q: known versions are %s, or all", f.Spec, strings.Join(clientsuite.Versions, ", ")))
	case f.Jobs < 1:
		return 0, usage(errors.New("--jobs: want 1 or more"))
	case f.Scale <= 0:
		return 0, usage(errors.New("--time-scale: want a positive factor"))
	case f.StrictBaseline && f.Baseline == "":
		return 0, usage(errors.New("--strict-baseline needs --baseline FILE"))
	}
	if f.Transport != "" {
		o.Transports = []string{f.Transport}
	}
	if f.Spec != "all" {
		o.Versions = []string{f.Spec}
	}
	plan, err := Plan(o)
	if err != nil {
		return 0, usage(err)
	}
	if len(plan) == 0 {
		return 0, usage(errors.New("no scenario runs in the selected transports and versions (see 'mcp-conform list')"))
	}
	var baseline *reports.Baseline
	if f.Baseline != "" {
		if baseline, err = reports.LoadBaseline(f.Baseline); err != nil {
			return 0, usage(err)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return 0, fmt.Errorf("locate own executable: %w", err)
	}
	o.Exe = exe
	// The driver may name mcp-conform itself (mcp-conform reliable-driver):
	// this executable's directory goes first in its PATH.
	o.Env = []string{"PATH=" + exeDir(exe) + string(os.PathListSeparator) + os.Getenv("PATH"), "GORACE=atexit_sleep_ms=0"}
	if !f.Quiet {
		fmt.Fprintf(stderr, "mcp-conform %s: %d scenario run(s) of client %q\n", f.ToolVersion, len(plan), f.Command)
		o.OnRun = func(done, total int, r *clientsuite.Run, elapsed time.Duration) {
			fmt.Fprintf(stderr, "[%*d/%d] %-20s %-5s %s  %s\n", len(fmt.Sprint(total)), done, total, r.Scenario.Name, r.Transport, r.Version, clientRunSummary(r, elapsed))
		}
	}
	ctx, cancel := contextWithBudget(ctx, f.Budget)
	defer cancel()
	rep, err := Grade(ctx, o)
	if err != nil {
		return 0, err
	}
	if baseline != nil {
		baseline.Apply(rep)
	}
	if err := writeReports(rep, f); err != nil {
		return 0, err
	}
	if err := reports.WriteConsole(stdout, rep, reports.ConsoleOptions{
		Color: reports.UseColor(f.Color, stdout), Verbose: f.Verbose, Strict: f.Strict, StrictBaseline: f.StrictBaseline,
	}); err != nil {
		return 0, err
	}
	return reports.RunExitCode(rep, f.Strict, f.StrictBaseline), nil
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

// writeReports writes the requested report files, stopping at the first
// that fails.
func writeReports(rep *reports.Report, f CLIOptions) error {
	if err := reports.WriteFile(f.JSON, rep, reports.WriteJSON); err != nil {
		return err
	}
	if err := reports.WriteFile(f.HTML, rep, func(w io.Writer, r *reports.Report) error {
		return reports.WriteHTML(w, r, reports.HTMLOptions{SpecBase: f.SpecBase})
	}); err != nil {
		return err
	}
	return reports.WriteFile(f.JUnit, rep, reports.WriteJUnit)
}

// contextWithBudget bounds a client run by d and by SIGINT/SIGTERM.
func contextWithBudget(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithTimeout(ctx, d)
	return ctx, func() { cancel(); stop() }
}

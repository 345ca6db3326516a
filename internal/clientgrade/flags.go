package clientgrade

import (
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcp-conform/mcp-conform/clientsuite"
	"github.com/mcp-conform/mcp-conform/reports"
)

// Register adds the flags of "mcp-conform client" that fill f to fl.
func (f *CLIOptions) Register(fl *pflag.FlagSet) {
	fl.StringVar(&f.Command, "command", "", "the client's driver command line (run with /bin/sh -c; see docs/CLIENT-DRIVERS.md)")
	fl.StringVar(&f.Transport, "transport", "", "stdio or http (default: both)")
	fl.StringVar(&f.Spec, "spec", "all", "protocol version: 2026-07-28, 2025-11-25, 2025-06-18, or all")
	fl.StringArrayVar(&f.Scenarios, "scenario", nil, "run only this scenario (repeatable; default: all): "+strings.Join(clientsuite.ScenarioNames(), ", "))
	fl.StringVar(&f.JSON, "json", "", "write the JSON report (schema mcp-conform/report/v1) to this file")
	fl.StringVar(&f.JUnit, "junit", "", "write a JUnit XML report to this file")
	fl.StringVar(&f.HTML, "html", "", "write a self-contained HTML report (sequence diagrams: the client is the lane under test) to this file")
	fl.StringVar(&f.SpecBase, "spec-base", reports.DefaultSpecBase, "URL or relative path the HTML report links spec references under")
	fl.StringVar(&f.Baseline, "baseline", "", "expected-failures file (as for run): listed failures do not fail the exit code")
	fl.BoolVar(&f.StrictBaseline, "strict-baseline", false, "a baseline entry whose check now passes (stale) fails the exit code")
	fl.BoolVar(&f.Strict, "strict", false, "WARN (a broken SHOULD) fails the exit code too")
	fl.BoolVarP(&f.Verbose, "verbose", "v", false, "print the transcripts of checks that did not pass")
	fl.BoolVarP(&f.Quiet, "quiet", "q", false, "no progress lines")
	fl.StringVar(&f.Color, "color", "auto", "colour output: auto, always or never")
	fl.IntVar(&f.Jobs, "jobs", 4, "how many scenario runs at once")
	fl.Float64Var(&f.Scale, "time-scale", 1, "multiply every timeout, deadline and tolerance of the scenarios (a slow machine or client)")
	fl.DurationVar(&f.Budget, "budget", 15*time.Minute, "bound on the whole run")
}

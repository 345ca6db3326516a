package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcp-conform/mcp-conform/clientsuite"
	"github.com/mcp-conform/mcp-conform/internal/clientgrade"
	"github.com/mcp-conform/mcp-conform/internal/reliabledriver"
	"github.com/mcp-conform/mcp-conform/reports"
)

func newClientCmd() *cobra.Command {
	f := clientgrade.CLIOptions{ToolVersion: version}
	cmd := &cobra.Command{
		Use:     "client --command \"CMD ARGS\"",
		Short:   "Grade a real MCP client: run its driver against each scenario and judge what it sends",
		Long:    help("client.txt"),
		Example: help("client.example.txt"),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return exit(clientgrade.RunCLI(cmd.Context(), f, cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	fl := cmd.Flags()
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
	return cmd
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
			return exit(clientgrade.ServeScenario(cmd.Context(), o), nil)
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
			return exit(reliabledriver.Main(cmd.Context(), args, os.Getenv, cmd.OutOrStdout(), cmd.ErrOrStderr()), nil)
		},
	}
}

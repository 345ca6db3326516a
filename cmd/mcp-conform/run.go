package main

import (
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcp-conform/mcp-conform/internal/runner"
)

type runFlags struct {
	outputFlags
	runner.CLIOptions
	// auth are the credentials of an HTTP target.
	auth authFlags
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the conformance checks against a target and print the report",
		Long:  help("run.txt"),
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runChecks(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Stdio, "stdio", "", "command line of a stdio MCP server to test (split by the shell's quoting rules, without a shell: quote an argument with spaces; nothing is expanded)")
	fl.StringVar(&f.URL, "url", "", "URL of a running Streamable HTTP MCP server (its endpoint, e.g. http://127.0.0.1:3001/mcp)")
	fl.StringVar(&f.Manifest, "manifest", "", "target manifest (YAML) naming the server and its roles")
	fl.StringVar(&f.Mutant, "mutant", "", "built-in target with this mutant switched on (see 'mcp-conform fixture --list')")
	f.outputFlags.register(cmd)
	fl.StringVar(&f.Spec, "spec", "", "force a protocol version: 2026-07-28, 2025-11-25 or 2025-06-18, or all: each target once per version it accepts (default: every version the server accepts; with --mutant the newest)")
	fl.StringVar(&f.Shard, "shard", "", "run one slice of the checks, INDEX/COUNT (e.g. 2/4): the COUNT slices of one plan together are the whole run (join their --json reports with 'mcp-conform report merge')")
	fl.StringVar(&f.Baseline, "baseline", "", "expected-failures file (YAML list of {id, reason}, optional transport/spec/target): listed failures do not fail the exit code")
	fl.StringVar(&f.LabelFilter, "label-filter", "", "select checks by label, ginkgo syntax (e.g. 'area:cancel && level:must')")
	fl.StringArrayVar(&f.Focus, "focus", nil, "select checks whose id or title matches this regular expression (repeatable)")
	fl.BoolVarP(&f.Quiet, "quiet", "q", false, "no progress lines")
	fl.DurationVar(&f.CallTimeout, "call-timeout", 30*time.Second, "bound on one call of a role tool")
	fl.DurationVar(&f.OpTimeout, "op-timeout", 5*time.Second, "bound on one ordinary exchange (ping, barrier)")
	fl.DurationVar(&f.StartTimeout, "start-timeout", 15*time.Second, "bound on starting the target and negotiating a version")
	fl.DurationVar(&f.Budget, "budget", 15*time.Minute, "bound on the whole run")
	fl.IntVar(&f.Jobs, "jobs", 0, "how many child processes check at once, each a target (a transport in a protocol version) or a slice of one whose server is started per check (0: three per core, 4 to 16; 1: one after another in this process)")
	f.auth.register(fl, "to the target (and its proxy's to it)")
	fl.Uint64Var(&f.Seed, "seed", 0, "seed of every random choice of the run (the fault rules' draws): the same seed reproduces them; printed in every report (default: one is chosen)")
	fl.IntVar(&f.Repeat, "repeat", 1, "run every selected check N times (one after another): a check whose verdict changed between runs is reported FLAKY, with its worst verdict and every run's reason")
	fl.BoolVar(&f.WebSocket, "websocket", false, "built-in target: also check the reference server over WebSocket (JSON-RPC, one message per frame; the CANCEL, PROGRESS and ROBUST checks)")
	return cmd
}

func runChecks(cmd *cobra.Command, f runFlags) error {
	o := f.CLIOptions
	out := f.outputFlags.Output
	o.Strict, o.StrictBaseline, o.Verbose, o.Color = out.Strict, out.StrictBaseline, out.Verbose, out.Color
	o.Auth, o.Credentials, o.ToolVersion = f.auth.Set(), f.auth.credentials, version
	o.ChildArgs = func(seed uint64) []string { return childArgs(cmd, seed) }
	rep, err := runner.RunCLI(cmd.Context(), o, cmd.ErrOrStderr())
	if rep == nil {
		return err
	}
	return f.outputFlags.finish(cmd, rep, err)
}

// childArgs rebuilds the run's command line for a child of a split run:
// every flag the user set, except those the parent keeps for itself (it
// writes the reports, applies the baseline, prints progress and the
// summary, slices the run).
func childArgs(cmd *cobra.Command, seed uint64) []string {
	skip := map[string]bool{"json": true, "junit": true, "html": true, "markdown": true, "spec-base": true, "shard": true,
		"baseline": true, "strict-baseline": true, "quiet": true, "jobs": true, "color": true, "repeat": true, "seed": true}
	// The seed the parent chose (or was given): every child draws alike.
	args := []string{"run", "--seed=" + strconv.FormatUint(seed, 10)}
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		if skip[fl.Name] {
			return
		}
		if sv, ok := fl.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				args = append(args, "--"+fl.Name+"="+v)
			}
			return
		}
		args = append(args, "--"+fl.Name+"="+fl.Value.String())
	})
	return args
}

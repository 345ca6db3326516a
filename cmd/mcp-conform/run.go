package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/internal/runner"
	"github.com/mcp-conform/mcp-conform/reports"
	"github.com/mcp-conform/mcp-conform/suites"
)

type runFlags struct {
	outputFlags
	stdio, url, manifest, mutant string
	spec, labelFilter, shard     string
	focus                        []string
	quiet                        bool
	callTimeout, opTimeout       time.Duration
	startTimeout, budget         time.Duration
	baseline                     string
	// websocket adds the reference server over WebSocket to the built-in
	// targets.
	websocket bool
	// jobs bounds the child processes of a run of several targets (a
	// transport in a version); 1 runs every target in this process.
	jobs int
	// auth are the credentials of an HTTP target.
	auth authFlags
	// seed seeds every random choice of the run (0: chosen); repeat runs
	// each check that many times.
	seed   uint64
	repeat int
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

Versions: with no --spec (and with --spec all), the target is first asked which
protocol versions it accepts (server/discover for 2026-07-28, initialize for the
2025 versions) and checked once in each; the report lists the versions it refused.
--spec VERSION forces one. A --mutant run checks the newest version unless --spec
says otherwise. --shard INDEX/COUNT runs one deterministic slice of the checks
(all of a check's runs in one slice); 'mcp-conform report merge' joins the slices.

Credentials: an HTTP target behind a token gets --header 'Name: value',
--header-env NAME=ENVVAR, the manifest's headers: (${VAR} from the environment)
or an OAuth client-credentials token (--oauth-client-id, --oauth-client-secret-env,
--oauth-token-url or discovery) on every request; their values never appear in a
report. --repeat N runs every check N times and marks FLAKY a check whose verdict
changed; --seed N reproduces every random choice (printed in every report).

Exit codes: 0 no FAIL (and no WARN with --strict); 1 at least one FAIL;
2 the harness could not run (bad usage, target never started, ERROR).
With --baseline FILE, the FAIL and WARN checks listed there do not count;
a listed check that now passes is reported as stale (and fails with
--strict-baseline).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runChecks(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.stdio, "stdio", "", "command line of a stdio MCP server to test (split by the shell's quoting rules, without a shell: quote an argument with spaces; nothing is expanded)")
	fl.StringVar(&f.url, "url", "", "URL of a running Streamable HTTP MCP server (its endpoint, e.g. http://127.0.0.1:3001/mcp)")
	fl.StringVar(&f.manifest, "manifest", "", "target manifest (YAML) naming the server and its roles")
	fl.StringVar(&f.mutant, "mutant", "", "built-in target with this mutant switched on (see 'mcp-conform fixture --list')")
	f.outputFlags.register(cmd)
	fl.StringVar(&f.spec, "spec", "", "force a protocol version: 2026-07-28, 2025-11-25 or 2025-06-18, or all: each target once per version it accepts (default: every version the server accepts; with --mutant the newest)")
	fl.StringVar(&f.shard, "shard", "", "run one slice of the checks, INDEX/COUNT (e.g. 2/4): the COUNT slices of one plan together are the whole run (join their --json reports with 'mcp-conform report merge')")
	fl.StringVar(&f.baseline, "baseline", "", "expected-failures file (YAML list of {id, reason}, optional transport/spec/target): listed failures do not fail the exit code")
	fl.StringVar(&f.labelFilter, "label-filter", "", "select checks by label, ginkgo syntax (e.g. 'area:cancel && level:must')")
	fl.StringArrayVar(&f.focus, "focus", nil, "select checks whose id or title matches this regular expression (repeatable)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress lines")
	fl.DurationVar(&f.callTimeout, "call-timeout", 30*time.Second, "bound on one call of a role tool")
	fl.DurationVar(&f.opTimeout, "op-timeout", 5*time.Second, "bound on one ordinary exchange (ping, barrier)")
	fl.DurationVar(&f.startTimeout, "start-timeout", 15*time.Second, "bound on starting the target and negotiating a version")
	fl.DurationVar(&f.budget, "budget", 15*time.Minute, "bound on the whole run")
	fl.IntVar(&f.jobs, "jobs", 0, "how many targets (a transport in a protocol version) are checked at once, each in its own process (0: three per core, 4 to 16; 1: one after another in this process)")
	f.auth.register(fl, "to the target (and its proxy's to it)")
	fl.Uint64Var(&f.seed, "seed", 0, "seed of every random choice of the run (the fault rules' draws): the same seed reproduces them; printed in every report (default: one is chosen)")
	fl.IntVar(&f.repeat, "repeat", 1, "run every selected check N times (one after another): a check whose verdict changed between runs is reported FLAKY, with its worst verdict and every run's reason")
	fl.BoolVar(&f.websocket, "websocket", false, "built-in target: also check the reference server over WebSocket (JSON-RPC, one message per frame; the CANCEL, PROGRESS and ROBUST checks)")
	return cmd
}

// configFromFlags builds the run configuration (the targets as named, one
// per transport), or a usage error.
func configFromFlags(f runFlags, stderr io.Writer) (*suites.Config, error) {
	if f.spec != "" && f.spec != suites.AllVersions && !clients.IsKnownVersion(f.spec) {
		return nil, usageError{fmt.Errorf("--spec %q: known versions are %s, or all", f.spec, strings.Join(clients.KnownVersions, ", "))}
	}
	ts, err := runner.Targets(runner.Named{Stdio: f.stdio, URL: f.url, Manifest: f.manifest, Mutant: f.mutant, WebSocket: f.websocket})
	if err != nil {
		return nil, usageError{err}
	}
	cfg := &suites.Config{Targets: ts, Spec: f.spec, Mutant: f.mutant, Strict: f.Strict, Verbose: f.Verbose,
		CallTimeout: f.callTimeout, OpTimeout: f.opTimeout, StartTimeout: f.startTimeout, Seed: f.seed}
	if f.auth.Set() {
		for _, t := range ts {
			if t.Transport == "stdio" || (f.url == "" && f.manifest == "") {
				return nil, usageError{errors.New("--header, --header-env and --oauth-… apply to an HTTP (or WebSocket) target: --url, or a manifest with transport http")}
			}
		}
		var log io.Writer
		if !f.quiet {
			log = stderr
		}
		if cfg.Credentials, err = f.auth.credentials(log); err != nil {
			return nil, usageError{err}
		}
	}
	return cfg, nil
}

func runChecks(cmd *cobra.Command, f runFlags) error {
	if f.repeat < 1 {
		return usageError{errors.New("--repeat: want 1 or more")}
	}
	if f.seed > reports.MaxSeed {
		return usageError{fmt.Errorf("--seed: at most %d (a JSON report keeps it exactly)", reports.MaxSeed)}
	}
	if f.seed == 0 && !runner.InChild() {
		f.seed = reports.NewSeed()
	}
	cfg, err := configFromFlags(f, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	var baseline *reports.Baseline
	switch {
	case f.baseline != "":
		if baseline, err = reports.LoadBaseline(f.baseline); err != nil {
			return usageError{err}
		}
	case f.StrictBaseline:
		return usageError{errors.New("--strict-baseline needs --baseline FILE")}
	case f.jobs < 0:
		return usageError{errors.New("--jobs: want 0 (one process per target) or more")}
	}
	o := runner.Options{Config: cfg, Jobs: f.jobs, ChildArgs: childArgs(cmd, f.seed), Stderr: cmd.ErrOrStderr(), Repeat: f.repeat,
		Run: suites.RunOptions{LabelFilter: f.labelFilter, Focus: f.focus, ToolVersion: version, Budget: f.budget}}
	if f.mutant == "" {
		o.Versions = runner.EveryAccepted
	}
	if f.shard != "" {
		if o.Shard, err = runner.ParseShard(f.shard); err != nil {
			return usageError{err}
		}
	}
	stderr := cmd.ErrOrStderr()
	errColor := reports.UseColor(f.Color, stderr)
	if !f.quiet {
		o.Progress = func(done, total int, c reports.Check) { _ = reports.WriteProgress(stderr, done, total, c, errColor) }
	}
	plan, err := runner.New(cmd.Context(), o)
	var ue *runner.UsageError
	if errors.As(err, &ue) {
		return usageError{err}
	} else if err != nil {
		return err
	}
	if !f.quiet && !plan.IsChild() {
		runs := ""
		if f.repeat > 1 {
			runs = fmt.Sprintf(", each %d times", f.repeat)
		}
		fmt.Fprintf(stderr, "mcp-conform %s: %d check(s) against %s%s (seed %d)\n", version, plan.Total(), plan.Name(), runs, f.seed)
	}
	rep, runErr := plan.Run(cmd.Context())
	if rep == nil {
		return runErr
	}
	if baseline != nil {
		baseline.Apply(rep)
	}
	return f.outputFlags.finish(cmd, rep, runErr)
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

package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/internal/auth"
	"github.com/mcp-conform/mcp-conform/protocol"
	"github.com/mcp-conform/mcp-conform/reports"
	"github.com/mcp-conform/mcp-conform/suites"
)

// CLIOptions are the flags of "mcp-conform run".
type CLIOptions struct {
	// Named is the target as the flags name it.
	Named
	Spec, LabelFilter, Shard, Baseline string
	Focus                              []string
	Quiet, Strict, StrictBaseline      bool
	Verbose                            bool
	// Color is --color, for the progress lines on stderr.
	Color                                        string
	CallTimeout, OpTimeout, StartTimeout, Budget time.Duration
	Jobs, Repeat                                 int
	// Seed is --seed; 0 chooses one (in the parent of a split run).
	Seed uint64
	// Auth is set when a credential flag was given; Credentials builds
	// them, its log (nil: quiet) receiving the OAuth client's lines.
	Auth        bool
	Credentials func(log io.Writer) (*auth.Credentials, error)
	// ChildArgs is the run's command line for a child, given the seed.
	ChildArgs func(seed uint64) []string
	// ToolVersion is mcp-conform's version, named in the reports.
	ToolVersion string
}

// RunCLI is "mcp-conform run" up to its report: it checks the options,
// builds the configuration, plans the run (the header line and progress
// on stderr unless Quiet), runs it and applies the baseline. A nil report
// comes with the error that ended the run (a bad option is a
// *UsageError); with a report, the error is the run's (it checked
// nothing), for the caller's Output.Finish.
func RunCLI(ctx context.Context, f CLIOptions, stderr io.Writer) (*reports.Report, error) {
	if f.Repeat < 1 {
		return nil, usage(errors.New("--repeat: want 1 or more"))
	}
	if f.Seed > reports.MaxSeed {
		return nil, usage(fmt.Errorf("--seed: at most %d (a JSON report keeps it exactly)", reports.MaxSeed))
	}
	if f.Seed == 0 && !InChild() {
		f.Seed = reports.NewSeed()
	}
	cfg, err := configFromFlags(f, stderr)
	if err != nil {
		return nil, err
	}
	var baseline *reports.Baseline
	switch {
	case f.Baseline != "":
		if baseline, err = reports.LoadBaseline(f.Baseline); err != nil {
			return nil, usage(err)
		}
	case f.StrictBaseline:
		return nil, usage(errors.New("--strict-baseline needs --baseline FILE"))
	case f.Jobs < 0:
		return nil, usage(errors.New("--jobs: want 0 (one process per target) or more"))
	}
	o := Options{Config: cfg, Jobs: f.Jobs, ChildArgs: f.ChildArgs(f.Seed), Stderr: stderr, Repeat: f.Repeat,
		Run: suites.RunOptions{LabelFilter: f.LabelFilter, Focus: f.Focus, ToolVersion: f.ToolVersion, Budget: f.Budget}}
	if f.Mutant == "" {
		o.Versions = EveryAccepted
	}
	if f.Shard != "" {
		if o.Shard, err = ParseShard(f.Shard); err != nil {
			return nil, usage(err)
		}
	}
	errColor := reports.UseColor(f.Color, stderr)
	if !f.Quiet {
		o.Progress = func(done, total int, c reports.Check) { _ = reports.WriteProgress(stderr, done, total, c, errColor) }
	}
	plan, err := New(ctx, o)
	if err != nil {
		return nil, err
	}
	if !f.Quiet && !plan.IsChild() {
		runs := ""
		if f.Repeat > 1 {
			runs = fmt.Sprintf(", each %d times", f.Repeat)
		}
		fmt.Fprintf(stderr, "mcp-conform %s: %d check(s) against %s%s (seed %d)\n", f.ToolVersion, plan.Total(), plan.Name(), runs, f.Seed)
	}
	rep, runErr := plan.Run(ctx)
	if rep == nil {
		return nil, runErr
	}
	if baseline != nil {
		baseline.Apply(rep)
	}
	return rep, runErr
}

func usage(err error) error { return &UsageError{Err: err} }

// configFromFlags builds the run configuration (the targets as named, one
// per transport), or a usage error.
func configFromFlags(f CLIOptions, stderr io.Writer) (*suites.Config, error) {
	if f.Spec != "" && f.Spec != suites.AllVersions && !clients.IsKnownVersion(f.Spec) {
		return nil, usage(fmt.Errorf("--spec %q: known versions are %s, or all", f.Spec, strings.Join(clients.KnownVersions, ", ")))
	}
	ts, err := Targets(f.Named)
	if err != nil {
		return nil, usage(err)
	}
	cfg := &suites.Config{Targets: ts, Spec: f.Spec, Mutant: f.Mutant, Strict: f.Strict, Verbose: f.Verbose,
		CallTimeout: f.CallTimeout, OpTimeout: f.OpTimeout, StartTimeout: f.StartTimeout, Seed: f.Seed}
	if f.Auth {
		for _, t := range ts {
			if t.Transport == string(protocol.TransportStdio) || (f.URL == "" && f.Manifest == "") {
				return nil, usage(errors.New("--header, --header-env and --oauth-… apply to an HTTP (or WebSocket) target: --url, or a manifest with transport http"))
			}
		}
		var log io.Writer
		if !f.Quiet {
			log = stderr
		}
		if cfg.Credentials, err = f.Credentials(log); err != nil {
			return nil, usage(err)
		}
	}
	return cfg, nil
}

// Package runner plans and runs the check runs of `mcp-conform run`.
//
// A run is planned as targets × versions: each target the command line
// names (the built-in reference is one per transport) once per protocol
// version it is checked in. With no --spec every version the server
// accepts is planned, probed with the real negotiation (suites.AcceptsVersions:
// server/discover for 2026-07-28, initialize for the 2025 versions); a
// refused version is reported as refused, not run. --spec V forces one
// version; a run of a built-in mutant checks the newest accepted version.
//
// A plan of several targets runs one child process per target (the same
// executable, told its part by the MCP_CONFORM_PART environment variable),
// at most Options.Jobs at once; the children report each result on stderr
// as a progress line, which the parent relays, and write a JSON report,
// which the parent merges (Merge, the same code as `mcp-conform report
// merge`). --shard i/n keeps a deterministic slice of the checks (Shard),
// so that CI jobs each run a part and `report merge` joins them.
//
//	flags ─▶ New: validate roles, probe versions, slice ─▶ Plan
//	Plan.Run ─┬─ one target or --jobs 1: suites.Run in this process
//	          └─ several: child per target, or per slice of a target's
//	             checks (pieces.go) ─▶ progress lines ─▶ join, Merge
//	report ◀── finish: target facts, accepted/refused versions
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/usageerr"
	"github.com/mcp-conform/mcp-conform/reports"
	"github.com/mcp-conform/mcp-conform/suites"
)

// VersionMode says which protocol versions a target is checked in when
// --spec does not force one.
type VersionMode int

const (
	// Newest checks each target once, in the newest version the server
	// accepts (the negotiation decides; no probe).
	Newest VersionMode = iota
	// EveryAccepted checks each target once per version it accepts, and
	// reports those it refused.
	EveryAccepted
)

// Options describe one run.
type Options struct {
	// Config holds the targets as the command line names them (one per
	// transport, no version expansion) and the run's settings. Its Spec is
	// "" (Versions decides), a known version (forced) or suites.AllVersions
	// (every version the server accepts).
	Config *suites.Config
	// Versions applies when Config.Spec is "".
	Versions VersionMode
	// Run selects the checks (LabelFilter, Focus) and bounds the run
	// (Budget); its OnResult is replaced by Progress.
	Run suites.RunOptions
	// Progress, when set, is called after each check with the count so
	// far and the number planned.
	Progress func(done, total int, c reports.Check)
	// Jobs bounds the child processes of a plan of several targets: 0 up
	// to DefaultJobs, 1 runs every target in this process.
	Jobs int
	// Shard, when set, keeps one slice of the checks.
	Shard Shard
	// ChildArgs is the run's command line for a child ("run" and every flag
	// the user set but those the parent keeps for itself: report files,
	// baseline, --jobs, --shard, --quiet, --color).
	ChildArgs []string
	// Stderr receives the children's lines that are not progress.
	Stderr io.Writer
	// Repeat, when > 1, runs the whole plan that many times, one run after
	// another (in child processes), and reports each check once with
	// every run's verdict (Repeated): one whose verdict changed is flaky.
	Repeat int
}

// DefaultJobs bounds the child processes of a run when Options.Jobs is 0:
// three per core, at least 4, at most 16. A child mostly waits on its
// server (the reference's whole catalog in every version, six children:
// about 0.7 of a core busy on 2 cores), so more children than cores end
// the run sooner at the same CPU: six at once took 0.84 of the wall time
// of four (three alternated pairs, whole-process CPU within 6 %).
var DefaultJobs = min(16, max(4, 3*runtime.NumCPU()))

// ReferenceJobs bounds the child processes when Options.Jobs is 0 and
// every target is the built-in reference (or a mutant of it): eight per
// core, at most 16. Its checks' time is nearly all waiting on its steps
// (a slow call's 60 ms steps, a session left to expire), little CPU.
var ReferenceJobs = min(16, max(DefaultJobs, 8*runtime.NumCPU()))

// jobs is the run's bound on child processes: Options.Jobs, or its
// default for these targets.
func (p *Plan) jobs() int {
	switch {
	case p.o.Jobs > 0:
		return p.o.Jobs
	case p.o.Config != nil && len(p.o.Config.Targets) > 0 && !slices.ContainsFunc(p.o.Config.Targets, func(t *suites.Manifest) bool { return !isBuiltIn(t) }):
		return ReferenceJobs
	}
	return DefaultJobs
}

// UsageError is a bad command line found while planning (a label filter
// that does not parse, nothing selected, a manifest whose roles the target
// does not serve): exit code 2, nothing run.
type UsageError = usageerr.Error

// NoVersionError says that the server refused every protocol version: the
// run checked nothing. Plan.Run returns it with the report (which lists the
// refusals).
type NoVersionError struct{ Target string }

func (e *NoVersionError) Error() string {
	return fmt.Sprintf("%s refused every protocol version mcp-conform knows: nothing was checked (see the versions in the report)", e.Target)
}

// errInterrupted ends a run interrupted while it was being planned.
var errInterrupted = errors.New("interrupted while starting the targets to plan the run: nothing was checked")

// Plan is a planned run: its targets (one per transport and version), the
// versions probed, and the slice of checks it keeps.
type Plan struct {
	o Options
	// cfg is o.Config with the planned targets.
	cfg   *suites.Config
	parts []part
	// versions are what the probes found.
	versions []reports.TargetVersion
	// filter is the label filter, the shard's included.
	filter string
	// empty marks a shard with no checks in it.
	empty bool
	// total counts the check runs planned.
	total int
	child bool
}

// part is one planned target: the index of the target it comes from in
// Options.Config.Targets and the version it is forced to ("" none).
type part struct {
	base int
	spec string
}

// ansiEscape matches the colour sequences Ginkgo puts in label filter
// errors whatever the output.
var ansiEscape = regexp.MustCompile("\x1b\\[[0-9;]*m")

// New plans a run. In a child process it keeps the one target its parent
// gave it; otherwise it checks that something is selected, validates the
// manifests' roles against the servers, probes the versions each target
// accepts when asked to, and slices the checks for --shard.
func New(ctx context.Context, o Options) (*Plan, error) {
	if o.Config == nil || len(o.Config.Targets) == 0 {
		return nil, errors.New("runner: no target")
	}
	p := &Plan{o: o, filter: o.Run.LabelFilter}
	if err := p.planChild(); err != nil || p.child {
		return p, err
	}
	n, err := suites.Planned(o.Config, o.Run)
	switch {
	case err != nil:
		return nil, &UsageError{Err: errors.New(ansiEscape.ReplaceAllString(err.Error(), ""))}
	case n == 0:
		return nil, &UsageError{Err: errors.New("no check matches --label-filter/--focus (see 'mcp-conform list')")}
	}
	// Ctrl-C while the targets are started to validate and probe them ends
	// the run cleanly: the probes' servers are stopped, nothing is checked.
	sctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	spec := o.Config.Spec
	probing := spec == suites.AllVersions || (spec == "" && o.Versions == EveryAccepted)
	// The roles are validated while the versions are probed: both only
	// start the targets, and the run waits for the longer one.
	validated := make(chan error, 1)
	go func() { validated <- suites.ValidateRoles(sctx, o.Config) }()
	if probing {
		p.parts, p.versions = probe(sctx, o.Config)
	} else {
		for i := range o.Config.Targets {
			p.parts = append(p.parts, part{base: i})
		}
	}
	err = <-validated
	switch {
	case sctx.Err() != nil && ctx.Err() == nil:
		return nil, errInterrupted
	case err != nil:
		return nil, &UsageError{Err: err}
	}
	p.cfg = p.config()
	if o.Shard.Count > 0 && len(p.parts) > 0 {
		if p.filter, p.empty, err = o.Shard.filter(p.cfg, o.Run); err != nil {
			return nil, &UsageError{Err: err}
		}
	}
	if p.total, err = suites.Planned(p.cfg, p.runOptions()); err != nil {
		return nil, &UsageError{Err: err}
	}
	if p.empty || len(p.parts) == 0 {
		p.total = 0
	}
	return p, nil
}

// config is the run's configuration with the planned targets.
func (p *Plan) config() *suites.Config {
	cfg := *p.o.Config
	cfg.Targets = nil
	for _, pt := range p.parts {
		t := *p.o.Config.Targets[pt.base]
		if pt.spec != "" {
			t.Spec = pt.spec
		}
		cfg.Targets = append(cfg.Targets, &t)
	}
	return &cfg
}

func (p *Plan) runOptions() suites.RunOptions {
	ro := p.o.Run
	ro.LabelFilter = p.filter
	return ro
}

// Total is the number of check runs planned.
func (p *Plan) Total() int { return p.total }

// Name names the run's targets.
func (p *Plan) Name() string { return p.o.Config.Name() }

// IsChild reports whether this process runs one part of a parent's plan.
func (p *Plan) IsChild() bool { return p.child }

// Run runs the plan and returns its report. A plan with nothing to run
// (every version refused: NoVersionError; an empty shard) returns a report
// without checks.
func (p *Plan) Run(ctx context.Context) (*reports.Report, error) {
	started := time.Now()
	ro := p.runOptions()
	ro.OnResult = p.o.Progress
	if p.child {
		ro.OnResult = progressWriter(p.o.Stderr)
	}
	var (
		rep *reports.Report
		err error
	)
	switch {
	case len(p.parts) == 0:
		rep = suites.BuildReport(p.o.Config, ro.ToolVersion, started)
	case p.empty:
		rep = suites.BuildReport(p.cfg, ro.ToolVersion, started)
	case !p.child && p.o.Repeat > 1:
		rep, err = p.runRepeated(ctx, ro.OnResult)
		if rep == nil {
			return nil, err
		}
		rep.StartedAt = started.UTC()
		rep.Duration = float64(time.Since(started).Microseconds()) / 1000
	case !p.child && p.o.Jobs != 1 && (len(p.parts) > 1 || p.slicesAlone()):
		rep, err = p.runChildren(ctx, ro.OnResult)
		if err != nil {
			return nil, err
		}
		rep.StartedAt = started.UTC()
		rep.Duration = float64(time.Since(started).Microseconds()) / 1000
	default:
		if rep, err = suites.Run(p.cfg, ro); err != nil {
			return nil, err
		}
		if p.child {
			// A slice of a split target: what its parent needs to
			// judge the target as one process would.
			if err := writeState(); err != nil {
				return nil, err
			}
		}
	}
	p.finish(rep)
	if len(p.parts) == 0 {
		return rep, &NoVersionError{Target: p.Name()}
	}
	return rep, err
}

// finish gives a report of several targets the target facts Merge gives
// (so a run kept in this process and one split into children report the
// same), and the report the versions the probes found accepted and refused.
func (p *Plan) finish(rep *reports.Report) {
	if len(p.cfg.Targets) > 1 {
		var ts []reports.Target
		for _, t := range p.cfg.Targets {
			ts = append(ts, manifestTarget(t, p.cfg.Mutant))
		}
		versions := rep.Target.ProtocolVersion
		rep.Target = combineTargets(ts)
		rep.Target.ProtocolVersion = joinVersions(splitList(versions, ","), checkVersions(rep.Checks))
	}
	rep.Target.Versions = unionVersions(rep.Target.Versions, p.versions)
	rep.Seed, rep.Seeds = p.cfg.Seed, nil
	if p.o.Repeat > 1 {
		rep.Repeat = p.o.Repeat
	}
}

// InChild reports whether this process is a child of a split (or
// repeated) run: its parent chose the seed and writes the reports.
func InChild() bool {
	_, ok := os.LookupEnv(partEnv)
	return ok
}

// manifestTarget is the report target a run of t alone gives.
func manifestTarget(t *suites.Manifest, mutant string) reports.Target {
	rt := reports.Target{Name: t.Name, Transport: t.Transport, URL: t.URL, Mutant: mutant}
	if len(t.Command) > 0 {
		rt.Command = fmt.Sprint(t.Command)
	}
	return rt
}

// ReadReport reads a JSON report file.
func ReadReport(path string) (*reports.Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rep, err := reports.ReadJSON(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rep, nil
}

// splitList splits a joined list, dropping empty items.
func splitList(s, sep string) []string {
	var out []string
	for _, v := range strings.Split(s, sep) {
		if v = strings.TrimSpace(v); v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

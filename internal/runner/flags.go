package runner

import (
	"strconv"
	"time"

	"github.com/spf13/pflag"
)

// Register adds the flags of "mcp-conform run" that fill f to fl (the
// report files, console and credential flags are registered beside them by
// the command: reports.Output, auth.Flags).
func (f *CLIOptions) Register(fl *pflag.FlagSet) {
	fl.StringVar(&f.Stdio, "stdio", "", "command line of a stdio MCP server to test (split by the shell's quoting rules, without a shell: quote an argument with spaces; nothing is expanded)")
	fl.StringVar(&f.URL, "url", "", "URL of a running Streamable HTTP MCP server (its endpoint, e.g. http://127.0.0.1:3001/mcp)")
	fl.StringVar(&f.Manifest, "manifest", "", "target manifest (YAML) naming the server and its roles")
	fl.StringVar(&f.Mutant, "mutant", "", "built-in target with this mutant switched on (see 'mcp-conform fixture --list')")
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
	fl.IntVar(&f.Jobs, "jobs", 0, "how many child processes check at once, each a target (a transport in a protocol version) or a slice of one whose server is started per check (0: three per core, 4 to 16, or eight per core up to 16 when the target is the built-in one, whose checks mostly wait; 1: one after another in this process)")
	fl.Uint64Var(&f.Seed, "seed", 0, "seed of every random choice of the run (the fault rules' draws): the same seed reproduces them; printed in every report (default: one is chosen)")
	fl.IntVar(&f.Repeat, "repeat", 1, "run every selected check N times (one after another): a check whose verdict changed between runs is reported FLAKY, with its worst verdict and every run's reason")
	fl.BoolVar(&f.WebSocket, "websocket", false, "built-in target: also check the reference server over WebSocket (JSON-RPC, one message per frame; the CANCEL, PROGRESS and ROBUST checks)")
}

// parentOnly are the flags of run that the parent of a split run keeps for
// itself: it writes the reports, applies the baseline, prints progress and
// the summary, slices the run and chooses the seed.
var parentOnly = map[string]bool{"json": true, "junit": true, "html": true, "markdown": true, "spec-base": true, "shard": true,
	"baseline": true, "strict-baseline": true, "quiet": true, "jobs": true, "color": true, "repeat": true, "seed": true}

// ChildArgs rebuilds the run's command line for a child of a split run
// from fl, the flags as parsed: every flag the user set except the
// parent's own (parentOnly), and the seed the parent chose (or was given),
// so that every child draws alike.
func ChildArgs(fl *pflag.FlagSet, seed uint64) []string {
	args := []string{"run", "--seed=" + strconv.FormatUint(seed, 10)}
	fl.Visit(func(f *pflag.Flag) {
		if parentOnly[f.Name] {
			return
		}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				args = append(args, "--"+f.Name+"="+v)
			}
			return
		}
		args = append(args, "--"+f.Name+"="+f.Value.String())
	})
	return args
}

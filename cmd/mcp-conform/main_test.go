package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcp-conform/mcp-conform/internal/refbin"
	"github.com/mcp-conform/mcp-conform/internal/runner"
	"github.com/mcp-conform/mcp-conform/reports"
)

// binary is the mcp-conform executable built once for these tests: the
// tests run it as a user would, as a separate process. Under -race it is
// built with the race detector too, so the proxy and the harness run with
// it in every test that uses runCLI.
var binary string

// fastBinary is the same program built without the race detector (binary
// itself when the tests do not run with -race). The mutant matrix runs it:
// its ~80 full runs are about verdicts, spend most of their time waiting on
// the servers, and cost four times the CPU under the race detector; so do
// the real-target runs (TestRealTargets), and the other tests about
// verdicts or a report's format (limitFast: the HTML and JUnit pages, the
// reference's variants, no-progress, the WebSocket mutants). The
// race-built binary still runs the whole catalog against the reference
// (TestReferencePassesEveryCheck, TestReferencePassesOnWebSocket), the
// hostile targets, the shards, baseline, interrupt and proxy tests: the
// harness's own concurrency, under the race detector.
var fastBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcp-conform-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	// Each binary has the slim reference server (cmd/mcp-conform-reference)
	// of the same build beside it, which it starts as the built-in target
	// (a third of the CPU per server start): both are built here from one
	// tree, so the runs take it without comparing builds (refbin.Env
	// "beside"; builds here may carry no VCS information to compare).
	// TestSlimReferenceBeside runs the harness both ways.
	build := func(sub string, race bool) string {
		out := filepath.Join(dir, sub)
		for _, pkg := range []string{".", "../mcp-conform-reference"} {
			args := []string{"build", "-o", out + string(filepath.Separator)}
			if race {
				args = append(args, "-race")
			}
			cmd := exec.Command("go", append(args, pkg)...)
			cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
			if err := cmd.Run(); err != nil {
				fmt.Fprintf(os.Stderr, "build %s (race %v): %v\n", pkg, race, err)
				os.Exit(2)
			}
		}
		return filepath.Join(out, "mcp-conform")
	}
	binary = build("race", raceEnabled)
	fastBinary = binary
	if raceEnabled {
		fastBinary = build("fast", false)
	}
	if err := os.Setenv(refbin.Env, "beside"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	// No goroutine the tests start in this process (proxies, clients,
	// in-process runs) may outlive them; the built binary goes afterwards.
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		_ = os.RemoveAll(dir)
		os.Exit(code)
	}))
}

// result is one run of the binary.
type result struct {
	code           int
	stdout, stderr string
	report         *reports.Report
	elapsed        time.Duration
}

// runCLI runs the binary with args (plus --json into a temp file) and
// bounds it by limit: a run that outlives it fails the test.
func runCLI(t *testing.T, limit time.Duration, args ...string) result {
	t.Helper()
	return runBinary(t, binary, limit, args...)
}

// runBinary runs bin as runCLI runs the race-built binary.
func runBinary(t *testing.T, bin string, limit time.Duration, args ...string) result {
	t.Helper()
	r, err := execCLI(bin, t.TempDir(), limit, args...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// execCLI runs bin with args plus --json into dir, bounded by limit. It is
// safe to call from any goroutine: a run that outlives limit, cannot start
// or writes an unreadable report is an error.
func execCLI(bin, dir string, limit time.Duration, args ...string) (result, error) {
	return execCLIEnv(bin, dir, limit, nil, args...)
}

// execCLIEnv is execCLI with env (NAME=value) added to the environment.
func execCLIEnv(bin, dir string, limit time.Duration, env []string, args ...string) (result, error) {
	jsonPath := filepath.Join(dir, "report.json")
	r, err := runBin(bin, limit, env, append(args, "--json", jsonPath)...)
	if err != nil {
		return r, err
	}
	if f, err := os.Open(jsonPath); err == nil {
		defer f.Close()
		rep, err := reports.ReadJSON(f)
		if err != nil {
			return r, fmt.Errorf("report %s unreadable: %w", jsonPath, err)
		}
		r.report = rep
	}
	return r, nil
}

// runBin runs bin with args (and no --json), env (NAME=value) added to the
// environment, bounded by limit: its exit code, output and wall time. It is
// safe to call from any goroutine: a run that outlives limit or cannot
// start is an error.
func runBin(bin string, limit time.Duration, env []string, args ...string) (result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	args = withTestJobs(args)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(append(os.Environ(), "GORACE=atexit_sleep_ms=0", "NO_COLOR=1"), env...)
	cmd.WaitDelay = 2 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String(), elapsed: time.Since(start)}
	if ctx.Err() != nil {
		return r, fmt.Errorf("mcp-conform %v did not finish within %s\nstdout:\n%s\nstderr:\n%s", args, limit, r.stdout, r.stderr)
	}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		return r, fmt.Errorf("run mcp-conform: %w", err)
	}
	return r, nil
}

// withTestJobs gives a run that does not set --jobs the bound a run of
// any target has by default (runner.DefaultJobs), not the built-in
// target's higher one (runner.ReferenceJobs): the tests start many runs
// at once, race-built ones among them, and each keeps to as many children
// at a time as it did before that default.
func withTestJobs(args []string) []string {
	if len(args) == 0 || args[0] != "run" || slices.ContainsFunc(args, func(a string) bool { return a == "--jobs" || strings.HasPrefix(a, "--jobs=") }) {
		return args
	}
	return append(slices.Clone(args), "--jobs", strconv.Itoa(runner.DefaultJobs))
}

// mustRunBin is runBin failing the test on its error.
func mustRunBin(t *testing.T, bin string, limit time.Duration, env []string, args ...string) result {
	t.Helper()
	r, err := runBin(bin, limit, env, args...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// startFast starts runs of fastBinary, one per argument list, at most
// fastRuns at once, before any of their tests asserts anything: the
// matrix's runs spend most of their time waiting on the servers' steps,
// which go test's -parallel (GOMAXPROCS by default) would serialise. The
// returned function waits for run i and returns its result.
func startFast(t *testing.T, limit time.Duration, argLists [][]string) func(t *testing.T, i int) result {
	t.Helper()
	return startRuns(t, fastRuns, limit, argLists)
}

// startRuns is startFast keeping at most most runs going at once.
func startRuns(t *testing.T, most int, limit time.Duration, argLists [][]string) func(t *testing.T, i int) result {
	t.Helper()
	type outcome struct {
		r   result
		err error
	}
	outs := make([]chan outcome, len(argLists))
	slots := make(chan struct{}, most)
	for i, args := range argLists {
		outs[i] = make(chan outcome, 1)
		dir := t.TempDir()
		go func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			r, err := execCLI(fastBinary, dir, limit, args...)
			outs[i] <- outcome{r, err}
		}()
	}
	// Every run ends within limit; waiting for them all keeps a failed
	// test from leaving runs behind.
	t.Cleanup(func() {
		for _, o := range outs {
			v := <-o
			o <- v
		}
	})
	return func(t *testing.T, i int) result {
		t.Helper()
		o := <-outs[i]
		outs[i] <- o
		if o.err != nil {
			t.Fatal(o.err)
		}
		return o.r
	}
}

// fastRuns is how many runs of fastBinary startFast keeps going at once:
// eight take 1.5 times one run's wall time on 2 cores.
var fastRuns = 3 * max(1, runtime.NumCPU())

// check returns the named check of a report, failing when absent.
func (r result) check(t *testing.T, id string) reports.Check {
	t.Helper()
	if r.report == nil {
		t.Fatalf("no report written\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	for _, c := range r.report.Checks {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("check %s not in the report", id)
	return reports.Check{}
}

// checkOn returns the named check run on a transport.
func (r result) checkOn(t *testing.T, id, transport string) reports.Check {
	t.Helper()
	if r.report == nil {
		t.Fatalf("no report written\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	for _, c := range r.report.Checks {
		if c.ID == id && (transport == "" || c.Transport == transport) {
			return c
		}
	}
	t.Fatalf("check %s on %s not in the report", id, transport)
	return reports.Check{}
}

// parallelism bounds concurrent runs of the race-built binary to the
// machine's cores (each run may itself check two targets at once, one
// process each).
var parallelism = make(chan struct{}, max(1, runtime.NumCPU()))

// limitParallel marks a test that runs the binary parallel and waits for
// its share of the machine.
func limitParallel(t *testing.T) {
	t.Parallel()
	parallelism <- struct{}{}
	t.Cleanup(func() { <-parallelism })
}

// limitFast marks a test that runs the binary built without the race
// detector (fastRun) parallel, in one of the parallelism slots: a test
// about verdicts or what a run writes (a report's pages), not about the
// harness's own concurrency, which the race-built reference runs cover.
func limitFast(t *testing.T) {
	t.Parallel()
	parallelism <- struct{}{}
	t.Cleanup(func() { <-parallelism })
}

// fastRun runs the binary built without the race detector, as runCLI runs
// the race-built one.
func fastRun(t *testing.T, limit time.Duration, args ...string) result {
	t.Helper()
	return runBinary(t, fastBinary, limit, args...)
}

// TestLabelFilterByTransport: a check that runs on both transports, selected
// by transport:http, runs on HTTP only — the stdio half is neither run nor
// reported as an unrun ERROR — and the report names the version it ran in.
func TestLabelFilterByTransport(t *testing.T) {
	limitParallel(t)
	r := runCLI(t, 2*time.Minute, "run", "-q", "--label-filter", "transport:http && area:robust")
	if r.code != 0 {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, c := range r.report.Checks {
		if c.Transport != "http" {
			t.Errorf("%s ran on %s, want http only (%s: %s)", c.ID, c.Transport, c.Status, c.Reason)
		}
	}
	if len(r.report.Checks) == 0 {
		t.Fatal("no check ran")
	}
	if r.report.Target.ProtocolVersion == "" {
		t.Error("target.protocolVersion empty in the report")
	}
}

// badOf is the N of a SCHEMA-VALID FAIL's "N of M server messages" ("" if
// none): how many messages broke the schema, over every check run.
func badOf(reason string) string {
	if m := regexp.MustCompile(`^(\d+) of \d+ server messages`).FindStringSubmatch(reason); m != nil {
		return m[1]
	}
	return ""
}

// TestRunSplitByTarget: a run with several targets checks each (a
// transport in a protocol version) in its own process and merges the
// reports; the merged report has the same check runs, verdicts, target
// facts (versions accepted included) and retry-class table as the run kept
// in one process (--jobs 1), and a FAIL in any part fails the exit code.
func TestRunSplitByTarget(t *testing.T) {
	for _, tc := range []struct {
		name    string
		spec    []string
		runs    int
		version string
	}{
		// CANCEL-STDIO-SUPPRESS in 3 versions, SESSION-REQUIRED in 2, CANCEL-HTTP-CLOSE in 1.
		{"spec-all", []string{"--spec", "all"}, 6, "2026-07-28,2025-11-25,2025-06-18"},
		// With no --spec, every version the reference accepts: all three.
		{"default", nil, 6, "2026-07-28,2025-11-25,2025-06-18"},
		// One forced version: SESSION-REQUIRED is SKIP there.
		{"forced", []string{"--spec", "2026-07-28"}, 3, "2026-07-28"},
		// Each transport's checks sliced over children (a slice of at least
		// 2 check runs): SCHEMA-VALID joined over every slice's messages.
		{"sliced", []string{"--spec", "2025-11-25"}, 9, "2025-11-25"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			limitParallel(t)
			args := append([]string{"run", "-q", "--mutant", "respond-after-cancel", "--focus", "CANCEL-STDIO-SUPPRESS|SESSION-REQUIRED|CANCEL-HTTP-CLOSE"}, tc.spec...)
			var env []string
			switch tc.name {
			case "default":
				args = []string{"run", "-q", "--focus", "CANCEL-STDIO-SUPPRESS|SESSION-REQUIRED|CANCEL-HTTP-CLOSE"}
			case "sliced":
				// schema-invalid-result's initialize result lacks
				// serverInfo.version: every check's first answer breaks
				// the 2025-11-25 schema.
				args = append([]string{"run", "-q", "--mutant", "schema-invalid-result", "--focus", "^(CANCEL-STDIO-SUPPRESS|CANCEL-UNKNOWN-IGNORED|ROBUST-PARSE-ERROR|ROBUST-UNKNOWN-METHOD|SCHEMA-VALID)$"}, tc.spec...)
				env = []string{"MCP_CONFORM_SLICE_RUNS=2"}
			}
			split, err := execCLIEnv(binary, t.TempDir(), 3*time.Minute, env, args...)
			if err != nil {
				t.Fatal(err)
			}
			whole := runCLI(t, 3*time.Minute, append(args, "--jobs", "1")...)
			if tc.name == "sliced" {
				for _, tr := range []string{"stdio", "http"} {
					s, w := split.checkOn(t, "SCHEMA-VALID", tr), whole.checkOn(t, "SCHEMA-VALID", tr)
					if s.Status != reports.Fail || w.Status != reports.Fail {
						t.Errorf("SCHEMA-VALID [%s]: split %s %q, whole %s %q; want FAIL in both", tr, s.Status, s.Reason, w.Status, w.Reason)
					}
					if badOf(s.Reason) != badOf(w.Reason) || badOf(s.Reason) == "" {
						t.Errorf("SCHEMA-VALID [%s] found other violations split (%q) than whole (%q)", tr, s.Reason, w.Reason)
					}
				}
			}
			got, want := checkRuns(t, split), checkRuns(t, whole)
			if !slices.Equal(got, want) {
				t.Errorf("split run differs from the whole run:\nsplit: %q\nwhole: %q", got, want)
			}
			if len(got) != tc.runs {
				t.Errorf("%d check runs, want %d: %q", len(got), tc.runs, got)
			}
			if !reflect.DeepEqual(split.report.Target, whole.report.Target) {
				t.Errorf("target of the split run %+v, of the whole run %+v", split.report.Target, whole.report.Target)
			}
			if !reflect.DeepEqual(split.report.RetryClasses, whole.report.RetryClasses) {
				t.Errorf("retry classes differ:\nsplit: %+v\nwhole: %+v", split.report.RetryClasses, whole.report.RetryClasses)
			}
			if v := split.report.Target.ProtocolVersion; v != tc.version {
				t.Errorf("target.protocolVersion %q, want %q", v, tc.version)
			}
			if tc.name == "sliced" {
				if split.code != 1 || whole.code != 1 {
					t.Errorf("exit codes split %d, whole %d; want 1 (SCHEMA-VALID FAIL)", split.code, whole.code)
				}
				return
			}
			if tc.name == "default" {
				if split.code != 0 {
					t.Errorf("exit %d, want 0 (the reference)", split.code)
				}
				if n := len(split.report.Target.Versions); n != 6 {
					t.Errorf("target.versions %+v, want the 3 versions accepted on each transport", split.report.Target.Versions)
				}
				return
			}
			if split.code != 1 || whole.code != 1 {
				t.Errorf("exit codes split %d, whole %d; want 1 (respond-after-cancel fails CANCEL-STDIO-SUPPRESS)", split.code, whole.code)
			}
			if c := split.checkOn(t, "CANCEL-STDIO-SUPPRESS", "stdio"); c.Status != reports.Fail || len(c.Transcript) == 0 {
				t.Errorf("CANCEL-STDIO-SUPPRESS: %s with %d transcript entries, want FAIL with its transcript", c.Status, len(c.Transcript))
			}
		})
	}
}

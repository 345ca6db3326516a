package main

// Hostile targets and command-line usage. A server that crashes, hangs or
// prints garbage mid-run must yield ERROR or FAIL with a reason and a
// written report, and no run may hang: every run here is bounded by a
// limit well under a minute, which runCLI enforces. The targets are the
// manifests in testdata/ (hostile_server.py and sh one-liners), so each
// case can be replayed by hand:
//
//	mcp-conform run --manifest cmd/mcp-conform/testdata/hostile-crash.yaml

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/clientsuite"
	"github.com/mcp-conform/mcp-conform/fixtures"
	"github.com/mcp-conform/mcp-conform/reports"
	"github.com/mcp-conform/mcp-conform/suites"
)

// testdataFile returns the absolute path of a file in testdata/.
func testdataFile(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// needPython skips a case whose target is hostile_server.py when python3
// is missing (CI has it).
func needPython(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
}

// hostileTimeouts keep hostile runs short: a silent target is given up
// after 3 s, a ping after 2 s and a call of the slow role after 1 s.
var hostileTimeouts = []string{"--start-timeout", "3s", "--op-timeout", "2s", "--call-timeout", "1s"}

// hostileCase is one hostile target and what every check of its run must
// say about it.
type hostileCase struct {
	name string
	// python: the target is hostile_server.py.
	python bool
	args   []string
	// limit bounds the whole run (the test fails if it is exceeded).
	limit time.Duration
	code  int
	// noReport: the run must not start (a usage error, said on stderr).
	noReport bool
	stderr   string
	// checks is the number of checks in the report (0: the whole catalog).
	checks int
	// status is the status of every check that applies to stdio, reason a
	// pattern its reason matches.
	status reports.Status
	reason string
	// evidence, when set, must hold for some transcript entry of each of
	// those checks.
	evidence func(e reports.Entry) bool
	what     string // what the evidence is, for the failure message
}

func stderrLine(text string) func(reports.Entry) bool {
	return func(e reports.Entry) bool { return e.Kind == "stderr" && strings.Contains(e.Text, text) }
}

func processEvent(text string) func(reports.Entry) bool {
	return func(e reports.Entry) bool { return e.Kind == "process" && strings.Contains(e.Text, text) }
}

// serverLine matches a line from the server that is not JSON (recorded as
// text, not as a message).
func serverLine(text string) func(reports.Entry) bool {
	return func(e reports.Entry) bool {
		return e.Kind == "message" && e.Dir == "s2c" && len(e.Raw) == 0 && strings.Contains(e.Text, text)
	}
}

func clientRequest(method string) func(reports.Entry) bool {
	return func(e reports.Entry) bool {
		var m struct{ Method string }
		return e.Kind == "message" && e.Dir == "c2s" && json.Unmarshal(e.Raw, &m) == nil && m.Method == method
	}
}

var hostileCases = []hostileCase{
	{
		name: "missing-program/stdio", args: []string{"--stdio", "/nonexistent/mcp-server --stdio"},
		limit: 10 * time.Second, code: 2, noReport: true, stderr: `target command "/nonexistent/mcp-server"`,
	},
	{
		name: "missing-program/manifest", args: []string{"--manifest", "hostile-missing.yaml"},
		limit: 10 * time.Second, code: 2, noReport: true, stderr: `target command "./no-such-mcp-server"`,
	},
	{
		// It starts (a report is written) but exits before the handshake.
		name: "exits-before-handshake", args: []string{"--manifest", "hostile-exit.yaml"},
		limit: 15 * time.Second, code: 2, status: reports.Error,
		reason: `could not start and negotiate with the target: .*connection ended.*server exit status 3`,
	},
	{
		// It never answers, keeps stdout open and ignores SIGTERM: the start
		// timeout gives up on it and SIGKILL ends it.
		name: "never-answers", args: []string{"--manifest", "hostile-silent.yaml"},
		limit: 20 * time.Second, code: 2, status: reports.Error,
		reason: `could not start and negotiate with the target: .*deadline exceeded`,
	},
	{
		name: "crashes-on-call", python: true, args: []string{"--manifest", "hostile-crash.yaml"},
		limit: 30 * time.Second, code: 1, status: reports.Fail,
		reason:   `(no response for id|did not answer ping|neither progress nor a response).*connection ended.*server exit status 7`,
		evidence: stderrLine("hostile: crashing on tools/call"), what: "the server's last stderr line",
	},
	{
		// CANCEL-STDIO-SUPPRESS is a SHOULD in 2025-11-25: a server that
		// dies is still a FAIL, never a WARN that passes the gate.
		name: "crashes-on-call/should-level-check", python: true,
		args:  []string{"--manifest", "hostile-crash.yaml", "--focus", "CANCEL-STDIO-SUPPRESS"},
		limit: 20 * time.Second, code: 1, checks: 1, status: reports.Fail,
		reason:   `neither progress nor a response before the connection ended.*server exit status 7`,
		evidence: processEvent("exit status 7"), what: "the server's exit",
	},
	{
		// Answers ping, never answers tools/call, sends no progress: every
		// check gives up after --call-timeout, one after another (one target,
		// one version: one process), so its wall time grows with the
		// catalog: 46 s at load 25 with 97 checks, past 50 s beside the
		// other heavy tests with 104. A ceiling on the run, not a check's bound.
		name: "hangs-on-call", python: true, args: []string{"--manifest", "hostile-hang.yaml"},
		limit: 90 * time.Second, code: 1, status: reports.Fail,
		reason:   `(neither progress nor a response within 1s|no response for id .*deadline exceeded)`,
		evidence: clientRequest("tools/call"), what: "the unanswered tools/call",
	},
	{
		// A correct server, but for non-JSON lines between its responses.
		name: "garbage-between-responses", python: true, args: []string{"--manifest", "hostile-garbage.yaml"},
		limit: 30 * time.Second, code: 1, status: reports.Fail,
		reason:   `on stdout that are not JSON-RPC messages, the first: "hostile: this line is not JSON-RPC".*MUST NOT write anything to its stdout`,
		evidence: serverLine("hostile: this line is not JSON-RPC"), what: "the garbage line",
	},
	{
		// A cut-off response followed by garbage instead of the answer.
		name: "garbled-response", python: true,
		args: []string{"--manifest", "hostile-garble.yaml",
			"--focus", "CANCEL-NO-SERVER-CANCEL", "--focus", "PROGRESS-STOP-AFTER-COMPLETE"},
		limit: 30 * time.Second, code: 1, checks: 2, status: reports.Fail,
		reason:   `no response for id .*deadline exceeded; the server wrote 2 line\(s\) on stdout that are not JSON-RPC`,
		evidence: serverLine("hostile: garbled response above"), what: "the garbage line",
	},
	{
		// --budget bounds the run whatever the other timeouts: the check
		// cut short and those never started are ERROR, all in the report.
		name: "budget-ends-a-hung-run", python: true,
		args:  []string{"--manifest", "hostile-hang.yaml", "--call-timeout", "60s", "--budget", "2s"},
		limit: 20 * time.Second, code: 2, status: reports.Error,
		reason: `(interrupted before the check could finish|not run: the run ended before this check started).*--budget`,
	},
}

// TestHostileTargets runs each hostile target and asserts the status and
// reason of every check, the evidence in its transcript, the exit code and
// that the run ended within its limit.
func TestHostileTargets(t *testing.T) {
	for _, tc := range hostileCases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.python {
				needPython(t)
			}
			limitParallel(t)
			args := append([]string{"run", "-q"}, hostileTimeouts...)
			for i, a := range tc.args {
				if strings.HasSuffix(a, ".yaml") && i > 0 && tc.args[i-1] == "--manifest" {
					a = testdataFile(t, a)
				}
				args = append(args, a)
			}
			r := runCLI(t, tc.limit, args...)
			t.Logf("exit %d in %s", r.code, r.elapsed.Round(time.Millisecond))
			if r.code != tc.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, tc.code, r.stdout, r.stderr)
			}
			if tc.noReport {
				if r.report != nil {
					t.Errorf("a report was written for a run that could not start")
				}
				if !strings.Contains(r.stderr, tc.stderr) {
					t.Errorf("stderr %q lacks %q", r.stderr, tc.stderr)
				}
				return
			}
			if r.report == nil {
				t.Fatalf("no report written\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			}
			if tc.checks > 0 && len(r.report.Checks) != tc.checks {
				t.Errorf("%d checks in the report, want %d", len(r.report.Checks), tc.checks)
			}
			if tc.checks == 0 {
				inReport := map[string]bool{}
				for _, c := range r.report.Checks {
					inReport[c.ID] = true
				}
				for _, c := range suites.Catalog() {
					if !inReport[c.ID] {
						t.Errorf("%s is not in the report", c.ID)
					}
				}
			}
			reason := regexp.MustCompile(tc.reason)
			stdioChecks := 0
			for _, c := range r.report.Checks {
				if !onStdio(c.ID) {
					// A check of another transport has nothing to say about a
					// stdio target, unless the run ended before it (budget).
					otherTransport := c.Status == reports.Skip && strings.Contains(c.Reason, "not on the stdio transport")
					if !otherTransport && (c.Status != tc.status || !reason.MatchString(c.Reason)) {
						t.Errorf("%s (not a stdio check): %s %q", c.ID, c.Status, c.Reason)
					}
					continue
				}
				stdioChecks++
				if chk, _ := suites.Lookup(c.ID); c.Status == reports.Skip && strings.HasPrefix(c.Reason, "not in ") &&
					!slices.Contains(chk.VersionsOn("stdio"), c.ProtocolVersion) {
					// A check of another version (these targets speak
					// 2025-11-25 only): not run, and the report says so.
					continue
				}
				if chk, _ := suites.Lookup(c.ID); lacksRole(chk, c) {
					// A check needing a role these manifests do not declare
					// (they declare slow) has nothing to run: SKIP, with why.
					continue
				}
				if chk, _ := suites.Lookup(c.ID); len(chk.Roles) == 0 && c.Status == reports.Pass {
					// These targets break calls of the slow role; a check
					// that needs no role (ROBUST-*) may pass against them.
					continue
				}
				if badInputChecks[c.ID] {
					// Their own clause decides (these targets ignore an
					// invalid request, implement no tools/list...): any
					// verdict but ERROR, with its reason and evidence.
					ownVerdict(t, c, tc.status)
					continue
				}
				if c.Status != tc.status {
					t.Errorf("%s: %s (%s), want %s", c.ID, c.Status, c.Reason, tc.status)
				}
				if !reason.MatchString(c.Reason) {
					t.Errorf("%s: reason %q does not match %q", c.ID, c.Reason, tc.reason)
				}
				if tc.evidence != nil && !hasEntry(c, tc.evidence) {
					t.Errorf("%s: %s is not in its transcript (%d entries)", c.ID, tc.what, len(c.Transcript))
				}
			}
			if stdioChecks == 0 {
				t.Errorf("no stdio check in the report")
			}
			if s := r.report.Summary; s.Pass+s.Fail+s.Warn+s.Skip+s.Error != len(r.report.Checks) {
				t.Errorf("summary %+v does not add up to %d checks", s, len(r.report.Checks))
			}
		})
	}
}

// lacksRole reports whether c was skipped because the manifest declares no
// role it needs, and that role is not the slow role hostile manifests give.
func lacksRole(chk *suites.Check, c reports.Check) bool {
	return c.Status == reports.Skip && strings.HasPrefix(c.Reason, "the target manifest declares no ") &&
		!slices.Contains(chk.Roles, "slow")
}

// onStdio reports whether the check with this id applies to stdio targets.
func onStdio(id string) bool {
	c, ok := suites.Lookup(id)
	return ok && slices.Contains(c.Transports, "stdio")
}

// TestHostileInterrupt: Ctrl-C ends a run stuck on a hung server at once,
// still writes the report and exits 2. The checks that ended before the
// interrupted one keep the verdicts they reached (which checks those are
// depends on the catalog's order, not on the signal: the progress lines on
// stderr say); the one running is ERROR "interrupted" and every later one
// ERROR "not run" (or a SKIP decided without running).
func TestHostileInterrupt(t *testing.T) {
	needPython(t)
	limitParallel(t)
	jsonPath := filepath.Join(t.TempDir(), "report.json")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "run", "--manifest", testdataFile(t, "hostile-hang.yaml"),
		"--call-timeout", "60s", "--json", jsonPath)
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0", "NO_COLOR=1")
	cmd.WaitDelay = 2 * time.Second
	var out, errs bytes.Buffer
	cmd.Stdout = &out
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The run announces its checks once it has probed the versions the
	// server accepts; a second later it is well inside a check waiting on
	// the hung server (its call timeout is a minute).
	planned := make(chan struct{})
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "check(s) against") {
				close(planned)
			}
			errs.WriteString(sc.Text() + "\n")
		}
	}()
	select {
	case <-planned:
	case <-ctx.Done():
		t.Fatal("the run never announced its checks")
	}
	time.Sleep(time.Second)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	signalled := time.Now()
	<-copied
	err = cmd.Wait()
	out.Write(errs.Bytes())
	if ctx.Err() != nil {
		t.Fatalf("the run did not end after SIGINT\n%s", out.String())
	}
	if d := time.Since(signalled); d > 10*time.Second {
		t.Errorf("the run took %s to end after SIGINT", d)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Errorf("exit %v, want 2\n%s", err, out.String())
	}
	f, err := os.Open(jsonPath)
	if err != nil {
		t.Fatalf("no report after SIGINT: %v\n%s", err, out.String())
	}
	defer f.Close()
	rep, err := reports.ReadJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	before := endedBeforeInterrupt(errs.String())
	interrupted := 0
	for _, c := range rep.Checks {
		switch {
		case c.Status == reports.Error && strings.HasPrefix(c.Reason, "interrupted"):
			interrupted++
		case before[c.ID+"/"+c.Transport]:
			// A verdict reached before the interrupted check began.
		case c.Status == reports.Error && strings.HasPrefix(c.Reason, "not run"):
		case !onStdio(c.ID) && c.Status == reports.Skip:
		case lacksRole(mustLookup(t, c.ID), c):
		default:
			t.Errorf("%s: %s %q after SIGINT", c.ID, c.Status, c.Reason)
		}
	}
	if interrupted != 1 {
		t.Errorf("%d checks reported interrupted, want the one that was running", interrupted)
	}
}

// progressLine is one line of a run's progress on stderr:
// "[ 3/81] FAIL   TOOLS-NAMES [stdio] (0ms): reason".
var progressLine = regexp.MustCompile(`^\[\s*\d+/\d+\]\s+(\S+)\s+(\S+) \[(\S+)\]`)

// endedBeforeInterrupt returns the checks (id/transport) whose progress
// lines come before the first check reported interrupted: they ended
// before the check the signal cut began (one process runs its checks one
// after another).
func endedBeforeInterrupt(stderr string) map[string]bool {
	ended := map[string]bool{}
	for _, line := range strings.Split(stderr, "\n") {
		m := progressLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if m[1] == string(reports.Error) && strings.Contains(line, "interrupted") {
			break
		}
		ended[m[2]+"/"+m[3]] = true
	}
	return ended
}

func mustLookup(t *testing.T, id string) *suites.Check {
	t.Helper()
	chk, ok := suites.Lookup(id)
	if !ok {
		t.Fatalf("%s is not in the catalog", id)
	}
	return chk
}

func hasEntry(c reports.Check, pred func(reports.Entry) bool) bool {
	for _, e := range c.Transcript {
		if pred(e) {
			return true
		}
	}
	return false
}

// runPlain runs the binary without the --json that runCLI adds (the other
// subcommands have no such flag) and bounds it by limit.
func runPlain(t *testing.T, limit time.Duration, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0", "NO_COLOR=1")
	cmd.WaitDelay = 2 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String(), elapsed: time.Since(start)}
	if ctx.Err() != nil {
		t.Fatalf("mcp-conform %v did not finish within %s", args, limit)
	}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("run mcp-conform: %v", err)
	}
	return r
}

// TestStdioQuotedArguments: --stdio splits its command line by the shell's
// quoting rules, so a quoted argument with spaces reaches the server as one
// argument (here sh -c 'exec BINARY fixture', which strings.Fields broke).
func TestStdioQuotedArguments(t *testing.T) {
	limitParallel(t)
	line := "sh -c 'exec \"$0\" fixture' " + fastBinary
	r := runCLI(t, 60*time.Second, "run", "-q", "--stdio", line, "--focus", "^LIFECYCLE-PING-EMPTY$", "--spec", "2025-11-25")
	if r.code != 0 || r.report == nil || len(r.report.Checks) != 1 || r.report.Checks[0].Status != "PASS" {
		t.Fatalf("--stdio %q: exit %d\n%s%s", line, r.code, r.stdout, r.stderr)
	}
}

// TestUsageErrors: a bad command line exits 2 at once, says why on stderr,
// starts nothing and writes no report.
func TestUsageErrors(t *testing.T) {
	manifest := testdataFile(t, "hostile-crash.yaml")
	cases := []struct {
		name string
		args []string
		want string // on stderr
	}{
		{"two-targets", []string{"run", "--stdio", "x", "--manifest", manifest}, "at most one of --stdio, --url and --manifest"},
		{"mutant-with-target", []string{"run", "--stdio", "x", "--mutant", "progress-regress"}, "--mutant applies to the built-in target only"},
		{"unknown-mutant", []string{"run", "--mutant", "nope"}, `unknown mutant "nope"`},
		{"unknown-spec", []string{"run", "--spec", "1999-01-01"}, `--spec "1999-01-01"`},
		{"bad-label-filter", []string{"run", "--label-filter", "area:("}, "--label-filter: Syntax Error Parsing Label Filter"},
		{"bad-label-filter-operator", []string{"run", "--label-filter", "area:cancel &&"}, "--label-filter"},
		{"bad-focus-regexp", []string{"run", "--focus", "("}, `--focus "("`},
		{"nothing-selected", []string{"run", "--focus", "NO-SUCH-CHECK"}, "no check matches"},
		{"stdio-unterminated-quote", []string{"run", "--stdio", `node -e "console.log(1)`}, "--stdio: command line"},
		{"stdio-shell-expansion", []string{"run", "--stdio", `server $HOME`}, "parameter expansion ($NAME) would need a shell"},
		{"init-stdio-unterminated-quote", []string{"init", "--stdio", `server 'a b`}, "unterminated quote"},
		{"missing-manifest", []string{"run", "--manifest", filepath.Join(t.TempDir(), "none.yaml")}, "read manifest"},
		{"unknown-flag", []string{"run", "--no-such-flag"}, "unknown flag"},
		{"run-with-argument", []string{"run", "extra"}, "unknown command"},
		{"unknown-command", []string{"nope"}, "unknown command"},
		{"explain-unknown-check", []string{"explain", "NOPE"}, `no check "NOPE"`},
		{"explain-no-argument", []string{"explain"}, "accepts 1 arg"},
		{"fixture-unknown-mutant", []string{"fixture", "--mutant", "nope"}, `unknown mutant "nope"`},
		{"proxy-no-command", []string{"proxy"}, "give a server command"},
		{"proxy-missing-faults", []string{"proxy", "--faults", filepath.Join(t.TempDir(), "none.yaml"), "--", "cat"}, "--faults"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			limitParallel(t)
			jsonPath := filepath.Join(t.TempDir(), "report.json")
			args := tc.args
			if args[0] == "run" {
				args = append(args[:len(args):len(args)], "--json", jsonPath)
			}
			r := runPlain(t, 10*time.Second, args...)
			if r.code != 2 {
				t.Errorf("exit %d, want 2\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("stderr %q lacks %q", r.stderr, tc.want)
			}
			if strings.Contains(r.stderr, "\x1b[") {
				t.Errorf("stderr has terminal escapes: %q", r.stderr)
			}
			if strings.Contains(r.stderr, "panic") || strings.Contains(r.stderr, "goroutine ") {
				t.Errorf("the CLI crashed: %s", r.stderr)
			}
			if _, err := os.Stat(jsonPath); err == nil {
				t.Errorf("a report was written for a bad command line")
			}
			if r.elapsed > 5*time.Second {
				t.Errorf("a usage error took %s", r.elapsed)
			}
		})
	}
}

// TestUsageHelp: --help of the root and of each subcommand exits 0 and
// documents the exit codes.
func TestUsageHelp(t *testing.T) {
	limitParallel(t)
	for _, args := range [][]string{{"--help"}, {"run", "--help"}, {"proxy", "--help"}, {"list", "--help"}, {"explain", "--help"}, {"fixture", "--help"}} {
		r := runPlain(t, 10*time.Second, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "Usage:") {
			t.Errorf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	if r := runPlain(t, 10*time.Second, "run", "--help"); !strings.Contains(r.stdout, "2 the harness could not run") {
		t.Errorf("run --help does not document the exit codes:\n%s", r.stdout)
	}
}

// TestUsageList: list prints every check of the catalog, once.
func TestUsageList(t *testing.T) {
	limitParallel(t)
	r := runPlain(t, 10*time.Second, "list")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	seen := map[string]int{}
	for _, line := range strings.Split(r.stdout, "\n")[1:] {
		if f := strings.Fields(line); len(f) > 0 {
			seen[f[0]]++
		}
	}
	for _, c := range suites.Catalog() {
		if seen[c.ID] != 1 {
			t.Errorf("%s listed %d times", c.ID, seen[c.ID])
		}
		delete(seen, c.ID)
	}
	for _, c := range clientsuite.Catalog() { // the CLIENT checks of `mcp-conform client`
		if seen[c.ID] != 1 {
			t.Errorf("%s listed %d times", c.ID, seen[c.ID])
		}
		delete(seen, c.ID)
	}
	if len(seen) > 0 {
		t.Errorf("list shows rows that are not checks: %v", seen)
	}
}

// TestUsageExplain: explain gives the clause, its spec pages and the mutant
// that breaks it; ids are case-insensitive.
func TestUsageExplain(t *testing.T) {
	limitParallel(t)
	for _, id := range []string{"CANCEL-STDIO-SUPPRESS", "cancel-stdio-suppress"} {
		r := runPlain(t, 10*time.Second, "explain", id)
		if r.code != 0 {
			t.Fatalf("explain %s: exit %d: %s", id, r.code, r.stderr)
		}
		for _, want := range []string{
			"CANCEL-STDIO-SUPPRESS",
			"specification/2026-07-28/basic/transports/stdio.mdx",
			"specification/2025-11-25/basic/utilities/cancellation.mdx",
			"MUST NOT send any further messages",
			"Mutant that breaks it: respond-after-cancel",
			"mcp-conform run --mutant respond-after-cancel --focus CANCEL-STDIO-SUPPRESS",
		} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("explain %s lacks %q:\n%s", id, want, r.stdout)
			}
		}
	}
}

// TestUsageFixtureList: fixture --list names every mutant and what it breaks.
func TestUsageFixtureList(t *testing.T) {
	limitParallel(t)
	r := runPlain(t, 10*time.Second, "fixture", "--list")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, m := range fixtures.Mutants() {
		found := false
		for _, line := range strings.Split(r.stdout, "\n") {
			f := strings.Fields(line)
			found = found || (len(f) >= 2 && f[0] == m.Name && (m.Breaks == "" || f[1] == m.Breaks))
		}
		if !found {
			t.Errorf("mutant %s (breaks %s) not listed:\n%s", m.Name, m.Breaks, r.stdout)
		}
	}
	for _, v := range fixtures.Variants() {
		if !strings.Contains(r.stdout, v.Name+" ") {
			t.Errorf("variant %s not listed:\n%s", v.Name, r.stdout)
		}
	}
}

// junitXML is the part of the JUnit format CI systems read.
type junitXML struct {
	XMLName xml.Name `xml:"testsuites"`
	Tests   int      `xml:"tests,attr"`
	Suites  []struct {
		Name  string `xml:"name,attr"`
		Tests int    `xml:"tests,attr"`
		Cases []struct {
			Name      string    `xml:"name,attr"`
			ClassName string    `xml:"classname,attr"`
			Failure   *struct{} `xml:"failure"`
			Skipped   *struct{} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// TestUsageFocusWritesJUnit: --focus runs only the named check (an
// unanchored part of the id, or the id anchored), and --junit writes
// parseable JUnit XML that agrees with the JSON report.
func TestUsageFocusWritesJUnit(t *testing.T) {
	for _, tc := range []struct {
		name, mutant, focus string
		code                int
		failures            int
	}{
		{name: "pass", focus: "CANCEL-STDIO-SUPPRESS", code: 0},
		{name: "fail", focus: "CANCEL-STDIO-SUPPRESS", mutant: "respond-after-cancel", code: 1, failures: 1},
		{name: "anchored", focus: "^CANCEL-STDIO-SUPPRESS$", code: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			limitParallel(t)
			junit := filepath.Join(t.TempDir(), "junit.xml")
			// One version: one check run, one JUnit test case.
			args := []string{"run", "-q", "--focus", tc.focus, "--spec", "2026-07-28", "--junit", junit}
			if tc.mutant != "" {
				args = append(args, "--mutant", tc.mutant)
			}
			r := runCLI(t, 60*time.Second, args...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", r.code, tc.code, r.stdout, r.stderr)
			}
			if len(r.report.Checks) != 1 || r.report.Checks[0].ID != "CANCEL-STDIO-SUPPRESS" {
				t.Fatalf("--focus ran %d checks: %+v", len(r.report.Checks), r.report.Summary)
			}
			data, err := os.ReadFile(junit)
			if err != nil {
				t.Fatal(err)
			}
			var j junitXML
			if err := xml.Unmarshal(data, &j); err != nil {
				t.Fatalf("JUnit XML does not parse: %v\n%s", err, data)
			}
			if j.Tests != 1 || len(j.Suites) != 1 || len(j.Suites[0].Cases) != 1 {
				t.Fatalf("JUnit: %d tests in %d suites:\n%s", j.Tests, len(j.Suites), data)
			}
			tcase := j.Suites[0].Cases[0]
			if !strings.HasPrefix(tcase.Name, "CANCEL-STDIO-SUPPRESS") {
				t.Errorf("JUnit test case %q", tcase.Name)
			}
			if got := tcase.Failure != nil; got != (tc.failures == 1) {
				t.Errorf("JUnit failure element present: %v, want %v\n%s", got, tc.failures == 1, data)
			}
		})
	}
}

// TestProxyDropsOneResponse drives `mcp-conform proxy` as a client would,
// over its stdin and stdout, in front of the reference server, with a rule
// that drops the response to the ping with id 2: the next ping's answer
// arrives, id 2's never does, the transcript records the drop, and closing
// stdin ends the proxy with exit 0.
func TestProxyDropsOneResponse(t *testing.T) {
	limitParallel(t)
	transcript := filepath.Join(t.TempDir(), "transcript.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "proxy", "--transcript", transcript,
		"--faults", testdataFile(t, "drop-ping-2.yaml"), "--", binary, "fixture")
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	cmd.WaitDelay = 2 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var seen []string
	// next returns the id of the next response, failing after 10 s.
	next := func() string {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("proxy output ended; seen %q\nstderr:\n%s", seen, stderr.String())
			}
			seen = append(seen, l)
			var m struct{ ID json.RawMessage }
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("proxy wrote a line that is not JSON: %q", l)
			}
			return string(m.ID)
		case <-time.After(10 * time.Second):
			t.Fatalf("no response within 10 s; seen %q\nstderr:\n%s", seen, stderr.String())
			return ""
		}
	}
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatalf("write to the proxy: %v", err)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"hostile_test","version":"1"}}}`)
	if id := next(); id != "1" {
		t.Fatalf("first response has id %s, want 1", id)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if id := next(); id != "3" {
		t.Fatalf("after pings 2 and 3 the next response has id %s, want 3 (2 is dropped)", id)
	}
	// A further ping: both it and id 2 were sent before, so by the time its
	// answer is through, id 2's would have been too.
	send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	if id := next(); id != "4" {
		t.Fatalf("response id %s, want 4", id)
	}
	closed := time.Now()
	if err := stdin.Close(); err != nil {
		t.Fatal(err)
	}
	for l := range lines {
		seen = append(seen, l)
	}
	err = cmd.Wait()
	if ctx.Err() != nil {
		t.Fatalf("the proxy did not end after its stdin closed\nstderr:\n%s", stderr.String())
	}
	if err != nil {
		t.Fatalf("proxy: %v\nstderr:\n%s", err, stderr.String())
	}
	if d := time.Since(closed); d > 5*time.Second {
		t.Errorf("the proxy took %s to end after its stdin closed", d)
	}
	for _, l := range seen {
		if strings.Contains(l, `"id":2`) {
			t.Errorf("the dropped response arrived: %s", l)
		}
	}

	// The transcript: every message, the drop of exactly id 2's response,
	// and the server's exit.
	data, err := os.ReadFile(transcript)
	if err != nil {
		t.Fatal(err)
	}
	type entry struct {
		Kind, Dir, Rule, Fault, Text string
		Seq                          int64
		Msg                          json.RawMessage
	}
	var entries []entry
	for _, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var e entry
		if err := json.Unmarshal(l, &e); err != nil {
			t.Fatalf("transcript line is not JSON: %q", l)
		}
		entries = append(entries, e)
	}
	s2c := map[int64]string{} // seq → id of server messages
	var drops []entry
	exited := false
	for _, e := range entries {
		switch {
		case e.Kind == "message" && e.Dir == "s2c":
			var m struct{ ID json.RawMessage }
			_ = json.Unmarshal(e.Msg, &m)
			s2c[e.Seq] = string(m.ID)
		case e.Kind == "fault":
			drops = append(drops, e)
		case e.Kind == "process" && strings.Contains(e.Text, "exited with status 0"):
			exited = true
		}
	}
	if len(drops) != 1 || drops[0].Fault != "drop" || drops[0].Rule != "lose-ping-2" || drops[0].Dir != "s2c" {
		t.Fatalf("transcript faults %+v, want one drop by lose-ping-2\n%s", drops, data)
	}
	if id := s2c[drops[0].Seq]; id != "2" {
		t.Errorf("the drop acted on the server message with id %q, want 2\n%s", id, data)
	}
	for _, id := range []string{"1", "2", "3", "4"} {
		found := false
		for _, got := range s2c {
			found = found || got == id
		}
		if !found {
			t.Errorf("the transcript has no server message with id %s", id)
		}
	}
	if !exited {
		t.Errorf("the transcript does not record the server's clean exit\n%s", data)
	}
}

// badInputChecks need no role and judge how a server handles bad input,
// which the hostile targets do not model: against them these checks keep
// their own verdict.
var badInputChecks = map[string]bool{
	"ROBUST-INVALID-REQUEST": true, "ROBUST-INVALID-PARAMS": true, "ROBUST-UNKNOWN-TOOL": true,
	"ROBUST-OVERSIZE": true, "ROBUST-INVALID-UTF8": true, "ROBUST-STRAY-RESPONSE": true,
	// The tool contract and pagination judge tools/list and tools/call.
	"TOOLS-INPUT-SCHEMA": true, "TOOLS-OUTPUT-SCHEMA": true, "TOOLS-NAMES": true, "TOOLS-LIST-STABLE": true,
	"TOOLS-INPUT-VALIDATED": true, "PAGINATION-INVALID-CURSOR": true, "PAGINATION-WALK": true,
	// An unknown log level, judged on its own clause (no logging: SKIP).
	"LOGGING-INVALID-LEVEL": true,
	// Reply ids of the barrier request, and the tools capability beside
	// tools/list: each judged on its own clause.
	"ROBUST-ID-ECHO": true, "TOOLS-CAPABILITY": true,
	// SCHEMA-VALID judges every message the others' connections carried
	// (garbage lines are not JSON: basic#1).
	"SCHEMA-VALID": true,
}

// ownVerdict accepts any status of c but ERROR (unless the case is one
// where the harness cannot run at all), as long as a SKIP says why and a
// FAIL or WARN carries its transcript.
func ownVerdict(t *testing.T, c reports.Check, caseStatus reports.Status) {
	t.Helper()
	switch {
	case c.Status == reports.Error && caseStatus != reports.Error:
		t.Errorf("%s: ERROR %q: a bad-input check must reach a verdict on a server that starts", c.ID, c.Reason)
	case c.Reason == "":
		t.Errorf("%s: %s without a reason", c.ID, c.Status)
	case (c.Status == reports.Fail || c.Status == reports.Warn) && len(c.Transcript) == 0:
		t.Errorf("%s: %s without a transcript", c.ID, c.Status)
	}
}

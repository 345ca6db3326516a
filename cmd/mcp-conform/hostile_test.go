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
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

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

// startsTimeout is the start timeout of a hostile target that does answer
// initialize (its hostility comes later): 3 s let a python target started
// beside five others at load 20-40 miss its handshake, so the run judged
// the start, not what the case is about. The silent target keeps 3 s.
var startsTimeout = []string{"--start-timeout", "15s"}

// hostileCase is one hostile target and what every check of its run must
// say about it.
type hostileCase struct {
	name string
	// python: the target is hostile_server.py.
	python bool
	// starts: the target answers initialize (startsTimeout).
	starts bool
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
		name: "crashes-on-call", python: true, starts: true, args: []string{"--manifest", "hostile-crash.yaml"},
		limit: 30 * time.Second, code: 1, status: reports.Fail,
		reason:   `(no response for id|did not answer ping|neither progress nor a response).*connection ended.*server exit status 7`,
		evidence: stderrLine("hostile: crashing on tools/call"), what: "the server's last stderr line",
	},
	{
		// CANCEL-STDIO-SUPPRESS is a SHOULD in 2025-11-25: a server that
		// dies is still a FAIL, never a WARN that passes the gate.
		name: "crashes-on-call/should-level-check", python: true, starts: true,
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
		name: "hangs-on-call", python: true, starts: true, args: []string{"--manifest", "hostile-hang.yaml"},
		limit: 90 * time.Second, code: 1, status: reports.Fail,
		reason:   `(neither progress nor a response within 1s|no response for id .*deadline exceeded)`,
		evidence: clientRequest("tools/call"), what: "the unanswered tools/call",
	},
	{
		// A correct server, but for non-JSON lines between its responses.
		name: "garbage-between-responses", python: true, starts: true, args: []string{"--manifest", "hostile-garbage.yaml"},
		limit: 30 * time.Second, code: 1, status: reports.Fail,
		reason:   `on stdout that are not JSON-RPC messages, the first: "hostile: this line is not JSON-RPC".*MUST NOT write anything to its stdout`,
		evidence: serverLine("hostile: this line is not JSON-RPC"), what: "the garbage line",
	},
	{
		// A cut-off response followed by garbage instead of the answer.
		name: "garbled-response", python: true, starts: true,
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
			if tc.starts {
				args = append(args, startsTimeout...)
			}
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
					// A passive check judges other checks' traffic on its
					// own transports only: against a stdio target an HTTP
					// one has nothing to say and no row, as in a split run.
					if c.Passive && !contains(c.Transports, "stdio") {
						continue
					}
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
	if c.Status != reports.Skip || slices.Contains(chk.Roles, "slow") {
		return false
	}
	// No such role, or a role without the optional field the check needs
	// (the task role's failArguments or probe).
	return strings.HasPrefix(c.Reason, "the target manifest declares no ") ||
		strings.HasPrefix(c.Reason, "the task role declares no ")
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
	// --jobs 1: one process runs the checks one after another, which the
	// verdicts below are judged by (a run of one target in one version is
	// otherwise dealt into slices, each cutting its own running check).
	cmd := exec.CommandContext(ctx, binary, "run", "--manifest", testdataFile(t, "hostile-hang.yaml"),
		"--call-timeout", "60s", "--jobs", "1", "--json", jsonPath)
	// The hung server makes mark at the first call it leaves unanswered:
	// from then on a check is waiting on it (its call timeout is a minute).
	mark := filepath.Join(t.TempDir(), "hung")
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0", "NO_COLOR=1", "HOSTILE_HANG_MARK="+mark)
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
	// server accepts; the signal goes once a check waits on the hung server
	// (a message trigger: a fixed second after the announcement was not
	// always inside a check on a loaded machine).
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
	for {
		if _, err := os.Stat(mark); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("no check ever called the hung server")
		case <-time.After(10 * time.Millisecond):
		}
	}
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

// badInputChecks need no role and judge how a server handles bad input,
// which the hostile targets do not model: against them these checks keep
// their own verdict.
var badInputChecks = map[string]bool{
	"ROBUST-INVALID-REQUEST": true, "ROBUST-INVALID-PARAMS": true, "ROBUST-UNKNOWN-TOOL": true,
	"ROBUST-OVERSIZE": true, "ROBUST-INVALID-UTF8": true, "ROBUST-STRAY-RESPONSE": true,
	// The tool contract and pagination judge tools/list and tools/call.
	"TOOLS-INPUT-SCHEMA": true, "TOOLS-OUTPUT-SCHEMA": true, "TOOLS-NAMES": true, "TOOLS-LIST-STABLE": true,
	"TOOLS-INPUT-VALIDATED": true, "PAGINATION-INVALID-CURSOR": true, "PAGINATION-WALK": true,
	"TOOLS-STRUCTURED-TEXT": true, "TOOLS-HEADER-SENSITIVE": true,
	// An unknown log level, judged on its own clause (no logging: SKIP).
	"LOGGING-INVALID-LEVEL": true,
	// Reply ids of the barrier request, and the tools capability beside
	// tools/list: each judged on its own clause.
	"ROBUST-ID-ECHO": true, "TOOLS-CAPABILITY": true,
	// Unknown task ids on a server that declares tasks (the hostile targets
	// declare the reference's capabilities and serve no tasks/*).
	"TASK-UNKNOWN-ID": true,
	// It reads the task role's taskSupport in tools/list, which these
	// targets do not serve (SKIP).
	"TASK-REQUIRED-UNAUGMENTED": true,
	// It calls, as a task, a tool tools/list lists without task support.
	"TASK-UNSUPPORTED-TOOL-AUGMENTED": true,
	// It sends tools/list and tools/call with params.task.
	"TASK-UNDECLARED-NORMAL": true,
	// The capabilities the handshake declares have their methods: these
	// targets declare tools and serve no tools/list (FAIL on its own clause).
	"LIFECYCLE-INITIALIZE-INFO": true,
	// server/discover on a new connection; these targets speak 2025-11-25
	// only and do not say they support 2026-07-28 (SKIP).
	"VERSION-DISCOVER": true,
	// It lists tasks only where tasks.list is declared, which the hostile
	// targets' capabilities (an older copy of the reference's) do not: SKIP.
	"TASK-LIST": true,
	// SCHEMA-VALID judges every message the others' connections carried
	// (garbage lines are not JSON: basic#1).
	"SCHEMA-VALID": true,
	// It reads the capabilities and calls the read-only tools that take {}
	// (embedded resources without the resources capability).
	"TOOLS-EMBEDDED-RESOURCES": true,
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

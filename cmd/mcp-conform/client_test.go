package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/clients/reliable"
	"github.com/mcp-conform/mcp-conform/clientsuite"
	"github.com/mcp-conform/mcp-conform/reports"
)

const clientRunLimit = 2 * time.Minute

// driver is the reliable client's driver command, run by bin.
func driver(bin string, mutant string) string {
	cmd := shellQuoteTest(bin) + " reliable-driver"
	if mutant != "" {
		cmd += " --mutant " + mutant
	}
	return cmd
}

func shellQuoteTest(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestClientReliablePassesEveryCheck grades mcp-conform's own reliable
// client on every scenario, both transports, every version: every CLIENT
// check must PASS wherever it applies, and run wherever it applies.
func TestClientReliablePassesEveryCheck(t *testing.T) {
	limitParallel(t)
	r := runCLI(t, clientRunLimit, "client", "-q", "--command", driver(binary, ""))
	if r.code != 0 {
		t.Errorf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r.report == nil {
		t.Fatalf("no report\n%s", r.stderr)
	}
	got := map[string]bool{}
	for _, c := range r.report.Checks {
		got[c.ID+" "+c.Transport+" "+c.ProtocolVersion] = true
		if c.Status != reports.Pass {
			t.Errorf("%s [%s %s]: %s %s", c.ID, c.Transport, c.ProtocolVersion, c.Status, c.Reason)
		}
	}
	for _, c := range clientsuite.Catalog() {
		for _, v := range clientsuite.Versions {
			for _, tr := range []string{clientsuite.Stdio, clientsuite.HTTP} {
				if _, ok := c.Applies(v, tr); ok && !got[c.ID+" "+tr+" "+v] {
					t.Errorf("%s did not run on %s in %s", c.ID, tr, v)
				}
			}
		}
	}
	if r.report.Target.UnderTest != reports.UnderTestClient {
		t.Errorf("target %+v", r.report.Target)
	}
	t.Logf("%d checks in %s", len(r.report.Checks), r.elapsed.Round(time.Millisecond))
}

// clientMutantCase is what one defect of the reliable client must do to
// the report of its scenario.
type clientMutantCase struct {
	mutant, scenario, transport, spec string
	// want is the status of the check the defect breaks, wherever it ran;
	// evidence lists what its reason says (any one of them, by transport
	// and era).
	want     reports.Status
	evidence []string
	// also lists checks that share the broken clause and fail or warn too.
	also []string
}

var clientMutantCases = []clientMutantCase{
	{mutant: "no-cancel-on-timeout", scenario: "timeout-cancel", want: reports.Warn,
		evidence: []string{"was never cancelled", "closed only as the client process ended", "sent no notifications/cancelled"}},
	{mutant: "wrong-cancel-signal", scenario: "timeout-cancel", transport: "http", want: reports.Fail,
		evidence: []string{"POSTed notifications/cancelled"}, also: []string{"CLIENT-TIMEOUT-CANCEL"}},
	{mutant: "one-clock", scenario: "progress-max-timeout", want: reports.Warn, evidence: []string{"maximum timeout was 2000 ms"}},
	{mutant: "progress-ignored", scenario: "progress-max-timeout", want: reports.Warn, evidence: []string{"was not reset by progress"}},
	{mutant: "heartbeat-resets-idle", scenario: "heartbeat-idle", want: reports.Fail, evidence: []string{"comments on its stream reset the idle clock"}},
	{mutant: "accept-late-response", scenario: "timeout-cancel", want: reports.Warn, evidence: []string{"as the call's outcome"}},
	{mutant: "cancel-wrong-id", scenario: "timeout-cancel", want: reports.Fail, evidence: []string{"which the client never sent"},
		also: []string{"CLIENT-TIMEOUT-CANCEL"}},
	{mutant: "cancel-initialize", scenario: "initialize-timeout", want: reports.Fail, evidence: []string{"the client cancelled initialize"}},
	{mutant: "new-key-on-retry", scenario: "retry-keyed", want: reports.Fail, evidence: []string{"changed the arguments: operation_key"}},
	{mutant: "blind-retry", scenario: "retry-unsafe", want: reports.Fail, evidence: []string{"an unsafe mutation retried blindly"}},
	{mutant: "no-jitter", scenario: "herd", want: reports.Warn, evidence: []string{"wait the same delay (no jitter)"}},
	{mutant: "no-resume", scenario: "sse-resume", want: reports.Warn, evidence: []string{"instead of resuming the stream"},
		also: []string{"CLIENT-RESUME-RETRY-WAIT"}}, // its re-sent call comes before the retry field's wait, too
	{mutant: "ignore-sse-retry", scenario: "sse-resume", want: reports.Fail, evidence: []string{"retry field asked for 500 ms"}},
	{mutant: "reissue-same-id", scenario: "reissue", want: reports.Fail, evidence: []string{"under the lost request's id"},
		also: []string{"CLIENT-ID-UNIQUE"}}, // the lost request never got a response: its id is still taken
	{mutant: "no-reinit-on-404", scenario: "session-404", want: reports.Fail, evidence: []string{"no new initialize after the HTTP 404"}},
	{mutant: "no-protocol-version-header", scenario: "tools-call", transport: "http", want: reports.Fail, evidence: []string{"MCP-Protocol-Version"}},
	{mutant: "no-method-headers", scenario: "tools-call", transport: "http", want: reports.Fail, evidence: []string{"carried Mcp-Method \"\""}},
	{mutant: "shared-progress-token", scenario: "tools-call", want: reports.Fail, evidence: []string{"still active uses"}},
	{mutant: "reuse-request-id", scenario: "tools-call", want: reports.Fail, evidence: []string{"in the same session", "which had no response yet"}},
	{mutant: "request-before-initialize", scenario: "tools-call", want: reports.Warn, evidence: []string{"before the initialize result had reached it"}},
	{mutant: "ignore-ping", scenario: "tools-call", want: reports.Fail, evidence: []string{"never answered the server's ping"}},
	{mutant: "sigterm-first", scenario: "tools-call", transport: "stdio", want: reports.Warn, evidence: []string{"before closing its stdin"}},
}

// TestClientMutantMatrix runs each defect of the reliable client against
// its scenario through the CLI: the check it breaks FAILs (MUST) or WARNs
// (SHOULD) wherever it ran, with the evidence in its reason and a
// transcript; no unrelated check fails; the exit code follows.
func TestClientMutantMatrix(t *testing.T) {
	covered := map[string]bool{}
	for _, tc := range clientMutantCases {
		covered[tc.mutant] = true
	}
	for _, d := range reliable.Defects() {
		if !covered[string(d.Name)] {
			t.Errorf("defect %s has no case in this matrix", d.Name)
		}
	}
	var argLists [][]string
	for _, tc := range clientMutantCases {
		args := []string{"client", "-q", "--command", driver(fastBinary, tc.mutant), "--scenario", tc.scenario}
		if tc.transport != "" {
			args = append(args, "--transport", tc.transport)
		}
		if tc.spec != "" {
			args = append(args, "--spec", tc.spec)
		}
		argLists = append(argLists, args)
	}
	runOf := startClientRuns(t, clientRunLimit, argLists)
	for i, tc := range clientMutantCases {
		t.Run(tc.mutant, func(t *testing.T) {
			r := runOf(t, i)
			if r.report == nil {
				t.Fatalf("no report (exit %d)\n%s", r.code, r.stderr)
			}
			breaks := breaksOfDefect(t, tc.mutant)
			seen := 0
			wantCode := 0
			for _, c := range r.report.Checks {
				if c.Status == reports.Fail {
					wantCode = 1
				}
				switch {
				case c.ID == breaks && c.Status == reports.Skip:
					// outside the versions or transports its defect acts in
				case c.ID == breaks:
					seen++
					if c.Status != tc.want {
						t.Errorf("%s [%s %s]: %s %q, want %s", c.ID, c.Transport, c.ProtocolVersion, c.Status, c.Reason, tc.want)
						continue
					}
					if !slices.ContainsFunc(tc.evidence, func(e string) bool { return strings.Contains(c.Reason, e) }) {
						t.Errorf("%s [%s %s] reason %q shows none of %q", c.ID, c.Transport, c.ProtocolVersion, c.Reason, tc.evidence)
					}
					assertClientTranscript(t, c)
				case slices.Contains(tc.also, c.ID):
				case c.Status != reports.Pass && c.Status != reports.Skip:
					t.Errorf("unrelated check %s [%s %s]: %s %s", c.ID, c.Transport, c.ProtocolVersion, c.Status, c.Reason)
				}
			}
			if seen == 0 {
				t.Errorf("%s never judged the defect (report: %d checks)", breaks, len(r.report.Checks))
			}
			if r.code != wantCode {
				t.Errorf("exit %d, want %d", r.code, wantCode)
			}
		})
	}
}

// startClientRuns starts the runs of fastBinary a few at a time (the
// scenarios time the client to a few hundred milliseconds: the machine
// must not be swamped) and returns the accessor of each result.
func startClientRuns(t *testing.T, limit time.Duration, argLists [][]string) func(t *testing.T, i int) result {
	t.Helper()
	return startRuns(t, clientRuns, limit, argLists)
}

// clientRuns is how many client-mode runs the matrix keeps going at once.
const clientRuns = 3

func breaksOfDefect(t *testing.T, mutant string) string {
	for _, d := range reliable.Defects() {
		if string(d.Name) == mutant {
			return d.Breaks
		}
	}
	t.Fatalf("no defect %s", mutant)
	return ""
}

// assertClientTranscript: a failing CLIENT check carries the run's
// transcript: what the client sent, and the client process's end.
func assertClientTranscript(t *testing.T, c reports.Check) {
	t.Helper()
	fromClient, process := 0, 0
	for _, e := range c.Transcript {
		if e.Kind == "message" && e.Dir == "c2s" {
			fromClient++
		}
		if e.Kind == "process" && strings.HasPrefix(e.Text, "client ") {
			process++
		}
	}
	if fromClient == 0 || process == 0 {
		t.Errorf("%s [%s %s]: transcript of %d entries with %d client messages and %d client process lines", c.ID, c.Transport, c.ProtocolVersion, len(c.Transcript), fromClient, process)
	}
}

// TestClientCatalogCommands: list shows the CLIENT checks, explain one of
// them gives its clause per version and its mutant.
func TestClientCatalogCommands(t *testing.T) {
	limitParallel(t)
	l := runPlain(t, time.Minute, "list")
	for _, c := range clientsuite.Catalog() {
		if !strings.Contains(l.stdout, c.ID) {
			t.Errorf("list lacks %s", c.ID)
		}
	}
	if !strings.Contains(l.stdout, "CANCEL-STDIO-SUPPRESS") {
		t.Error("list lost the server checks")
	}
	e := runPlain(t, time.Minute, "explain", "CLIENT-TIMEOUT-CANCEL")
	for _, want := range []string{"cl-lc#6", "cl-c26#3", "2026-07-28  SHOULD", "timeout-cancel", "--mutant no-cancel-on-timeout", "specification/2025-11-25/basic/lifecycle.mdx"} {
		if !strings.Contains(e.stdout, want) {
			t.Errorf("explain lacks %q:\n%s", want, e.stdout)
		}
	}
	s := runPlain(t, time.Minute, "explain", "CLIENT-HERD-JITTER")
	if !strings.Contains(s.stdout, "seed") || !strings.Contains(s.stdout, "seeds/000_a0534be125a2219a.txt") {
		t.Errorf("a seed clause is not labelled as such:\n%s", s.stdout)
	}
}

// TestClientUsageErrors: bad command lines exit 2 and say why.
func TestClientUsageErrors(t *testing.T) {
	limitParallel(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"client"}, "--command is required"},
		{[]string{"client", "--command", "true", "--scenario", "nope"}, "unknown scenario"},
		{[]string{"client", "--command", "true", "--transport", "ws"}, "want stdio or http"},
		{[]string{"client", "--command", "true", "--spec", "2024-11-05"}, "known versions"},
		{[]string{"client", "--command", "true", "--scenario", "herd", "--transport", "stdio"}, "no scenario runs"},
	} {
		r := runCLI(t, time.Minute, tc.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 with %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}

// TestClientReportsAndBaseline: a defect's run writes JUnit and HTML (the
// client the lane under test); a baseline that lists its failure makes
// the exit 0, and the JUnit testcase is skipped with the baseline's reason.
func TestClientReportsAndBaseline(t *testing.T) {
	limitParallel(t)
	dir := t.TempDir()
	base := filepath.Join(dir, "baseline.yaml")
	if err := os.WriteFile(base, []byte("- id: CLIENT-PING-ANSWERED\n  reason: the client ignores pings, tracked upstream\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	junit, html := filepath.Join(dir, "junit.xml"), filepath.Join(dir, "report.html")
	r := runCLI(t, clientRunLimit, "client", "-q", "--command", driver(binary, "ignore-ping"), "--scenario", "tools-call", "--spec", "2025-11-25",
		"--junit", junit, "--html", html, "--baseline", base)
	if r.code != 0 {
		t.Fatalf("exit %d with the failure in the baseline\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	c := r.checkOn(t, "CLIENT-PING-ANSWERED", "stdio")
	if c.Status != reports.Fail || c.Expected == "" {
		t.Errorf("CLIENT-PING-ANSWERED: %s expected %q", c.Status, c.Expected)
	}
	j, err := os.ReadFile(junit)
	if err != nil || !strings.Contains(string(j), "tracked upstream") || !strings.Contains(string(j), "CLIENT-PING-ANSWERED") {
		t.Errorf("junit: %v\n%s", err, j)
	}
	h, err := os.ReadFile(html)
	if err != nil || !strings.Contains(string(h), "client (under test)") || !strings.Contains(string(h), "server (mcp-conform)") {
		t.Errorf("html: %v (%d bytes) lacks the client lanes", err, len(h))
	}
	r2 := runCLI(t, clientRunLimit, "client", "-q", "--command", driver(binary, "ignore-ping"), "--scenario", "tools-call", "--spec", "2025-11-25", "--transport", "http")
	if r2.code != 1 {
		t.Errorf("without the baseline: exit %d, want 1", r2.code)
	}
}

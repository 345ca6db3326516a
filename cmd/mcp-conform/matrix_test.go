package main

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/fixtures"
	"github.com/mcp-conform/mcp-conform/reports"
	"github.com/mcp-conform/mcp-conform/suites"
)

const runLimit = 120 * time.Second

// wholeRaceLimit bounds the race-built runs of the whole catalog in every
// version (TestReferencePassesEveryCheck): the heaviest single run of the
// package, six race-built children at once (--jobs' default on 2 cores),
// beside the other heavy tests. It passed runLimit once, at 120 s, in an
// idle-machine run of the whole test command. A ceiling on the harness's
// own wall time, not on any check's bound.
const wholeRaceLimit = 240 * time.Second

// TestReferencePassesEveryCheck runs the whole catalog against the reference
// server on both transports in every protocol version (--spec all): every
// check must PASS wherever it applies, and run wherever it applies.
func TestReferencePassesEveryCheck(t *testing.T) {
	limitParallel(t)
	r := runCLI(t, wholeRaceLimit, "run", "-q", "--spec", "all")
	if r.code != 0 {
		// The checks that did not PASS are named below, with their reasons.
		t.Errorf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r.report == nil {
		t.Fatal("no report written")
	}
	got := map[string]bool{}
	for _, c := range r.report.Checks {
		got[c.ID+" "+c.Transport+" "+c.ProtocolVersion] = true
		if c.Status != reports.Pass && !skipsAsDualEra(c) { // the reference is dual-era (TestModernOnlyVariant)
			t.Errorf("%s [%s %s]: %s %s", c.ID, c.Transport, c.ProtocolVersion, c.Status, c.Reason)
		}
	}
	for _, c := range suites.Catalog() {
		for _, tr := range c.Transports {
			if tr == "websocket" {
				continue // behind --websocket: TestReferencePassesOnWebSocket
			}
			for _, v := range c.VersionsOn(tr) {
				if !got[c.ID+" "+tr+" "+v] {
					t.Errorf("%s did not run on %s in %s", c.ID, tr, v)
				}
			}
		}
	}
	// The default checks every version the reference accepts: all three.
	d := runCLI(t, runLimit, "run", "-q", "--focus", "CANCEL-STDIO-SUPPRESS")
	if d.code != 0 || d.report.Target.ProtocolVersion != "2026-07-28,2025-11-25,2025-06-18" || len(d.report.Checks) != 3 {
		t.Errorf("default run: exit %d, version %q, %d check runs (want 3)", d.code, d.report.Target.ProtocolVersion, len(d.report.Checks))
	}
}

// TestTimeoutCaughtByCancelMutants: TIMEOUT-CANCEL-STOPS reuses the cancel
// mutants that break its clause — a server that answers (respond-after-
// cancel), or goes on reporting progress (progress-after-cancel), after the
// reliable client's timeout cancellation on stdio and in 2025 HTTP; one
// that keeps working after the stream close (http-ignore-close) in 2026
// HTTP.
func TestTimeoutCaughtByCancelMutants(t *testing.T) {
	for _, tc := range []struct {
		mutant, spec, transport string
		want                    reports.Status
		evidence                string
	}{
		{"respond-after-cancel", "", "stdio", reports.Fail, "answered request"},
		{"respond-after-cancel", "2025-11-25", "http", reports.Warn, "answered request"},
		{"progress-after-cancel", "", "stdio", reports.Fail, "after the server had read the timeout's cancellation"},
		// Work that went on after the close is a SHOULD (stop as soon as
		// practical): WARN.
		{"http-ignore-close", "", "http", reports.Warn, "kept working after the client's timeout cancellation (stream-close)"},
	} {
		t.Run(tc.mutant+"/spec="+tc.spec, func(t *testing.T) {
			limitParallel(t)
			args := []string{"run", "-q", "--focus", "TIMEOUT-CANCEL-STOPS", "--mutant", tc.mutant}
			if tc.spec != "" {
				args = append(args, "--spec", tc.spec)
			}
			r := runCLI(t, runLimit, args...)
			c := r.checkOn(t, "TIMEOUT-CANCEL-STOPS", tc.transport)
			if c.Status != tc.want || !strings.Contains(c.Reason, tc.evidence) {
				t.Fatalf("TIMEOUT-CANCEL-STOPS [%s]: %s %q, want %s with %q", tc.transport, c.Status, c.Reason, tc.want, tc.evidence)
			}
			assertTranscriptShows(t, c)
		})
	}
}

// TestEveryMutantIsCaught runs the whole catalog against each mutant: the
// check whose clause it breaks must FAIL (MUST) or WARN (SHOULD) with the
// evidence in its reason and transcript, and no unrelated check may fail.
func TestEveryMutantIsCaught(t *testing.T) {
	covered := map[string]bool{}
	for _, tc := range mutantCases {
		covered[tc.mutant] = true
	}
	for _, m := range fixtures.Mutants() {
		if m.Breaks != "" && !covered[m.Name] {
			t.Errorf("mutant %s has no case in this matrix", m.Name)
		}
	}
	cases := mutantCases
	if only := os.Getenv("MCP_CONFORM_MATRIX_ONLY"); only != "" {
		// A comma-separated list of mutants: run only their cases (the
		// runs all start before the subtests, so -run alone saves none).
		cases = nil
		for _, tc := range mutantCases {
			if slices.Contains(strings.Split(only, ","), tc.mutant) {
				cases = append(cases, tc)
			}
		}
	}
	var argLists [][]string
	for _, tc := range cases {
		// --jobs 2: the runs go several at once (startFast), which fills
		// the machine; each keeps to two children at a time, as a run of
		// its two parts did before parts were sliced (each part is still
		// dealt into slices, whose SCHEMA-VALID the parent joins).
		args := []string{"run", "-q", "--mutant", tc.mutant, "--jobs", "2"}
		if tc.spec != "" {
			args = append(args, "--spec", tc.spec)
		}
		// A mutant of one transport serves the other as the reference
		// does (fixtures.Mutant.Transport), which TestReferencePasses-
		// EveryCheck covers: its run checks its own transport only.
		if tr := transportOf(t, tc.mutant); tr != "" {
			args = append(args, "--label-filter", "transport:"+tr)
		}
		if tc.focus != "" {
			args = append(args, "--focus", tc.focus)
		}
		argLists = append(argLists, args)
	}
	// The runs (of the binary built without -race) all start here, a few
	// at a time; each subtest waits for its own and asserts on it.
	runOf := startFast(t, runLimit, argLists)
	for i, tc := range cases {
		t.Run(tc.mutant+"/spec="+tc.spec, func(t *testing.T) {
			r := runOf(t, i)
			breaks := breaksOf(t, tc.mutant)
			c := r.checkOn(t, breaks, transportOf(t, tc.mutant))
			if c.Status == reports.Skip && strings.HasPrefix(c.Reason, "not in ") {
				// The check does not run on that transport in this version:
				// judge it where it runs.
				for _, o := range r.report.Checks {
					if o.ID == breaks && !strings.HasPrefix(o.Reason, "not in ") {
						c = o
						break
					}
				}
			}
			if want := tc.wantFor(c.Transport); c.Status != want {
				t.Fatalf("%s [%s]: %s (%s), want %s", breaks, c.Transport, c.Status, c.Reason, want)
			}
			if !strings.Contains(c.Reason, tc.evidence) {
				t.Errorf("%s reason %q lacks %q", breaks, c.Reason, tc.evidence)
			}
			assertTranscriptShows(t, c)
			for _, other := range r.report.Checks {
				switch {
				case other.ID == breaks && other.Transport == c.Transport:
				case other.ID == breaks && other.Status == reports.Skip && strings.HasPrefix(other.Reason, "not in "):
				case other.ID == breaks && transportOf(t, tc.mutant) == "":
					// A mutant of both transports breaks its check on each.
					if want := tc.wantFor(other.Transport); other.Status != want {
						t.Errorf("%s [%s]: %s (%s), want %s", other.ID, other.Transport, other.Status, other.Reason, want)
					}
				case tc.failsAllOn != "" && other.Transport == tc.failsAllOn && !strings.HasPrefix(other.Reason, "not in "):
					// (a check outside the negotiated version does not run: SKIP)
					if other.Status != reports.Fail {
						t.Errorf("%s [%s]: %s, want FAIL (the broken clause applies to every check there)", other.ID, other.Transport, other.Status)
					}
				case other.Status == reports.Skip && strings.HasPrefix(other.Reason, "not in "):
				case skipsAsDualEra(other):
					// a modern-only clause on the dual-era reference (variant_modernonly_test.go)
				case contains(tc.also, other.ID):
					if other.Status != reports.Fail && other.Status != reports.Warn {
						t.Errorf("%s [%s]: %s, want FAIL or WARN (it shares the broken clause)", other.ID, other.Transport, other.Status)
					}
				case contains(tc.mayAlso, other.ID):
				case contains(tc.skips, other.ID):
					if other.Status != reports.Skip || other.Reason == "" {
						t.Errorf("%s: %s %q, want SKIP with a reason", other.ID, other.Status, other.Reason)
					}
				case other.Status != reports.Pass:
					t.Errorf("unrelated check %s [%s]: %s %s\nserver and process lines of its transcript:\n%s", other.ID, other.Transport, other.Status, other.Reason, processLines(other))
				}
			}
			wantCode := 0
			for _, other := range r.report.Checks {
				if other.Status == reports.Fail {
					wantCode = 1
				}
			}
			if (tc.want == reports.Fail || slices.Contains(slices.Collect(maps.Values(tc.wantOn)), reports.Fail)) && wantCode != 1 {
				t.Errorf("a FAIL without exit 1")
			}
			if r.code != wantCode {
				t.Errorf("exit %d, want %d", r.code, wantCode)
			}
		})
	}
}

// TestStrictMakesWarningsFail shows --strict turning a WARN into exit 1.
func TestStrictMakesWarningsFail(t *testing.T) {
	limitParallel(t)
	r := runCLI(t, runLimit, "run", "-q", "--strict", "--mutant", "total-changes", "--focus", "PROGRESS-TOTAL-CONSTANT")
	if c := r.checkOn(t, "PROGRESS-TOTAL-CONSTANT", "stdio"); c.Status != reports.Warn {
		t.Fatalf("status %s", c.Status)
	}
	if r.code != 1 {
		t.Fatalf("exit %d with --strict and a WARN, want 1", r.code)
	}
}

// TestServerWithoutProgressIsNotFailed: progress is optional.
func TestServerWithoutProgressIsNotFailed(t *testing.T) {
	limitFast(t) // verdicts: the binary without -race, as the mutant matrix
	r := fastRun(t, runLimit, "run", "-q", "--mutant", "no-progress")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stdout)
	}
	for _, c := range r.report.Checks {
		switch {
		case c.Status == reports.Skip && strings.HasPrefix(c.Reason, "not in "):
		case skipsAsDualEra(c):
		case c.Status == reports.Skip:
			if !strings.Contains(c.Reason, "no progress") {
				t.Errorf("%s skipped without saying why: %q", c.ID, c.Reason)
			}
		case c.Status != reports.Pass:
			t.Errorf("%s: %s %s", c.ID, c.Status, c.Reason)
		}
	}
	if c := r.checkOn(t, "CANCEL-STDIO-SUPPRESS", "stdio"); c.Status != reports.Pass {
		t.Errorf("cancellation must still be checked without progress: %s", c.Status)
	}
}

func transportOf(t *testing.T, mutant string) string {
	for _, m := range fixtures.Mutants() {
		if m.Name == mutant {
			return m.Transport
		}
	}
	t.Fatalf("no mutant %s", mutant)
	return ""
}

func breaksOf(t *testing.T, mutant string) string {
	for _, m := range fixtures.Mutants() {
		if m.Name == mutant {
			return m.Breaks
		}
	}
	t.Fatalf("no mutant %s", mutant)
	return ""
}

// assertTranscriptShows checks that a failing check carries the evidence:
// a transcript with the server's messages, including the one the reason
// quotes when it quotes one.
func assertTranscriptShows(t *testing.T, c reports.Check) {
	t.Helper()
	if len(c.Transcript) == 0 {
		t.Fatalf("%s: %s without a transcript", c.ID, c.Status)
	}
	fromServer := 0
	for _, e := range c.Transcript {
		// A message from the server, or the end of a server that died.
		if e.Kind == "message" && e.Dir == "s2c" || e.Kind == "process" && strings.Contains(e.Text, "exited: ") {
			fromServer++
		}
	}
	if fromServer == 0 {
		t.Errorf("%s: transcript has no message from the server", c.ID)
	}
	if i := strings.Index(c.Reason, "{\"jsonrpc\""); i >= 0 {
		quoted := c.Reason[i:]
		if j := strings.Index(quoted, "}; "); j >= 0 {
			quoted = quoted[:j+1]
		}
		// A quote clipped to its first 300 bytes (harness.Clip: "…") is
		// the start of the message it quotes.
		head, _, clipped := strings.Cut(quoted, "…")
		found := false
		for _, e := range c.Transcript {
			var buf bytes.Buffer
			if len(e.Raw) > 0 && json.Compact(&buf, e.Raw) == nil {
				found = found || strings.Contains(quoted, buf.String())
			}
			if clipped && len(head) > 0 && len(e.Raw) > 0 {
				found = found || strings.HasPrefix(string(e.Raw), head) || strings.HasPrefix(buf.String(), head)
			}
		}
		if !found {
			t.Logf("transcript of %s:", c.ID)
			for _, e := range c.Transcript {
				t.Logf("  %s %s %s %s", e.Kind, e.Dir, e.Raw, e.Text)
			}
		}
		if !found {
			t.Errorf("%s: the message quoted in the reason is not in the transcript: %s", c.ID, quoted)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestReferencePassesOnWebSocket: every check that applies to WebSocket

package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/reports"
	"github.com/mcp-conform/mcp-conform/suites"
)

// runs there (run --websocket) in every version and passes.
func TestReferencePassesOnWebSocket(t *testing.T) {
	limitParallel(t)
	r := runCLI(t, runLimit, "run", "-q", "--spec", "all", "--websocket", "--label-filter", "transport:websocket")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	got := map[string]bool{}
	for _, c := range r.report.Checks {
		got[c.ID+" "+c.ProtocolVersion] = true
		if c.Status != reports.Pass || c.Transport != "websocket" {
			t.Errorf("%s [%s %s]: %s %s", c.ID, c.Transport, c.ProtocolVersion, c.Status, c.Reason)
		}
	}
	n := 0
	for _, c := range suites.Catalog() {
		if !contains(c.Transports, "websocket") {
			continue
		}
		n++
		for _, v := range c.VersionsOn("websocket") {
			if !got[c.ID+" "+v] {
				t.Errorf("%s did not run on websocket in %s", c.ID, v)
			}
		}
	}
	if n < 3 {
		t.Errorf("only %d checks apply to websocket", n)
	}
}

// wsMutantCases are stdio mutants shown over WebSocket: the reference
// server's WebSocket session is its stdio session with frames for lines, so
// a bug of the session breaks the same check there (at least one CANCEL,
// one PROGRESS and one ROBUST check). failsAllOn "websocket": a frame that
// is not JSON-RPC fails every check on that transport.
var wsMutantCases = []mutantCase{
	// On WebSocket, a custom transport, the 2026-07-28 cancellation rule is
	// the pattern's SHOULD (the stdio page's MUST NOT binds stdio only).
	{mutant: "respond-after-cancel", want: reports.Warn, evidence: "answered request"},
	{mutant: "crash-on-bad-cancel", want: reports.Fail, evidence: "exit status 3"},
	{mutant: "progress-regress", want: reports.Fail, evidence: "did not increase"},
	{mutant: "progress-after-cancel", want: reports.Warn, evidence: "after the server had read the cancellation"},
	{mutant: "silent-on-parse-error", want: reports.Fail, evidence: "no reply to a line that is not JSON"},
	{mutant: "accept-batch", spec: "2025-06-18", want: reports.Warn, evidence: "processed"},
	{mutant: "stdout-noise", want: reports.Fail, evidence: "frame(s) that are not JSON-RPC messages", failsAllOn: "websocket"},
	// The tool list's changes and their subscriptions (the listChanged role
	// of the WebSocket manifest).
	{mutant: "tools-changed-silent", spec: "2025-11-25", want: reports.Warn, evidence: "but no notifications/tools/list_changed"},
	{mutant: "listen-notification-unmarked", want: reports.Fail, evidence: "carries no _meta"},
	{mutant: "listen-filter-ignored", want: reports.Fail, evidence: "asked for promptsListChanged only, yet got"},
	// A subscription the server ends (the endSubscriptions role of the
	// WebSocket manifest).
	{mutant: "listen-teardown-silent", want: reports.Fail, evidence: "sent no notifications/cancelled referencing it"},
	{mutant: "listen-end-no-result", want: reports.Warn, evidence: "no response to subscriptions/listen"},
}

// TestWebSocketMutantsAreCaught runs the WebSocket checks of the built-in
// target (run --websocket --label-filter transport:websocket) against
// stdio mutants: the broken check FAILs on WebSocket with the evidence in
// its reason and transcript, and every other WebSocket check passes.
func TestWebSocketMutantsAreCaught(t *testing.T) {
	for _, tc := range wsMutantCases {
		t.Run(tc.mutant+"/spec="+tc.spec, func(t *testing.T) {
			// Verdicts: the binary without -race, as the mutant matrix
			// (TestReferencePassesOnWebSocket runs WebSocket race-built).
			limitFast(t)
			args := []string{"run", "-q", "--websocket", "--label-filter", "transport:websocket", "--mutant", tc.mutant}
			if tc.spec != "" {
				args = append(args, "--spec", tc.spec)
			}
			r := fastRun(t, runLimit, args...)
			breaks := breaksOf(t, tc.mutant)
			if tc.failsAllOn != "" {
				breaks = "CANCEL-STDIO-SUPPRESS" // the mutant's own check is stdio only; all others show it
			}
			c := r.checkOn(t, breaks, "websocket")
			if c.Status != tc.want || !strings.Contains(c.Reason, tc.evidence) {
				t.Fatalf("%s [websocket]: %s (%s), want %s with %q", breaks, c.Status, c.Reason, tc.want, tc.evidence)
			}
			assertTranscriptShows(t, c)
			for _, other := range r.report.Checks {
				switch {
				case other.Transport != "websocket":
					t.Errorf("%s ran on %s, want websocket only", other.ID, other.Transport)
				case other.ID == breaks, tc.failsAllOn == "websocket" && other.Status == reports.Fail:
				case other.Status == reports.Skip && strings.HasPrefix(other.Reason, "not in "):
					// a check outside the run's version does not run (as in TestEveryMutantIsCaught)
				case skipsAsDualEra(other):
					// a modern-only clause on the dual-era reference (variant_modernonly_test.go)
				case other.Status != reports.Pass:
					t.Errorf("unrelated check %s [websocket]: %s %s", other.ID, other.Status, other.Reason)
				}
			}
			if want := map[reports.Status]int{reports.Fail: 1, reports.Warn: 0}[tc.want]; r.code != want {
				t.Errorf("exit %d, want %d", r.code, want)
			}
		})
	}
}

// processLines are the stderr, process and note lines of a check's
// transcript: how its servers ended, for a failure the test did not expect.
func processLines(c reports.Check) string {
	var b strings.Builder
	for _, e := range c.Transcript {
		if e.Kind == "stderr" || e.Kind == "process" || e.Kind == "note" {
			fmt.Fprintf(&b, "  %8.1fms %s %s\n", e.AtMs, e.Kind, e.Text)
		}
	}
	return b.String()
}

// TestReferenceVariantsPass runs the whole catalog, in every version,
// against correct variants of the reference in other shapes than ours
// (testdata/variant-*.yaml: a probe that counts every execution whatever
// the key, a ledger that already holds earlier work): a check that relied
// on how the reference does it (a per-key counter, an empty store) FAILs
// here. Every check that applies must run and PASS.
func TestReferenceVariantsPass(t *testing.T) {
	for _, tc := range []struct{ file, transport string }{
		{"variant-stdio.yaml", "stdio"},
		{"variant-http.yaml", "http"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			limitFast(t) // verdicts: the binary without -race
			r := fastRun(t, runLimit, "run", "-q", "--spec", "all", "--manifest", filepath.Join("testdata", tc.file))
			if r.code != 0 {
				t.Errorf("exit %d\n%s", r.code, r.stdout)
			}
			got := map[string]bool{}
			for _, c := range r.report.Checks {
				got[c.ID+" "+c.ProtocolVersion] = true
				if c.Status != reports.Pass && !skipsAsDualEra(c) { // dual-era variants (TestModernOnlyVariant)
					t.Errorf("%s [%s %s]: %s %s", c.ID, c.Transport, c.ProtocolVersion, c.Status, c.Reason)
				}
			}
			for _, c := range suites.Catalog() {
				if !contains(c.Transports, tc.transport) {
					continue
				}
				for _, v := range c.VersionsOn(tc.transport) {
					if !got[c.ID+" "+v] {
						t.Errorf("%s did not run on %s in %s", c.ID, tc.transport, v)
					}
				}
			}
		})
	}
}

// TestProbeAnswerMustDescribeTheTag: a probe whose answer holds none of the
// probe contract's fields (a blind probe: before, its zero state read as "no
// work ran", a PASS that observed nothing) ends the checks that read it as
// an ERROR that says so; a refused probe call likewise.
func TestProbeAnswerMustDescribeTheTag(t *testing.T) {
	limitParallel(t)
	checks := []string{"CANCEL-HTTP-CLOSE", "TIMEOUT-CANCEL-STOPS"}
	r := runCLI(t, runLimit, "run", "-q", "--spec", "2026-07-28", "--manifest", filepath.Join("testdata", "http-probe-unusable.yaml"),
		"--focus", "^("+strings.Join(checks, "|")+")$")
	if r.code != 2 {
		t.Errorf("exit %d, want 2 (ERROR)", r.code)
	}
	for _, id := range checks {
		c := r.check(t, id)
		if c.Status != reports.Error || !strings.Contains(c.Reason, "probe answered nothing usable") {
			t.Errorf("%s: %s %q, want ERROR: probe answered nothing usable", id, c.Status, c.Reason)
		}
	}
}

// TestDisconnectCancelsCaughtWithoutProbe: a 2025 server that takes a
// dropped POST stream for a cancellation (and ends the request with an
// error) is caught by CANCEL-HTTP-DISCONNECT, RECONNECT-RESUME and
// RECONNECT-RESUME-LIVE from the resumed outcome against an uninterrupted
// control call, with no probe declared; the same manifest on the
// reference passes all three (CANCEL-HTTP-DISCONNECT does not SKIP).
func TestDisconnectCancelsCaughtWithoutProbe(t *testing.T) {
	checks := []string{"CANCEL-HTTP-DISCONNECT", "RECONNECT-RESUME", "RECONNECT-RESUME-LIVE"}
	for _, tc := range []struct {
		file string
		want reports.Status
	}{
		{"http-no-probe.yaml", reports.Pass},
		{"http-no-probe-disconnect-cancels.yaml", reports.Warn},
	} {
		t.Run(tc.file, func(t *testing.T) {
			limitParallel(t)
			r := runCLI(t, runLimit, "run", "-q", "--spec", "2025-11-25", "--manifest", filepath.Join("testdata", tc.file),
				"--focus", strings.Join(checks, "|"))
			for _, id := range checks {
				c := r.check(t, id)
				if c.Status != tc.want {
					t.Errorf("%s: %s %q, want %s", id, c.Status, c.Reason, tc.want)
				}
				if tc.want == reports.Warn {
					if !strings.Contains(c.Reason, "ended in an error") || !strings.Contains(c.Reason, "control call succeeded") {
						t.Errorf("%s: reason %q does not compare with the control call", id, c.Reason)
					}
					assertTranscriptShows(t, c)
				}
			}
		})
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
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
		if c.Status != reports.Pass {
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

// mutantCase is what one mutant must do to the report.
type mutantCase struct {
	mutant string
	spec   string
	// want is the status of the check the mutant breaks.
	want reports.Status
	// wantOn overrides want on one transport, where the broken sentence
	// has another level (e.g. stdout rules on stdio).
	wantOn map[string]reports.Status
	// evidence must appear in that check's reason.
	evidence string
	// also lists other checks that share the broken clause and fail too.
	also []string
	// skips lists checks that have nothing to check against this mutant.
	skips []string
	// mayAlso lists checks whose clause the broken one entails only when
	// a race goes one way: they may pass or fail.
	mayAlso []string
	// failsAllOn names a transport on which the mutant breaks a clause
	// every check enforces (stdout noise on stdio): all of them FAIL.
	failsAllOn string
	// focus limits the run to the checks matching it (--focus), for a
	// mutant that slows every other check without changing its verdict.
	focus string
}

var mutantCases = []mutantCase{
	{mutant: "respond-after-cancel", want: reports.Fail, evidence: "answered request", mayAlso: timeoutReuse},
	{mutant: "respond-after-cancel", spec: "2025-11-25", want: reports.Warn, evidence: "answered request", also: []string{"CANCEL-HTTP-NOTIFICATION"}, mayAlso: timeoutReuse},
	{mutant: "respond-after-cancel", spec: "2025-06-18", want: reports.Warn, evidence: "answered request", also: []string{"CANCEL-HTTP-NOTIFICATION"}, mayAlso: timeoutReuse},
	{mutant: "progress-after-complete", want: reports.Fail, evidence: "after the final response"},
	// The late progress on the 2025 standalone GET stream (held open by the
	// check), after the POST stream closed.
	{mutant: "progress-after-complete-get", spec: "2025-11-25", want: reports.Fail, evidence: "(stream GET#"},
	{mutant: "progress-after-complete-get", spec: "2025-06-18", want: reports.Fail, evidence: "(stream GET#"},
	{mutant: "progress-regress", want: reports.Fail, evidence: "did not increase"},
	{mutant: "answer-notifications", want: reports.Fail, evidence: "replied to",
		also: []string{"CANCEL-COMPLETION-WINS", "CANCEL-MALFORMED-IGNORED", "HTTP-NOTIFICATION-202"}},
	{mutant: "crash-on-bad-cancel", want: reports.Fail, evidence: "exit status 3"},
	{mutant: "late-cancel-answered", want: reports.Fail, evidence: "replied to the late cancellation"},
	{mutant: "late-cancel-answered", spec: "2025-06-18", want: reports.Fail, evidence: "replied to the late cancellation"},
	// SCHEMA-VALID sees every message of every check: a result that lacks
	// a required member, a notification with an id.
	{mutant: "schema-invalid-result", want: reports.Fail, evidence: "missing property 'ttlMs'"},
	{mutant: "schema-invalid-result", spec: "2025-11-25", want: reports.Fail, evidence: "missing property 'version'"},
	{mutant: "schema-invalid-result", spec: "2025-06-18", want: reports.Fail, evidence: "missing property 'version'"},
	{mutant: "notification-with-id", want: reports.Fail, evidence: "carries an id"},
	// The copy (with an id) of a call's first progress lands in the segment
	// RECONNECT-RESUME replays when the cut comes after it: a message
	// RECONNECT-RESUME cannot relate to the resumed request (a race).
	{mutant: "notification-with-id", spec: "2025-11-25", want: reports.Fail, evidence: "carries an id", mayAlso: []string{"RECONNECT-RESUME"}},
	{mutant: "ping-not-empty", spec: "2025-11-25", want: reports.Fail, evidence: "not empty"},
	{mutant: "ping-not-empty", spec: "2025-06-18", want: reports.Fail, evidence: "not empty"},
	// 2026-07-28 request headers and the unsupported-version error.
	{mutant: "header-mismatch-accepted", want: reports.Fail, evidence: "want HTTP 400 with HeaderMismatch (-32020)"},
	{mutant: "name-base64-undecoded", want: reports.Fail, evidence: "compared undecoded"},
	{mutant: "version-header-unchecked", want: reports.Fail, evidence: "want HTTP 400 with HeaderMismatch (-32020)"},
	{mutant: "unknown-method-400", want: reports.Fail, evidence: "want HTTP 404"},
	{mutant: "unsupported-version-unlisted", want: reports.Fail, evidence: "no data object listing",
		also: []string{"SCHEMA-VALID"}}, // the schema requires the data too
	// A server that ignores EOF makes every connection's close wait the
	// harness's 2 s grace before SIGTERM: the run is its lifecycle checks.
	{mutant: "meta-capabilities-optional", want: reports.Fail, evidence: "want a JSON-RPC error -32602"},
	{mutant: "notification-200", want: reports.Fail, evidence: "want 202 Accepted"},
	{mutant: "notification-200", spec: "2025-11-25", want: reports.Fail, evidence: "want 202 Accepted"},
	// TASK-PROGRESS-STOPS watches the standalone GET stream: refused, it has
	// no progress to judge.
	{mutant: "get-stream-400", spec: "2025-11-25", want: reports.Fail, evidence: "neither an event stream nor 405",
		skips: []string{"TASK-PROGRESS-STOPS"}},
	{mutant: "get-stream-400", spec: "2025-06-18", want: reports.Fail, evidence: "neither an event stream nor 405"},
	// Ids that do not name their stream leave a Last-Event-ID nothing to
	// resume.
	{mutant: "event-ids-per-stream", spec: "2025-11-25", want: reports.Fail, evidence: "repeated across the session's streams",
		also: []string{"RECONNECT-RESUME-LIVE"}, mayAlso: []string{"RECONNECT-RESUME"}},
	{mutant: "ignore-stdin-eof", want: reports.Warn, evidence: "still running", focus: "LIFECYCLE-"},
	// 2025 version negotiation: an unknown version refused, or offered the oldest.
	{mutant: "unsupported-version-error", spec: "2025-11-25", want: reports.Fail, evidence: "want a result naming another", skips: []string{"LIFECYCLE-VERSION-LATEST"}},
	{mutant: "fallback-oldest", spec: "2025-06-18", want: reports.Warn, evidence: "supports the newer"},
	{mutant: "early-roots-request", spec: "2025-11-25", want: reports.Warn, evidence: "before it received notifications/initialized"},
	{mutant: "server-cancels", want: reports.Fail, evidence: "notifications/cancelled"},
	{mutant: "progress-wrong-token", want: reports.Fail, evidence: "carried token",
		skips: []string{"PROGRESS-INCREASING", "PROGRESS-TOTAL-CONSTANT", "PROGRESS-STOP-AFTER-CANCEL", "CANCEL-HTTP-CLOSE", "RECONNECT-REISSUE"}},
	{mutant: "total-changes", want: reports.Warn, evidence: "total changed"},
	// 2026-07-28 stdio: MUST NOT send further messages; 2025 (stdio and
	// HTTP): receivers SHOULD stop (and MAY ignore the cancellation).
	{mutant: "progress-after-cancel", want: reports.Fail, evidence: "after the server had read the cancellation", mayAlso: timeoutReuse},
	{mutant: "progress-after-cancel", spec: "2025-11-25", want: reports.Warn, evidence: "after the server had read the cancellation", mayAlso: timeoutReuse},
	// Work that went on after the close breaks the SHOULD (stop as soon as
	// practical); nothing was sent after it (the MUST NOT holds).
	{mutant: "http-ignore-close", want: reports.Warn, evidence: "kept working", mayAlso: timeoutReuse},
	{mutant: "no-antibuffer-headers", want: reports.Warn, evidence: "X-Accel-Buffering"},
	{mutant: "no-antibuffer-headers", spec: "2025-11-25", want: reports.Warn, evidence: "X-Accel-Buffering"},
	{mutant: "no-heartbeat", want: reports.Warn, evidence: "no SSE comment keep-alive"},
	{mutant: "session-accept-any", spec: "2025-11-25", want: reports.Warn, evidence: "without Mcp-Session-Id"},
	// A never-issued id is not in the 404 MUST (mcp-conform's reading:
	// WARN); the terminated sessions of SESSION-DELETE and -EXPIRED-404 are.
	{mutant: "session-400", spec: "2025-11-25", want: reports.Warn, evidence: "want 404", also: []string{"SESSION-DELETE", "SESSION-EXPIRED-404"}},
	{mutant: "session-400", spec: "2025-06-18", want: reports.Warn, evidence: "want 404", also: []string{"SESSION-DELETE", "SESSION-EXPIRED-404"}},
	{mutant: "session-no-expiry", spec: "2025-11-25", want: reports.Fail, evidence: "idle"},
	{mutant: "resume-cross-stream", spec: "2025-11-25", want: reports.Fail, evidence: "another stream"},
	{mutant: "resume-drop-live", spec: "2025-11-25", want: reports.Warn, evidence: "without the first call's response"},
	{mutant: "no-origin-check", want: reports.Fail, evidence: "want 403"},
	{mutant: "no-origin-check", spec: "2025-11-25", want: reports.Fail, evidence: "want 403"},
	{mutant: "no-origin-check", spec: "2025-06-18", want: reports.Fail, evidence: "want a 4xx rejection"},
	{mutant: "origin-post-only", want: reports.Fail, evidence: "a GET with Origin"},
	{mutant: "origin-post-only", spec: "2025-06-18", want: reports.Fail, evidence: "a GET with Origin"},
	{mutant: "hold-stream-after-cancel", spec: "2025-11-25", want: reports.Warn, evidence: "stayed open"},
	{mutant: "accept-any-version", spec: "2025-11-25", want: reports.Fail, evidence: "want 400"},
	{mutant: "delete-ignored", spec: "2025-11-25", want: reports.Fail, evidence: "after DELETE"},
	{mutant: "reissue-busy", want: reports.Warn, evidence: "re-issued request failed"},
	{mutant: "crash-on-parse-error", want: reports.Fail, evidence: "did not answer",
		also: []string{"ROBUST-INVALID-UTF8"}}, // bytes that are not UTF-8 are not JSON either: it crashes on them too
	{mutant: "silent-on-parse-error", want: reports.Fail, evidence: "no reply to a line that is not JSON"},
	{mutant: "silent-on-parse-error", spec: "2025-11-25", want: reports.Fail, evidence: "no reply to a line that is not JSON"},
	// In 2026-07-28 its bare 404 also breaks h#17's "404 and a JSON-RPC
	// error -32601".
	{mutant: "http-status-not-jsonrpc", want: reports.Fail, evidence: "not a JSON-RPC error", also: []string{"HTTP-METHOD-NOT-FOUND-404"}},
	{mutant: "http-status-not-jsonrpc", spec: "2025-11-25", want: reports.Fail, evidence: "not a JSON-RPC error"},
	// Processing a batch breaks no server sentence (mcp-conform's reading:
	// WARN); on stdio its array reply is not a valid MCP message (FAIL).
	{mutant: "accept-batch", want: reports.Warn, wantOn: map[string]reports.Status{"stdio": reports.Fail}, evidence: "processed"},
	{mutant: "accept-batch", spec: "2025-06-18", want: reports.Warn, wantOn: map[string]reports.Status{"stdio": reports.Fail}, evidence: "processed"},
	{mutant: "stdout-noise", want: reports.Fail, evidence: "not JSON-RPC messages", failsAllOn: "stdio"},
	{mutant: "reissue-busy", spec: "2025-11-25", want: reports.Warn, evidence: "re-issued request failed",
		mayAlso: []string{"RECONNECT-RESUME", "RECONNECT-RESUME-LIVE", "CANCEL-HTTP-DISCONNECT"}}, // they abandon streams too, and re-call the tool
	// The resumed call ends in an error while the control call succeeded:
	// RECONNECT-RESUME and -LIVE see the cancellation too (SHOULD NOT).
	{mutant: "disconnect-cancels", spec: "2025-11-25", want: reports.Warn, evidence: "as if cancelled",
		also: []string{"RECONNECT-RESUME", "RECONNECT-RESUME-LIVE"}},
	{mutant: "disconnect-cancels", spec: "2025-06-18", want: reports.Warn, evidence: "as if cancelled",
		also: []string{"RECONNECT-RESUME", "RECONNECT-RESUME-LIVE"}},
	// A server that ignores the key breaks every ledger clause at once.
	{mutant: "no-idempotency", want: reports.Fail, evidence: "the effect ran again",
		also: []string{"IDEM-KEY-REUSE", "IDEM-CONCURRENT", "IDEM-RESTART", "IDEM-REPLAY-IDENTICAL", "IDEM-ANNOTATION"}},
	{mutant: "key-without-fingerprint", want: reports.Fail, evidence: "with different arguments was accepted"},
	{mutant: "key-without-fingerprint", spec: "2025-11-25", want: reports.Fail, evidence: "with different arguments was accepted"},
	{mutant: "check-then-act", want: reports.Fail, evidence: "released together by the proxy's barrier, ran the effect 2 times"},
	{mutant: "check-then-act", spec: "2025-11-25", want: reports.Fail, evidence: "released together by the proxy's barrier, ran the effect 2 times"},
	// A ledger private to the process: after the restart the probe has
	// forgotten the commit and the lookup finds nothing, before any retry.
	// Two stdio processes share nothing either: the race check sees it
	// there; two HTTP sessions share one process and pass.
	{mutant: "memory-ledger", want: reports.Fail, evidence: "was forgotten",
		mayAlso: []string{"IDEM-CONCURRENT"}},
	{mutant: "memory-ledger", spec: "2025-11-25", want: reports.Fail, evidence: "was forgotten",
		mayAlso: []string{"IDEM-CONCURRENT"}},
	{mutant: "per-process-store", want: reports.Fail, evidence: "do not share state"},
	{mutant: "per-process-store", spec: "2025-06-18", want: reports.Fail, evidence: "do not share state"},
	// Every check that compares a replay with the first result sees it.
	{mutant: "mutable-replay", want: reports.Fail, evidence: "replays must be byte-identical",
		also: []string{"IDEM-LOST-RESPONSE", "IDEM-KEY-REUSE", "IDEM-CONCURRENT", "IDEM-RESTART"}},
	{mutant: "annotation-lies", want: reports.Warn, evidence: "annotates append_note idempotentHint: true"},
	// task-cancel-instant-lie breaks a 2025-11-25 clause only: in 2026-07-28 an
	// acknowledgement that the task does not act on is legal.
	{mutant: "task-cancel-instant-lie", spec: "2025-11-25", want: reports.Fail, evidence: "not moved to cancelled before the response"},
	// 2026-07-28 tasks: the extension page has no RFC 2119 keyword, so its
	// sentences WARN at most.
	{mutant: "task-terminal-mutable", want: reports.Warn, evidence: "a terminal status changed"},
	{mutant: "task-terminal-mutable", spec: "2025-11-25", want: reports.Fail, evidence: "a terminal status changed"},
	{mutant: "task-cancel-terminal-accepted", want: reports.Warn, evidence: `tasks/get said "cancelled"`},
	{mutant: "task-cancel-terminal-accepted", spec: "2025-11-25", want: reports.Fail, evidence: "want the error -32602"},
	{mutant: "task-no-ttl", want: reports.Warn, evidence: "carries no valid ttlMs"},
	// The 2025-11-25 schema's Task requires ttl: SCHEMA-VALID sees it too.
	{mutant: "task-no-ttl", spec: "2025-11-25", want: reports.Fail, evidence: "carries no valid ttl ", also: []string{"SCHEMA-VALID"}},
	// A task lost over HTTP fails every TASK check there (they all poll it);
	// on stdio the same checks pass: mayAlso, as also is transport-blind.
	{mutant: "task-lost-on-disconnect", want: reports.Warn, evidence: "after the connection that created it closed",
		mayAlso: []string{"TASK-CANCEL-TERMINAL", "TASK-TERMINAL-FINAL", "TASK-CANCEL-TERMINAL-ERROR", "TASK-TTL-REPORTED", "TASK-PROGRESS-STOPS"}},
	{mutant: "task-progress-after-terminal", spec: "2025-11-25", want: reports.Fail, evidence: "after tasks/get reported it cancelled"},
	// 2025-11-25 rests on "Disconnection SHOULD NOT be interpreted as the
	// client cancelling its request".
	{mutant: "task-lost-on-disconnect", spec: "2025-11-25", want: reports.Warn, evidence: "after the connection that created it closed",
		mayAlso: []string{"TASK-CANCEL-TERMINAL", "TASK-TERMINAL-FINAL", "TASK-CANCEL-TERMINAL-ERROR", "TASK-TTL-REPORTED", "TASK-PROGRESS-STOPS"}},
	{mutant: "flow-drop-final", want: reports.Fail, evidence: "never arrived"},
	{mutant: "flow-drop-final", spec: "2025-11-25", want: reports.Fail, evidence: "never arrived"},
	{mutant: "progress-flood-unbounded", want: reports.Warn, evidence: "its queue grew with the flood"},
	{mutant: "progress-flood-unbounded", spec: "2025-06-18", want: reports.Warn, evidence: "its queue grew with the flood"},
	{mutant: "invalid-request-ignored", want: reports.Fail, evidence: "no reply to a request object without a method"},
	{mutant: "invalid-request-ignored", spec: "2025-11-25", want: reports.Fail, evidence: "without a method"},
	{mutant: "invalid-params-wrong-code", want: reports.Warn, evidence: "code -32603 (want -32602)"},
	{mutant: "invalid-params-wrong-code", spec: "2025-06-18", want: reports.Warn, evidence: "code -32603 (want -32602)"},
	{mutant: "unknown-tool-as-result", want: reports.Warn, evidence: "answered with a result"},
	{mutant: "unknown-tool-as-result", spec: "2025-11-25", want: reports.Warn, evidence: "answered with a result"},
	{mutant: "crash-on-oversize", want: reports.Fail, evidence: "exit status 3"},
	{mutant: "crash-on-oversize", spec: "2025-11-25", want: reports.Fail, evidence: "exit status 3"},
	{mutant: "crash-on-invalid-utf8", want: reports.Fail, evidence: "not UTF-8"},
	{mutant: "crash-on-invalid-utf8", spec: "2025-06-18", want: reports.Fail, evidence: "not UTF-8"},
	{mutant: "crash-on-duplicate-id", want: reports.Fail, evidence: "reusing an in-flight id"},
	{mutant: "crash-on-duplicate-id", spec: "2025-11-25", want: reports.Fail, evidence: "reusing an in-flight id"},
	// Alive and serving, but the first call lost: the client broke the
	// MUST, the server WARNs at most.
	{mutant: "duplicate-id-drops-first", spec: "2025-11-25", want: reports.Warn, evidence: "lose the first request"},
	{mutant: "duplicate-id-drops-first", spec: "2025-06-18", want: reports.Warn, evidence: "lose the first request"},
	{mutant: "answer-stray-response", want: reports.Fail, evidence: "response from the client"},
	{mutant: "answer-stray-response", spec: "2025-11-25", want: reports.Fail, evidence: "response from the client"},
	// A counter: deterministic ids, which the security best practices'
	// MUST forbids.
	{mutant: "session-sequential", spec: "2025-11-25", want: reports.Fail, evidence: "bits (want ≥ 96)"},
	{mutant: "session-reuse-deleted", spec: "2025-11-25", want: reports.Warn, evidence: "deleted before"},
	{mutant: "session-unbound", spec: "2025-11-25", want: reports.Warn, evidence: "second principal's credential"},
	{mutant: "bind-all-interfaces", want: reports.Warn, evidence: "not only on loopback"},
	{mutant: "bind-all-interfaces", spec: "2025-06-18", want: reports.Warn, evidence: "not only on loopback"},
	{mutant: "serve-without-token", want: reports.Fail, evidence: "want 401"},
	{mutant: "serve-without-token", spec: "2025-11-25", want: reports.Fail, evidence: "want 401"},
	// The tool contract (suites/tools_schema.go) and pagination
	// (suites/pagination.go): each mutant breaks its check's clause only.
	{mutant: "input-schema-invalid", want: reports.Fail, evidence: "is not a valid JSON Schema of its dialect"},
	{mutant: "input-schema-invalid", spec: "2025-11-25", want: reports.Fail, evidence: "is not a valid JSON Schema of its dialect"},
	{mutant: "structured-off-schema", want: reports.Fail, evidence: "does not conform to its outputSchema"},
	{mutant: "structured-off-schema", spec: "2025-06-18", want: reports.Fail, evidence: "does not conform to its outputSchema"},
	{mutant: "tool-name-invalid", want: reports.Warn, evidence: "has characters other than"},
	{mutant: "tool-name-invalid", spec: "2025-11-25", want: reports.Warn, evidence: "has characters other than"},
	{mutant: "tools-list-side-effect", want: reports.Fail, evidence: "changed after other requests on the connection"},
	{mutant: "input-unvalidated", want: reports.Fail, evidence: "which fail its inputSchema, ran"},
	{mutant: "input-unvalidated", spec: "2025-06-18", want: reports.Fail, evidence: "which fail its inputSchema, ran"},
	// 2025-06-18 lists invalid arguments among protocol errors: -32602
	// passes there.
	{mutant: "input-error-protocol", want: reports.Warn, evidence: "not a tool execution error"},
	{mutant: "input-error-protocol", spec: "2025-11-25", want: reports.Warn, evidence: "not a tool execution error"},
	{mutant: "cursor-unchecked", want: reports.Warn, evidence: "was answered with a page"},
	{mutant: "cursor-unchecked", spec: "2025-06-18", want: reports.Warn, evidence: "was answered with a page"},
	{mutant: "cursor-stateful", want: reports.Warn, evidence: "the cursor is not stable"},
	{mutant: "cursor-stateful", spec: "2025-11-25", want: reports.Warn, evidence: "the cursor is not stable"},
	// Without the logging capability the other LOGGING checks have nothing
	// to judge: SKIP.
	{mutant: "log-no-capability", want: reports.Fail, evidence: "do not declare logging",
		skips: []string{"LOGGING-INVALID-LEVEL", "LOGGING-LEVEL-FILTER", "LOGGING-NOT-REQUESTED"}},
	{mutant: "log-no-capability", spec: "2025-06-18", want: reports.Fail, evidence: "do not declare logging",
		skips: []string{"LOGGING-INVALID-LEVEL", "LOGGING-LEVEL-FILTER"}},
	{mutant: "log-level-unchecked", want: reports.Warn, evidence: "not the error -32602"},
	{mutant: "log-level-unchecked", spec: "2025-11-25", want: reports.Warn, evidence: "not the error -32602"},
	{mutant: "log-unfiltered", want: reports.Warn, evidence: "with the level set to info the server sent a debug message"},
	{mutant: "log-unfiltered", spec: "2025-06-18", want: reports.Warn, evidence: "with the level set to info the server sent a debug message"},
	{mutant: "log-unrequested", want: reports.Fail, evidence: "was followed by 4 notifications/message"},
}

// wantFor is the status the broken check must have on transport tr.
func (tc mutantCase) wantFor(tr string) reports.Status {
	if w, ok := tc.wantOn[tr]; ok {
		return w
	}
	return tc.want
}

// timeoutReuse: TIMEOUT-CANCEL-STOPS has no mutant of its own; the cancel
// mutants that break its clause on one transport (see
// TestTimeoutCaughtByCancelMutants) leave it passing on the other.
var timeoutReuse = []string{"TIMEOUT-CANCEL-STOPS"}

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
		args := []string{"run", "-q", "--mutant", tc.mutant}
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
				if c.Status != reports.Pass {
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

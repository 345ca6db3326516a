package main

import "github.com/mcp-conform/mcp-conform/reports"

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
	// a required member, a notification with an id. In 2025 the member is
	// serverInfo.version, which LIFECYCLE-INITIALIZE-INFO (lc#1: the server
	// responds with its own information) also requires.
	{mutant: "schema-invalid-result", want: reports.Fail, evidence: "missing property 'ttlMs'"},
	{mutant: "schema-invalid-result", spec: "2025-11-25", want: reports.Fail, evidence: "missing property 'version'", also: []string{"LIFECYCLE-INITIALIZE-INFO"}},
	{mutant: "schema-invalid-result", spec: "2025-06-18", want: reports.Fail, evidence: "missing property 'version'", also: []string{"LIFECYCLE-INITIALIZE-INFO"}},
	// In 2026-07-28 a notification with an id is also a request the server
	// initiated (a method and an id), which that version forbids.
	{mutant: "notification-with-id", want: reports.Fail, evidence: "carries an id", also: []string{"LIFECYCLE-NO-SERVER-REQUESTS"}},
	// The copy (with an id) of a call's first progress lands in the segment
	// RECONNECT-RESUME replays when the cut comes after it: a message
	// RECONNECT-RESUME cannot relate to the resumed request (a race).
	{mutant: "notification-with-id", spec: "2025-11-25", want: reports.Fail, evidence: "carries an id", mayAlso: []string{"RECONNECT-RESUME"}},
	// LIFECYCLE-PING-PROMPT enforces the same sentence (ping#1: "respond
	// promptly with an empty response") for a ping sent during a call.
	{mutant: "ping-not-empty", spec: "2025-11-25", want: reports.Fail, evidence: "not empty", also: []string{"LIFECYCLE-PING-PROMPT"}},
	{mutant: "ping-not-empty", spec: "2025-06-18", want: reports.Fail, evidence: "not empty", also: []string{"LIFECYCLE-PING-PROMPT"}},
	// 2026-07-28 request headers and the unsupported-version error.
	{mutant: "header-mismatch-accepted", want: reports.Fail, evidence: "want HTTP 400 with HeaderMismatch (-32020)"},
	{mutant: "name-base64-undecoded", want: reports.Fail, evidence: "compared undecoded"},
	{mutant: "version-header-unchecked", want: reports.Fail, evidence: "want HTTP 400 with HeaderMismatch (-32020)"},
	{mutant: "version-header-optional", want: reports.Fail, evidence: "without an MCP-Protocol-Version header was served"},
	// 2025 stream routing: the same progress on the POST and the GET
	// stream; a call's response on the GET stream (a copy, so also on two
	// streams).
	// The copies on the GET stream are about a running call: tr#19 too.
	{mutant: "progress-broadcast", spec: "2025-11-25", want: reports.Fail, evidence: "and GET#", also: []string{"HTTP-GET-STREAM-UNRELATED"}},
	{mutant: "response-on-get", spec: "2025-11-25", want: reports.Fail, evidence: "the response to"},
	// 2025 log routing: a call's log messages on the POST and the GET
	// stream (tr#22, log#6: FAIL), or on the GET stream only (log#5, the
	// SHOULD proposed for 2025-11-25: WARN).
	{mutant: "log-broadcast", spec: "2025-11-25", want: reports.Fail, evidence: "(broadcast)"},
	{mutant: "log-broadcast", spec: "2025-06-18", want: reports.Fail, evidence: "(broadcast)"},
	{mutant: "log-only-on-get", spec: "2025-11-25", want: reports.Warn, evidence: "not on its own SSE stream"},
	{mutant: "listen-ack-late", want: reports.Fail, evidence: "not notifications/subscriptions/acknowledged"},
	// Without a notification the two subscription checks of a change have
	// nothing to judge.
	{mutant: "tools-changed-silent", want: reports.Warn, evidence: "but no notifications/tools/list_changed",
		skips: []string{"SUBSCRIPTION-ID-TAGGED", "SUBSCRIPTION-FILTER"}},
	{mutant: "tools-changed-silent", spec: "2025-11-25", want: reports.Warn, evidence: "but no notifications/tools/list_changed"},
	{mutant: "tools-changed-silent", spec: "2025-06-18", want: reports.Warn, evidence: "but no notifications/tools/list_changed"},
	{mutant: "listen-notification-unmarked", want: reports.Fail, evidence: "carries no _meta"},
	{mutant: "listen-filter-ignored", want: reports.Fail, evidence: "asked for promptsListChanged only, yet got"},
	{mutant: "log-on-listen", want: reports.Fail, evidence: "a notifications/message"},
	{mutant: "stream-held-open", want: reports.Warn, evidence: "was still open"},
	{mutant: "no-priming-event", spec: "2025-11-25", want: reports.Warn, evidence: "not the empty data of a priming event"},
	{mutant: "tools-list-text-plain", want: reports.Fail, evidence: "tools/list: HTTP 200, Content-Type \"text/plain; charset=utf-8\""},
	{mutant: "modern-server-request", want: reports.Fail, evidence: "roots/list (id"},
	// SCHEMA-VALID judges every _meta key name of every message too.
	{mutant: "meta-key-malformed", want: reports.Fail, evidence: "1trace.example/request-id", also: []string{"SCHEMA-VALID"}},
	{mutant: "meta-key-malformed", spec: "2025-11-25", want: reports.Fail, evidence: "1trace.example/request-id", also: []string{"SCHEMA-VALID"}},
	{mutant: "extension-id-malformed", want: reports.Fail, evidence: "extension identifier"},
	{mutant: "unknown-method-400", want: reports.Fail, evidence: "want HTTP 404"},
	{mutant: "unsupported-version-unlisted", want: reports.Fail, evidence: "no data object listing",
		also: []string{"SCHEMA-VALID"}}, // the schema requires the data too
	// A server that ignores EOF makes every connection's close wait the
	// harness's 2 s grace before SIGTERM: the run is its lifecycle checks.
	{mutant: "meta-capabilities-optional", want: reports.Fail, evidence: "want a JSON-RPC error -32602"},
	{mutant: "notification-200", want: reports.Fail, evidence: "want 202 Accepted"},
	{mutant: "notification-200", spec: "2025-11-25", want: reports.Fail, evidence: "want 202 Accepted"},
	// TASK-PROGRESS-STOPS and TASK-PROGRESS-TOKEN watch the standalone GET
	// stream for a task's progress: refused, they have no progress to judge.
	{mutant: "get-stream-400", spec: "2025-11-25", want: reports.Fail, evidence: "neither an event stream nor 405",
		skips: []string{"TASK-PROGRESS-STOPS", "TASK-PROGRESS-TOKEN", "HTTP-LOG-ROUTING"}},
	// HTTP-LOG-ROUTING needs the standalone GET stream to tell a call's log
	// messages' stream from another: refused, it SKIPs.
	{mutant: "get-stream-400", spec: "2025-06-18", want: reports.Fail, evidence: "neither an event stream nor 405",
		skips: []string{"HTTP-LOG-ROUTING"}},
	// Ids that do not name their stream leave a Last-Event-ID nothing to
	// resume.
	{mutant: "event-ids-per-stream", spec: "2025-11-25", want: reports.Fail, evidence: "repeated across the session's streams",
		also: []string{"RECONNECT-RESUME-LIVE"}, mayAlso: []string{"RECONNECT-RESUME"}},
	{mutant: "ignore-stdin-eof", want: reports.Warn, evidence: "still running", focus: "LIFECYCLE-"},
	// 2025 version negotiation: an unknown version refused, or offered the oldest.
	{mutant: "unsupported-version-error", spec: "2025-11-25", want: reports.Fail, evidence: "want a result naming another", skips: []string{"LIFECYCLE-VERSION-LATEST"}},
	{mutant: "fallback-oldest", spec: "2025-06-18", want: reports.Warn, evidence: "supports the newer"},
	{mutant: "early-roots-request", spec: "2025-11-25", want: reports.Warn, evidence: "before it received notifications/initialized"},
	// The runner's probe reads 2025-06-18 answered with 2025-11-25 as refused:
	// the check, run in 2025-11-25, asks for the 2025-06-18 its server/discover lists.
	{mutant: "version-not-echoed", spec: "2025-11-25", want: reports.Fail, evidence: "a version the server supports (its server/discover lists it)"},
	{mutant: "serverinfo-echo", spec: "2025-11-25", want: reports.Fail, evidence: "is the client's clientInfo handed back"},
	{mutant: "request-id-null", spec: "2025-11-25", want: reports.Fail, evidence: "request id is null"},
	{mutant: "request-id-fraction", spec: "2025-06-18", want: reports.Fail, evidence: "request id 1.5 is neither a string nor an integer"},
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
	{mutant: "task-cancel-instant-lie", spec: "2025-11-25", want: reports.Fail, evidence: "not moved to cancelled before the response",
		also: []string{"TASK-CANCEL-STOPS"}}, // its work runs on to its result
	// 2026-07-28 tasks: the extension page has no RFC 2119 keyword, so its
	// sentences WARN at most.
	{mutant: "task-terminal-mutable", want: reports.Warn, evidence: "a terminal status changed"},
	{mutant: "task-terminal-mutable", spec: "2025-11-25", want: reports.Fail, evidence: "a terminal status changed",
		also: []string{"TASK-CANCEL-STOPS"}}, // its worker works on after the cancellation
	{mutant: "task-cancel-terminal-accepted", want: reports.Warn, evidence: `tasks/get said "cancelled"`},
	{mutant: "task-cancel-terminal-accepted", spec: "2025-11-25", want: reports.Fail, evidence: "want the error -32602"},
	{mutant: "task-no-ttl", want: reports.Warn, evidence: "carries no valid ttlMs"},
	// The 2025-11-25 schema's Task requires ttl: SCHEMA-VALID sees it too.
	{mutant: "task-no-ttl", spec: "2025-11-25", want: reports.Fail, evidence: "carries no valid ttl ", also: []string{"SCHEMA-VALID"}},
	// A task lost over HTTP fails every TASK check there that reads it again
	// (they poll it; TASK-META-IGNORED gets it by id);
	// on stdio the same checks pass: mayAlso, as also is transport-blind.
	{mutant: "task-lost-on-disconnect", want: reports.Warn, evidence: "after the connection that created it closed",
		mayAlso: []string{"TASK-CANCEL-TERMINAL", "TASK-TERMINAL-FINAL", "TASK-CANCEL-TERMINAL-ERROR", "TASK-TTL-REPORTED", "TASK-PROGRESS-STOPS", "TASK-RESULT", "TASK-META-IGNORED", "TASK-STATUS-NO-RELATED-META"}},
	{mutant: "task-progress-after-terminal", spec: "2025-11-25", want: reports.Fail, evidence: "after tasks/get reported it cancelled"},
	// 2025-11-25 rests on "Disconnection SHOULD NOT be interpreted as the
	// client cancelling its request".
	{mutant: "task-lost-on-disconnect", spec: "2025-11-25", want: reports.Warn, evidence: "after the connection that created it closed",
		mayAlso: []string{"TASK-CANCEL-TERMINAL", "TASK-TERMINAL-FINAL", "TASK-CANCEL-TERMINAL-ERROR", "TASK-TTL-REPORTED", "TASK-PROGRESS-STOPS", "TASK-RESULT", "TASK-META-IGNORED", "TASK-STATUS-NO-RELATED-META", "TASK-PROGRESS-TOKEN", "TASK-LIST",
			"TASK-CREATE-PROMPT", "TASK-AUTH-BOUND", "TASK-FAILED-STATUS-MESSAGE", "TASK-CANCEL-STOPS"}},
	// The task contract's mutants change 2025-11-25 behaviour only (the
	// 2026-07-28 extension has no tasks/result and names no error for an
	// unknown task).
	{mutant: "task-unknown-id-internal", spec: "2025-11-25", want: reports.Fail, evidence: "it never issued"},
	{mutant: "task-result-no-block", spec: "2025-11-25", want: reports.Fail, evidence: "it must block until the task is terminal"},
	{mutant: "task-result-no-related-task", spec: "2025-11-25", want: reports.Fail, evidence: "must carry _meta"},
	{mutant: "task-result-once", spec: "2025-11-25", want: reports.Fail, evidence: "a second tasks/result for the completed task"},
	{mutant: "task-required-tool-error", spec: "2025-11-25", want: reports.Fail, evidence: "want the error -32601 (Method not found)"},
	{mutant: "task-starts-input-required", spec: "2025-11-25", want: reports.Fail, evidence: "a task must begin in working"},
	{mutant: "task-meta-overrides-id", spec: "2025-11-25", want: reports.Fail, evidence: "the taskId parameter must decide"},
	{mutant: "task-status-related-meta", spec: "2025-11-25", want: reports.Warn, evidence: "although the taskId is in the result itself"},
	{mutant: "task-forbidden-tool-runs", spec: "2025-11-25", want: reports.Warn, evidence: "a result (the tool run as a normal call)"},
	{mutant: "task-get-sse", spec: "2025-11-25", want: reports.Warn, evidence: "answered on an SSE stream instead of one application/json body"},
	// Without the tasks capability every other TASK check SKIPs.
	{mutant: "task-capability-undeclared", spec: "2025-11-25", want: reports.Fail, evidence: "declared no tasks capability at initialization", skips: taskCapableChecks,
		also: []string{"TASK-UNDECLARED-NORMAL"}},
	{mutant: "task-undeclared-rejected", spec: "2025-11-25", want: reports.Fail, evidence: "so it must list its tools, the task metadata ignored"},
	{mutant: "task-progress-token-changed", spec: "2025-11-25", want: reports.Fail, evidence: "carry another token than the progressToken", skips: []string{"TASK-PROGRESS-STOPS"}},
	{mutant: "flow-drop-final", want: reports.Fail, evidence: "never arrived"},
	// tasks/list (2025-11-25 only: the 2026-07-28 extension has none).
	{mutant: "task-list-no-cursor", spec: "2025-11-25", want: reports.Fail, evidence: "a nextCursor must be given while more tasks are available"},
	{mutant: "task-list-skips-task", spec: "2025-11-25", want: reports.Fail, evidence: "a task tasks/get finds must be listed"},
	// Judged against the reference manifests' declared task-role pageSize (2).
	{mutant: "task-list-one-page", spec: "2025-11-25", want: reports.Warn, evidence: "declares a tasks/list page size of 2"},
	// Provoked through the declared task-role failArguments ({fail: true}).
	{mutant: "task-result-failed-status", spec: "2025-11-25", want: reports.Fail, evidence: "a Task's status is not its result"},
	{mutant: "task-failed-retried", spec: "2025-11-25", want: reports.Fail, evidence: "the failing task (declared failArguments) was failed, then tasks/get said \"working\""},
	// A task answered only once its work ended can no longer be cancelled
	// while it works, and sends its progress before its CreateTaskResult.
	{mutant: "task-guessable-ids", spec: "2025-11-25", want: reports.Fail, evidence: "guessable by another requestor"},
	// Tasks visible across sessions: the second principal's session gets the
	// first's task (task#33).
	{mutant: "task-visible-across-principals", spec: "2025-11-25", want: reports.Fail, evidence: "was served to the second principal"},
	{mutant: "task-create-after-work", spec: "2025-11-25", want: reports.Warn, evidence: "not as soon as possible",
		also: []string{"TASK-CANCEL-TERMINAL", "TASK-TERMINAL-FINAL", "TASK-PROGRESS-STOPS"}, skips: []string{"TASK-PROGRESS-TOKEN", "TASK-CANCEL-STOPS", "TASK-INPUT-REQUIRED"}},
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
	{mutant: "serve-without-token", want: reports.Fail, evidence: "want 401", also: []string{"SECURITY-AUTH-EVERY-REQUEST", "SECURITY-TOKEN-AUDIENCE"}},
	{mutant: "serve-without-token", spec: "2025-11-25", want: reports.Fail, evidence: "want 401", also: []string{"SECURITY-AUTH-EVERY-REQUEST", "SECURITY-TOKEN-AUDIENCE"}},
	// The tool contract (suites/tools_schema.go) and pagination
	// (suites/pagination.go): each mutant breaks its check's clause only.
	{mutant: "input-schema-invalid", want: reports.Fail, evidence: "is not a valid JSON Schema of its dialect"},
	{mutant: "input-schema-invalid", spec: "2025-11-25", want: reports.Fail, evidence: "is not a valid JSON Schema of its dialect"},
	{mutant: "structured-off-schema", want: reports.Fail, evidence: "does not conform to its outputSchema"},
	{mutant: "structured-off-schema", spec: "2025-06-18", want: reports.Fail, evidence: "does not conform to its outputSchema"},
	// 2026-07-28 only: a deterministic order is a SHOULD of that version.
	{mutant: "tools-list-reordered", want: reports.Warn, evidence: "the same tools in another order"},
	{mutant: "header-sensitive", want: reports.Warn, evidence: "marks the parameter api_key with x-mcp-header \"Api-Key\""},
	{mutant: "structured-no-text", want: reports.Warn, evidence: "no text block holding that JSON"},
	{mutant: "structured-no-text", spec: "2025-11-25", want: reports.Warn, evidence: "no text block holding that JSON"},
	{mutant: "structured-no-text", spec: "2025-06-18", want: reports.Warn, evidence: "no text block holding that JSON"},
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
		skips: []string{"LOGGING-INVALID-LEVEL", "LOGGING-LEVEL-FILTER", "HTTP-LOG-ROUTING"}},
	{mutant: "log-level-unchecked", want: reports.Warn, evidence: "not the error -32602"},
	{mutant: "log-level-unchecked", spec: "2025-11-25", want: reports.Warn, evidence: "not the error -32602"},
	{mutant: "log-unfiltered", want: reports.Warn, evidence: "with the level set to info the server sent a debug message"},
	{mutant: "log-unfiltered", spec: "2025-06-18", want: reports.Warn, evidence: "with the level set to info the server sent a debug message"},
	{mutant: "log-unrequested", want: reports.Fail, evidence: "was followed by 4 notifications/message"},
	// Reply ids, error objects and ping (fixtures/basic_mutants.go).
	{mutant: "id-numeric-string", want: reports.Fail, evidence: "(a string of digits) was answered with id"},
	{mutant: "id-numeric-string", spec: "2025-06-18", want: reports.Fail, evidence: "(a string of digits) was answered with id"},
	{mutant: "error-and-result", want: reports.Fail, evidence: "both result and error"},
	{mutant: "error-and-result", spec: "2025-11-25", want: reports.Fail, evidence: "both result and error"},
	{mutant: "error-no-message", want: reports.Fail, evidence: "error has no message"},
	{mutant: "error-no-message", spec: "2025-06-18", want: reports.Fail, evidence: "error has no message"},
	{mutant: "ping-behind-calls", spec: "2025-11-25", want: reports.Fail, evidence: "the ping waited for the call"},
	{mutant: "ping-behind-calls", spec: "2025-06-18", want: reports.Fail, evidence: "the ping waited for the call"},
	// Without the tools capability no tools.listChanged is declared:
	// TOOLS-LIST-CHANGED has no promise to judge.
	{mutant: "tools-no-capability", want: reports.Fail, evidence: "do not declare tools", skips: []string{"TOOLS-LIST-CHANGED"}},
	{mutant: "tools-no-capability", spec: "2025-06-18", want: reports.Fail, evidence: "do not declare tools", skips: []string{"TOOLS-LIST-CHANGED"}},
	// 2026-07-28 reserved error codes, on ROBUST-DUPLICATE-ID's refusal of
	// an id in flight (which judges the server living on, not the code).
	{mutant: "code-legacy-range", want: reports.Warn, evidence: "legacy range -32019..-32000"},
	{mutant: "code-reserved-undefined", want: reports.Fail, evidence: "which does not define it"},
	{mutant: "code-retired", want: reports.Fail, evidence: "is retired in 2026-07-28"},
	// echo twice on one page: TOOLS-NAMES's, not a cursor's fault
	// (PAGINATION-WALK notes it and passes).
	{mutant: "tool-name-duplicate", want: reports.Warn, evidence: "\"echo\" is listed 2 times"},
	{mutant: "tool-name-duplicate", spec: "2025-11-25", want: reports.Warn, evidence: "\"echo\" is listed 2 times"},
	{mutant: "tool-name-too-long", want: reports.Warn, evidence: "129"},
	{mutant: "tool-name-too-long", spec: "2025-11-25", want: reports.Warn, evidence: "129"},
	{mutant: "auth-skips-tools", want: reports.Fail, evidence: "a tools/list request with no Authorization header"},
	{mutant: "auth-skips-tools", spec: "2025-11-25", want: reports.Fail, evidence: "a tools/list request with no Authorization header"},
	{mutant: "auth-skips-tools", spec: "2025-06-18", want: reports.Fail, evidence: "a tools/list request with no Authorization header"},
	{mutant: "token-audience-unchecked", want: reports.Fail, evidence: "foreignAuth credential (issued for another resource) got HTTP 200"},
	{mutant: "token-audience-unchecked", spec: "2025-11-25", want: reports.Fail, evidence: "foreignAuth credential (issued for another resource) got HTTP 200"},
	{mutant: "token-audience-unchecked", spec: "2025-06-18", want: reports.Fail, evidence: "foreignAuth credential (issued for another resource) got HTTP 200"},
	// The 2025 wire pages (wirepages_mutants.go).
	{mutant: "version-header-absent-400", spec: "2025-11-25", want: reports.Warn, evidence: "without an MCP-Protocol-Version header got HTTP 400"},
	{mutant: "version-header-absent-400", spec: "2025-06-18", want: reports.Warn, evidence: "without an MCP-Protocol-Version header got HTTP 400"},
	{mutant: "meta-key-malformed-ping", spec: "2025-11-25", want: reports.Fail, evidence: "1trace.example/request-id"},
	{mutant: "meta-key-malformed-ping", spec: "2025-06-18", want: reports.Fail, evidence: "1trace.example/request-id"},
	{mutant: "progress-on-get", spec: "2025-11-25", want: reports.Warn, evidence: "came on the standalone GET stream"},
	{mutant: "progress-on-get", spec: "2025-06-18", want: reports.Warn, evidence: "came on the standalone GET stream"},
	{mutant: "version-leak-618", spec: "2025-06-18", want: reports.Fail, evidence: "is a server notification of 2025-11-25, not of the negotiated 2025-06-18"},
	// What every 2026-07-28 result carries (wire3_mutants.go).
	{mutant: "result-type-missing", want: reports.Fail, evidence: "missing property 'resultType'"},
	{mutant: "server-info-meta-missing", want: reports.Warn, evidence: "carries no io.modelcontextprotocol/serverInfo"},
	// The -32022 with 200: SECURITY-PROTOCOL-VERSION judges the same status.
	{mutant: "unsupported-version-200", want: reports.Fail, evidence: "its status must be 400", also: []string{"SECURITY-PROTOCOL-VERSION"}},
	{mutant: "clientinfo-gated", want: reports.Warn, evidence: "under clientInfo example-other-client"},
	// A call closed while another's stream is open: its crossed progress
	// may land on that stream after the close, when the race goes so.
	{mutant: "progress-crossed", want: reports.Fail, evidence: "carried progress for token", mayAlso: []string{"CANCEL-HTTP-CLOSE"}},
	// The harness opens every later stdio connection of a run without a
	// server/discover (it remembers the negotiation: itself relying on
	// basic#17), so a server that wants one first breaks every check's
	// connection: the row judges the check of that clause alone.
	{mutant: "discover-first", want: reports.Fail, evidence: "send server/discover first", focus: "LIFECYCLE-NO-PRIOR-CONTEXT"},
	{mutant: "task-ext-undeclared-used", want: reports.Fail, evidence: "got a task"},
	// The schema's MissingRequiredClientCapabilityError requires data.
	{mutant: "missing-capability-no-data", want: reports.Fail, evidence: "without data.requiredCapabilities", also: []string{"SCHEMA-VALID"}},
	// As discover-first, over HTTP: the harness's clients send tools/list on
	// connections that carried no server/discover (measured: IDEM-*, PAGINATION-*,
	// TOOLS-*, RECONNECT-REISSUE then fail on the same refusal), so the row
	// judges the check of that clause alone.
	{mutant: "discover-first-http", want: reports.Fail, evidence: "send server/discover first on this connection", focus: "LIFECYCLE-NO-PRIOR-CONTEXT"},
	{mutant: "embedded-resource-no-capability", want: reports.Warn, evidence: "embeds the resource"},
	{mutant: "embedded-resource-no-capability", spec: "2025-11-25", want: reports.Warn, evidence: "embeds the resource"},
	{mutant: "embedded-resource-no-capability", spec: "2025-06-18", want: reports.Warn, evidence: "embeds the resource"},
	// basic#12 is not in 2025-06-18, whose TOOLS-OUTPUT-SCHEMA compiles only the outputSchemas of the tools it calls.
	{mutant: "output-schema-invalid", want: reports.Fail, evidence: "create_support_ticket: outputSchema"},
	{mutant: "output-schema-invalid", spec: "2025-11-25", want: reports.Fail, evidence: "create_support_ticket: outputSchema"},
	// A task id that is not a string, or not unique, breaks every check
	// that creates tasks (each names them by id): the rows judge the
	// check of those clauses alone.
	{mutant: "task-id-numeric", spec: "2025-11-25", want: reports.Fail, evidence: "is not a string", focus: "^TASK-CREATED-WORKING$"},
	{mutant: "task-id-reused", spec: "2025-11-25", want: reports.Fail, evidence: "got the same taskId", focus: "^TASK-CREATED-WORKING$"},
	{mutant: "task-meta-overrides-cancel", spec: "2025-11-25", want: reports.Fail, evidence: "tasks/cancel for taskId"},
	{mutant: "task-meta-overrides-result", spec: "2025-11-25", want: reports.Fail, evidence: "the _meta must be ignored, the taskId parameter decides"},
	// echo's x-mcp-header parameters region and shard (wireparam_mutants.go).
	{mutant: "param-header-unchecked", want: reports.Fail, evidence: "Mcp-Param-Region: mcp-conform-a-other for body value"},
	{mutant: "param-base64-undecoded", want: reports.Fail, evidence: "the header was compared undecoded"},
	{mutant: "param-header-invalid-accepted", want: reports.Fail, evidence: "holding raw non-ASCII bytes"},
	{mutant: "param-integer-as-string", want: reports.Warn, evidence: "compared as strings, not numerically"},
	// The cancelled call's late progress goes to the listen stream the check
	// holds open (wirestop_mutants.go).
	{mutant: "close-progress-on-listen", want: reports.Fail, evidence: "a message for the cancelled request appeared after the close"},
	// State handles (2026-07-28 security best practices): a SHOULD.
	{mutant: "handle-sequential", want: reports.Warn, evidence: "predictable or sequential"},
	{mutant: "handle-unbound", want: reports.Warn, evidence: "handles are not bound to the authenticated user"},
	{mutant: "handle-as-credential", want: reports.Fail, evidence: "treated as authentication"},
	// A 2025 session taken for authentication (sec#4); 2026-07-28 has no
	// sessions.
	{mutant: "session-as-credential", spec: "2025-11-25", want: reports.Fail, evidence: "the session stood in for the credential"},
	{mutant: "session-as-credential", spec: "2025-06-18", want: reports.Fail, evidence: "the session stood in for the credential"},
	{mutant: "listen-teardown-silent", want: reports.Fail, evidence: "sent no notifications/cancelled referencing it"},
	// Served on the modern-only variant (fixtures.Mutant.Implies): every
	// other 2026-07-28 HTTP check runs on it and passes (TestModernOnlyVariant).
	{mutant: "modern-only-get-served", spec: "2026-07-28", want: reports.Warn, evidence: "want 405 Method Not Allowed"},
	{mutant: "modern-only-init-unnamed", spec: "2026-07-28", want: reports.Warn, evidence: "does not name 2026-07-28"},
	{mutant: "modern-only-session-echo", spec: "2026-07-28", want: reports.Warn, evidence: "mints and echoes none"},
	{mutant: "modern-only-last-event-refused", spec: "2026-07-28", want: reports.Warn, evidence: "the header was not ignored"},
	// A resumed stream restarts its ids: RECONNECT-RESUME sees the replay
	// repeat an event id already received.
	{mutant: "event-ids-per-connection", spec: "2025-11-25", want: reports.Fail, evidence: "repeated across the session's streams",
		also: []string{"RECONNECT-RESUME"}},
	// The roots/list on the initialize POST's own event stream.
	{mutant: "early-roots-request-http", spec: "2025-11-25", want: reports.Warn, evidence: "before it received notifications/initialized"},
	// A raw 0xFF in the initialize answer's serverInfo.name, on every HTTP check's connection.
	{mutant: "server-info-not-utf8", spec: "2025-11-25", want: reports.Fail, evidence: "a byte that is not UTF-8 at offset"},
	{mutant: "server-info-not-utf8", spec: "2025-06-18", want: reports.Fail, evidence: "a byte that is not UTF-8 at offset", focus: "^(HTTP-UTF8|LIFECYCLE-.*|HTTP-.*)$"},
	// Each 2025 call's progress on the other open call's stream (a SHOULD there).
	// The resumption checks wait for their call's progress on its own stream
	// while another call is open: the mutant moves it away, and they SKIP
	// ("no progress for its token") when the crossing came first.
	{mutant: "progress-crossed-legacy", spec: "2025-11-25", want: reports.Warn, evidence: "carried progress for token",
		mayAlso: []string{"CANCEL-HTTP-CLOSE", "RECONNECT-RESUME", "RECONNECT-RESUME-LIVE"}},
	{mutant: "progress-crossed-legacy", spec: "2025-06-18", want: reports.Warn, evidence: "carried progress for token", focus: "^(HTTP-.*|PROGRESS-.*|CANCEL-.*)$"},
	// A 2026-07-28 run is negotiated with server/discover, so the mutant
	// refuses 2026-07-28; a 2025 run judges it (its
	// UnsupportedProtocolVersionError lists 2026-07-28).
	{mutant: "discover-missing", spec: "2025-11-25", want: reports.Fail, evidence: "want a DiscoverResult: the server supports 2026-07-28"},
	// lc#1 is a 2025 sentence (initialize); in 2026-07-28 the same
	// capabilities are read from server/discover, which nothing judges.
	{mutant: "completions-unimplemented", spec: "2025-11-25", want: reports.Fail, evidence: "declares the completions capability"},
	{mutant: "completions-unimplemented", spec: "2025-06-18", want: reports.Fail, evidence: "declares the completions capability"},
	{mutant: "declared-version-downgraded", spec: "2025-11-25", want: reports.Fail, evidence: "the manifest declares it (versions:, a declared contract)"},
	// A subscription the server ends (the endSubscriptions role) without
	// the completion result of Graceful Closure (a SHOULD).
	{mutant: "listen-end-no-result", want: reports.Warn, evidence: "no response to subscriptions/listen"},
	// A 2026-07-28 request without its other required _meta field.
	{mutant: "meta-version-optional", want: reports.Fail, evidence: "without _meta io.modelcontextprotocol/protocolVersion got"},
	// Provoked through the declared task-role failArguments ({fail: true}).
	{mutant: "task-failed-no-status-message", spec: "2025-11-25", want: reports.Warn, evidence: "failed without a statusMessage"},
	// Seen through the reference's declared task-role probe.
	{mutant: "task-cancel-keeps-working", spec: "2025-11-25", want: reports.Warn, evidence: "went on after tasks/cancel was answered"},
	// Served on the no-tasks variant (Implies): the checks that need a
	// server with tasks SKIP there, and TASK-CAPABILITY-DECLARED gets no
	// CreateTaskResult to judge (every task-augmented call is refused).
	{mutant: "task-undeclared-call-rejected", spec: "2025-11-25", want: reports.Fail, evidence: "the task metadata must be ignored",
		skips: append(append([]string{}, taskCapableChecks...), "TASK-CAPABILITY-DECLARED")},
	{mutant: "input-required-unchecked", want: reports.Fail, evidence: "without the required text, which fail its inputSchema, ran"},
	{mutant: "input-required-unchecked", spec: "2025-06-18", want: reports.Fail, evidence: "without the required text, which fail its inputSchema, ran"},
	{mutant: "tools-changed-caller-only", spec: "2025-11-25", want: reports.Warn, evidence: "for a second, listening connection too"},
	{mutant: "tools-changed-caller-only", spec: "2025-06-18", want: reports.Warn, evidence: "for a second, listening connection too"},
	{mutant: "embedded-resource-echo", want: reports.Warn, evidence: "tool echo (read-only, called with"},
	{mutant: "embedded-resource-echo", spec: "2025-06-18", want: reports.Warn, evidence: "tool echo (read-only, called with"},
	// Provoked through the declared task-role inputArguments ({ask: true}).
	{mutant: "task-input-no-related-task", spec: "2025-11-25", want: reports.Fail, evidence: "asked its requestor for input with a request whose params lack _meta"},
	{mutant: "task-input-status-unset", spec: "2025-11-25", want: reports.Warn, evidence: "not input_required"},
	{mutant: "task-input-status-kept", spec: "2025-11-25", want: reports.Warn, evidence: "stayed input_required in every tasks/get"},
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

// taskCapableChecks are the TASK checks that SKIP on a 2025-11-25 server
// that declares no tasks.requests.tools.call.
var taskCapableChecks = []string{"TASK-CANCEL-TERMINAL", "TASK-TERMINAL-FINAL", "TASK-CANCEL-TERMINAL-ERROR", "TASK-SURVIVES-DISCONNECT",
	"TASK-TTL-REPORTED", "TASK-PROGRESS-STOPS", "TASK-UNKNOWN-ID", "TASK-RESULT", "TASK-REQUIRED-UNAUGMENTED", "TASK-CREATED-WORKING",
	"TASK-META-IGNORED", "TASK-STATUS-NO-RELATED-META", "TASK-UNSUPPORTED-TOOL-AUGMENTED", "TASK-GET-NO-SSE", "TASK-PROGRESS-TOKEN",
	"TASK-LIST", "TASK-CREATE-PROMPT", "TASK-ID-ENTROPY", "TASK-AUTH-BOUND", "TASK-FAILED-STATUS-MESSAGE", "TASK-CANCEL-STOPS",
	"TASK-INPUT-REQUIRED"}

// Package reports turns the results of a conformance run into what people and
// CI systems read: a console summary, JUnit XML, the HTML report, the Markdown
// CI summary, GitHub workflow annotations and the stable JSON report (schema
// mcp-conform/report/v1). It imports nothing else of the harness; the
// suites fill in the model defined here.
package reports

import (
	"encoding/json"
	"time"
)

// SchemaV1 is the value of the "schema" field of every JSON report this
// package writes. Scripts key on it; a new incompatible shape gets a new name.
const SchemaV1 = "mcp-conform/report/v1"

// Status is the verdict of one check.
type Status string

// The five verdicts. FAIL is a broken MUST, WARN a broken SHOULD, SKIP a check
// that could not apply (with the reason), ERROR a harness failure.
const (
	Pass  Status = "PASS"
	Fail  Status = "FAIL"
	Warn  Status = "WARN"
	Skip  Status = "SKIP"
	Error Status = "ERROR"
)

// Level is the strength of the clause a check enforces.
type Level string

// Levels, as in RFC 2119 wording of the specification.
const (
	Must   Level = "MUST"
	Should Level = "SHOULD"
)

// Source says where the clause a check enforces comes from: what gives it
// the authority to FAIL a server.
type Source string

// The three sources of a clause.
const (
	// SourceSpec is a sentence of the MCP specification, in the version the
	// check ran in: its RFC 2119 keyword is the level (MUST → FAIL, SHOULD →
	// WARN).
	SourceSpec Source = "spec"
	// SourceManifest is a contract the target declared in its manifest
	// (e.g. a keyed mutation role: the key makes a retry safe). The target
	// asked to be held to it, so a break FAILs.
	SourceManifest Source = "manifest"
	// SourceReading is mcp-conform's reading of good practice where the
	// specification has no RFC 2119 word: at most SHOULD (WARN).
	SourceReading Source = "reading"
)

// Describe says in words where a clause of this source comes from, for a
// check run in protocol version (empty: not known).
func (s Source) Describe(version string) string {
	switch s {
	case SourceSpec:
		if version == "" {
			return "the MCP specification"
		}
		return "the MCP specification, " + version
	case SourceManifest:
		return "the contract the target declares in its manifest"
	case SourceReading:
		return "mcp-conform's reading of good practice (no RFC 2119 keyword in the specification)"
	}
	return string(s)
}

// Report is one whole run: the target, every check result and the totals.
type Report struct {
	Schema    string    `json:"schema"`
	Tool      Tool      `json:"tool"`
	Target    Target    `json:"target"`
	StartedAt time.Time `json:"startedAt"`
	Duration  float64   `json:"durationMs"`
	Checks    []Check   `json:"checks"`
	// RetryClasses is the retry-class table: for each tool a target
	// exposes, how a client may retry it, with the evidence (IDEM area).
	RetryClasses []ToolClass `json:"retryClasses,omitempty"`
	Summary      Summary     `json:"summary"`
	// Baseline is what an expected-failures baseline (--baseline) did to
	// this run, when one was given.
	Baseline *BaselineResult `json:"baseline,omitempty"`
	// Seed is the seed of every random choice of the run (--seed; chosen
	// and printed when not given): the same seed reproduces them. Zero in
	// reports written before seeds were recorded, and in a merged report
	// whose parts had different seeds (Seeds lists them).
	Seed uint64 `json:"seed,omitempty"`
	// Seeds lists the different seeds of the parts of a merged report.
	Seeds []uint64 `json:"seeds,omitempty"`
	// Repeat is how many times each check was run (--repeat; 0 or 1: once).
	Repeat int `json:"repeat,omitempty"`
}

// RetryClass says how a client may retry a call of one tool after losing its
// response.
type RetryClass string

// The three retry classes of the seeds' reliability review.
const (
	// Safe tools are read-only: retry freely.
	Safe RetryClass = "Safe"
	// Conditional tools are keyed mutations: retry with the same key.
	Conditional RetryClass = "Conditional"
	// Unsafe tools mutate without a key: do not retry, reconcile first.
	Unsafe RetryClass = "Unsafe"
)

// ToolClass is one row of the retry-class table.
type ToolClass struct {
	// Target names the target that exposes the tool.
	Target string `json:"target"`
	// Tool is the tool's name as tools/list gives it.
	Tool string `json:"tool"`
	// Class is the retry class.
	Class RetryClass `json:"class"`
	// Key is the idempotency key argument, for Conditional tools.
	Key string `json:"key,omitempty"`
	// Evidence lists what the class was decided from (annotations seen in
	// tools/list, the manifest's roles, IDEM check verdicts).
	Evidence []string `json:"evidence,omitempty"`
}

// Tool names the harness that produced a report.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Target describes the server under test as the run saw it.
type Target struct {
	Name            string `json:"name"`
	Transport       string `json:"transport"`
	ProtocolVersion string `json:"protocolVersion"`
	Command         string `json:"command,omitempty"`
	URL             string `json:"url,omitempty"`
	Mutant          string `json:"mutant,omitempty"`
	// Versions says, per transport, which protocol versions the server
	// accepted (its checks ran in them) and which it refused (not
	// checked), with the reason.
	Versions []TargetVersion `json:"versions,omitempty"`
	// UnderTest is UnderTestClient when the report grades a client
	// (`mcp-conform client`): the transcripts' client lane is then the
	// program under test and the server lane mcp-conform's. Empty: a
	// server is under test.
	UnderTest string `json:"underTest,omitempty"`
}

// VersionStatus says whether a server accepted a protocol version.
type VersionStatus string

// The two answers a server gives to a version.
const (
	// Accepted: the negotiation settled on the version.
	Accepted VersionStatus = "accepted"
	// Refused: the server refused the version (server/discover did not
	// list it, or initialize answered another version).
	Refused VersionStatus = "refused"
)

// TargetVersion is one protocol version on one transport of the target.
type TargetVersion struct {
	// Target names the target, in a report merged from runs of several
	// targets (else empty).
	Target          string        `json:"target,omitempty"`
	Transport       string        `json:"transport"`
	ProtocolVersion string        `json:"protocolVersion"`
	Status          VersionStatus `json:"status"`
	// Reason is why the version was refused.
	Reason string `json:"reason,omitempty"`
}

// UnderTestClient is Target.UnderTest of a report on an MCP client.
const UnderTestClient = "client"

// Check is the result of one check against the target.
type Check struct {
	ID     string   `json:"id"`
	Title  string   `json:"title"`
	Level  Level    `json:"level"`
	Status Status   `json:"status"`
	Reason string   `json:"reason,omitempty"`
	Spec   []string `json:"spec"`
	Clause string   `json:"clause,omitempty"`
	// Target names the target the check ran against, in a report merged
	// from runs of several targets (else empty: the report's target).
	Target string `json:"target,omitempty"`
	// Clauses are the ids of docs/CLAUSES.md the check enforces.
	Clauses []string `json:"clauses,omitempty"`
	// Source is where the clause comes from: "spec" (a sentence of the
	// specification, in ProtocolVersion), "manifest" (a contract the target
	// declared) or "reading" (mcp-conform's reading of good practice).
	Source Source `json:"source,omitempty"`
	// Transport is the transport the check ran on ("stdio", "http").
	Transport string `json:"transport,omitempty"`
	// ProtocolVersion is the version the check ran in.
	ProtocolVersion string  `json:"protocolVersion,omitempty"`
	DurationMs      float64 `json:"durationMs"`
	// TargetMs is how much of DurationMs at least one request of the
	// check was waiting on the target (sent, its answer not yet back, on
	// any connection); the rest is the harness's own waits and work.
	// Omitted when no request was answered or pending (a SKIP).
	TargetMs float64 `json:"targetMs,omitempty"`
	// Transcript is the evidence: every message and fault of the check, in
	// order. It is always kept for FAIL, WARN and ERROR.
	Transcript []Entry `json:"transcript,omitempty"`
	// Expected is the baseline's reason when this FAIL or WARN is listed
	// as an expected failure: it does not count toward the exit code.
	Expected string `json:"expected,omitempty"`
	// MissingRole names the role of the target manifest whose absence
	// made the check SKIP ("slow", "mutation", ...): the checks a drafted
	// manifest (mcp-conform init) would unlock. The JSON report fills it
	// from the reason the harness gives (MissingRoleReason) when unset.
	MissingRole string `json:"missingRole,omitempty"`
	// Flaky marks a check of a --repeat run whose verdict was not the same
	// in every run. Status, Reason and Transcript are then those of its
	// worst run (ERROR, FAIL, WARN, SKIP, PASS, in that order), so a flaky
	// check gates CI as its worst verdict does; Runs has every run.
	Flaky bool `json:"flaky,omitempty"`
	// Runs are the verdicts of each run of the check, in order, in a
	// --repeat run (else empty).
	Runs []CheckRun `json:"runs,omitempty"`
}

// CheckRun is one run of a check in a --repeat run.
type CheckRun struct {
	Status     Status  `json:"status"`
	Reason     string  `json:"reason,omitempty"`
	DurationMs float64 `json:"durationMs"`
}

// severity orders verdicts from best to worst: PASS, SKIP, WARN, FAIL,
// ERROR.
func severity(s Status) int {
	switch s {
	case Pass:
		return 0
	case Skip:
		return 1
	case Warn:
		return 2
	case Fail:
		return 3
	case Error:
		return 4
	}
	return 5
}

// Worse reports whether verdict a is worse than b (ERROR, FAIL, WARN,
// SKIP, PASS, worst first).
func Worse(a, b Status) bool { return severity(a) > severity(b) }

// Entry is one line of a transcript: a message that crossed the proxy, a fault
// the proxy applied, a line the server wrote on stderr, or a note from the
// check itself.
type Entry struct {
	// AtMs is the monotonic time since the link started, in milliseconds.
	AtMs float64 `json:"atMs"`
	// Kind is "message", "fault", "stderr", "process" or "note".
	Kind string `json:"kind"`
	// Dir is "c2s" (client to server) or "s2c" for messages and faults.
	Dir string `json:"dir,omitempty"`
	// Seq is the proxy's sequence number of the message an entry is about
	// (a message, or a fault acting on it); it ties a fault to its message.
	Seq int64 `json:"seq,omitempty"`
	// Rule and Fault name the rule and fault that acted, for fault entries.
	Rule  string `json:"rule,omitempty"`
	Fault string `json:"fault,omitempty"`
	// Outcome is what became of the message, for fault entries and
	// synthetic messages: delivered, dropped, held, released, duplicated,
	// injected, replaced, cut, reset or answered (the proxy's
	// faultproxy.Outcome). Empty in transcripts recorded before the proxy
	// wrote it.
	Outcome string `json:"outcome,omitempty"`
	// OnProcess marks fault entries of faults that act on the server
	// process (crash, pause).
	OnProcess bool `json:"onProcess,omitempty"`
	// Raw is the message exactly as it crossed, as JSON when it parses and as
	// a string otherwise (see Text).
	Raw json.RawMessage `json:"raw,omitempty"`
	// Text holds bytes that are not JSON (stderr lines, garbage on stdout)
	// and free-form notes.
	Text string `json:"text,omitempty"`
	// Stream names the HTTP exchange ("POST#3") on Streamable HTTP.
	Stream string `json:"stream,omitempty"`
	// HTTP is the request or response head, for "http" entries.
	HTTP *HTTPHead `json:"http,omitempty"`
}

// HTTPHead is an HTTP request line or status with its headers (secrets
// redacted).
type HTTPHead struct {
	Method string              `json:"method,omitempty"`
	Path   string              `json:"path,omitempty"`
	Status int                 `json:"status,omitempty"`
	Header map[string][]string `json:"header,omitempty"`
}

// Summary counts the checks by status.
type Summary struct {
	Pass  int `json:"pass"`
	Fail  int `json:"fail"`
	Warn  int `json:"warn"`
	Skip  int `json:"skip"`
	Error int `json:"error"`
	// Flaky counts the checks, among the others, whose verdict changed
	// between the runs of a --repeat run.
	Flaky int `json:"flaky,omitempty"`
}

// Summarize counts the statuses of checks.
func Summarize(checks []Check) Summary {
	var s Summary
	for _, c := range checks {
		switch c.Status {
		case Pass:
			s.Pass++
		case Fail:
			s.Fail++
		case Warn:
			s.Warn++
		case Skip:
			s.Skip++
		case Error:
			s.Error++
		}
		if c.Flaky {
			s.Flaky++
		}
	}
	return s
}

// ExitCode is the process exit code a CI can gate on: 2 when the harness
// could not run a check (ERROR), 1 when a MUST failed (or a SHOULD warned and
// strict is set), 0 otherwise.
func ExitCode(s Summary, strict bool) int {
	switch {
	case s.Error > 0:
		return 2
	case s.Fail > 0:
		return 1
	case strict && s.Warn > 0:
		return 1
	}
	return 0
}

package reliable

import "slices"

// Defect is one deliberate bug of the reliable client: the client mutants
// that prove each CLIENT check of `mcp-conform client` can fail (as the
// reference server's mutants prove the server checks). The zero Defect is
// the correct client. A Defect is set in Options, Stdio, HTTP, ServerOptions
// or HTTPClientOptions; each part acts only on the defects that live in it.
type Defect string

// The defects. Their names are a stable contract (scripts and the client
// mutant matrix use them).
const (
	// NoDefect is the correct client.
	NoDefect Defect = ""

	// Timeouts and cancellation.
	NoCancelOnTimeout  Defect = "no-cancel-on-timeout"
	WrongCancelSignal  Defect = "wrong-cancel-signal"
	OneClock           Defect = "one-clock"
	ProgressIgnored    Defect = "progress-ignored"
	HeartbeatResets    Defect = "heartbeat-resets-idle"
	AcceptLateResponse Defect = "accept-late-response"
	CancelWrongID      Defect = "cancel-wrong-id"
	CancelInitialize   Defect = "cancel-initialize"

	// Retries and reconnection.
	NewKeyOnRetry  Defect = "new-key-on-retry"
	BlindRetry     Defect = "blind-retry"
	NoJitter       Defect = "no-jitter"
	NoResume       Defect = "no-resume"
	IgnoreSSERetry Defect = "ignore-sse-retry"
	ReissueSameID  Defect = "reissue-same-id"
	NoReinitOn404  Defect = "no-reinit-on-404"

	// Headers and hygiene.
	NoProtocolVersionHeader Defect = "no-protocol-version-header"
	NoMethodHeaders         Defect = "no-method-headers"
	SharedProgressToken     Defect = "shared-progress-token"
	ReuseRequestID          Defect = "reuse-request-id"
	RequestBeforeInitialize Defect = "request-before-initialize"
	IgnorePing              Defect = "ignore-ping"
	SigtermFirst            Defect = "sigterm-first"
)

// DefectInfo describes one defect: the check of `mcp-conform client` that
// must catch it, and what it does.
type DefectInfo struct {
	Name Defect
	// Breaks is the CLIENT check id the defect breaks.
	Breaks string
	// Description says what the defective client does.
	Description string
}

// defects is the one table of the client's deliberate bugs.
var defects = []DefectInfo{
	{NoCancelOnTimeout, "CLIENT-TIMEOUT-CANCEL", "when a clock expires it stops waiting but sends no cancellation (no notifications/cancelled, the HTTP stream left open)"},
	{WrongCancelSignal, "CLIENT-HTTP-NO-CANCEL-NOTIFICATION", "on Streamable HTTP it cancels with the other era's signal: in 2026-07-28 it POSTs notifications/cancelled and leaves the stream open; in 2025 it closes the response stream instead of sending notifications/cancelled (CLIENT-TIMEOUT-CANCEL)"},
	{OneClock, "CLIENT-MAX-TIMEOUT", "one clock only: the idle clock, reset by every progress notification; no maximum timeout"},
	{ProgressIgnored, "CLIENT-PROGRESS-RESETS-IDLE", "progress notifications do not reset the idle clock: a call that reports progress times out at the idle timeout"},
	{HeartbeatResets, "CLIENT-HEARTBEAT-NO-RESET", "an SSE comment (a transport heartbeat) resets the idle clock, as progress does"},
	{AcceptLateResponse, "CLIENT-LATE-RESPONSE-IGNORED", "after its timeout it waits for a late response and returns it as the call's outcome"},
	{CancelWrongID, "CLIENT-CANCEL-VALID", "notifications/cancelled names a request id it never sent (the call's id + 1000)"},
	{CancelInitialize, "CLIENT-NO-CANCEL-INITIALIZE", "when initialize times out it sends notifications/cancelled for it"},
	{NewKeyOnRetry, "CLIENT-RETRY-SAME-KEY", "a retry of a keyed mutation carries a fresh idempotency key"},
	{BlindRetry, "CLIENT-NO-BLIND-RETRY", "an unsafe mutation (no key, not read-only) is retried like a read after its response was lost"},
	{NoJitter, "CLIENT-HERD-JITTER", "reconnects and retries at once: no backoff, no jitter"},
	{NoResume, "CLIENT-RESUME-LAST-EVENT-ID", "a broken 2025 SSE stream is not resumed with GET and Last-Event-ID: the request is re-sent under a new id instead"},
	{IgnoreSSERetry, "CLIENT-RESUME-RETRY-WAIT", "resumes a broken SSE stream without waiting the milliseconds of its retry field"},
	{ReissueSameID, "CLIENT-REISSUE-NEW-ID", "a request re-issued after its stream broke reuses the lost request's id"},
	{NoReinitOn404, "CLIENT-REINIT-ON-404", "an HTTP 404 to a request carrying Mcp-Session-Id fails the request; no new initialize"},
	{NoProtocolVersionHeader, "CLIENT-PROTOCOL-VERSION-HEADER", "HTTP requests carry no MCP-Protocol-Version header"},
	{NoMethodHeaders, "CLIENT-METHOD-HEADERS", "2026-07-28 HTTP requests carry no Mcp-Method or Mcp-Name header"},
	{ReuseRequestID, "CLIENT-ID-UNIQUE", "every call after the first is sent under the first call's request id, so two calls in flight share one id"},
	{SharedProgressToken, "CLIENT-PROGRESS-TOKEN-UNIQUE", "every call carries the same progress token, so two calls in flight share it"},
	{RequestBeforeInitialize, "CLIENT-NO-REQUEST-BEFORE-INIT", "sends tools/list before initialize (2025): a request before the initialize result"},
	{IgnorePing, "CLIENT-PING-ANSWERED", "never answers the server's ping requests"},
	{SigtermFirst, "CLIENT-STDIO-SHUTDOWN", "shuts a stdio server down with SIGTERM first, closing its stdin only afterwards"},
}

// Defects returns the table of defects, in a stable order.
func Defects() []DefectInfo { return slices.Clone(defects) }

// ValidDefect reports whether d is NoDefect or one of Defects.
func ValidDefect(d Defect) bool {
	if d == NoDefect {
		return true
	}
	for _, x := range defects {
		if x.Name == d {
			return true
		}
	}
	return false
}

package clientsuite

// Spec pages.
const (
	pageLifecycle  = "specification/VERSION/basic/lifecycle.mdx"
	pageTransports = "specification/VERSION/basic/transports.mdx"
	pageCancel25   = "specification/VERSION/basic/utilities/cancellation.mdx"
	pageCancel26   = "specification/2026-07-28/basic/patterns/cancellation.mdx"
	pageBasic      = "specification/VERSION/basic/index.mdx"
	pageProgress25 = "specification/VERSION/basic/utilities/progress.mdx"
	pageProgress26 = "specification/2026-07-28/basic/patterns/progress.mdx"
	pagePing       = "specification/VERSION/basic/utilities/ping.mdx"
	pageStdio26    = "specification/2026-07-28/basic/transports/stdio.mdx"
	pageHTTP26     = "specification/2026-07-28/basic/transports/streamable-http.mdx"
	pageChangelog  = "specification/2026-07-28/changelog.mdx"
	// seedLesson is the French lesson: the request coordinator, the retry
	// matrix, the failure-mode table.
	seedLesson = "seeds/000_a0534be125a2219a.txt"
)

// withTransports narrows a rule to transports.
func withTransports(r Rule, trs ...string) Rule {
	r.Transports = trs
	return r
}

func spec(word, clause, page string, ids ...string) Rule {
	return Rule{Level: levelOf(word), Word: word, Clause: clause, Spec: page, Source: SourceSpec, Clauses: ids}
}

func seed(word, clause string) Rule {
	return Rule{Level: levelOf(word), Word: word, Clause: clause + " (the seeds' reading: the specification is silent)", Spec: seedLesson, Source: SourceSeed}
}

// Notes the stdio server (mcp-conform serve-scenario) and the grader write
// into a stdio run's transcript.
const (
	NoteServerStart = "mcp-conform serve-scenario: server process"
	NoteStdinClosed = "mcp-conform serve-scenario: the client closed the server's stdin"
	NoteSignal      = "mcp-conform serve-scenario: signal"
	NoteEnd         = "mcp-conform serve-scenario: ending"
	NoteKilled      = "mcp-conform serve-scenario: the server process ended without a word"
)

// The catalog, in the order of list and reports: the scenario checks by
// scenario, then the hygiene checks.
func init() {
	for _, c := range []*Check{checkPing, checkNoCancelInit, checkTimeoutCancel, checkHTTPNoCancelNotification, checkLateResponse, checkProgressResetsIdle, checkMaxTimeout,
		checkHeartbeat, checkRetrySameKey, checkNoBlindRetry, checkResume, checkResumeRetryWait, checkReissue, checkReinit404, checkHerd,
		checkIDUnique, checkTokenUnique, checkCancelValid, checkNoRequestBeforeInit, checkVersionHeader,
		checkMethodHeaders, checkStdioShutdown} {
		register(c)
	}
}

// HygieneChecks are the checks judged on every run.
func HygieneChecks() []*Check {
	var out []*Check
	for _, c := range catalog {
		if c.Hygiene() {
			out = append(out, c)
		}
	}
	return out
}

// ScenarioChecks are the checks judged on runs of scenario name.
func ScenarioChecks(name string) []*Check {
	var out []*Check
	for _, c := range catalog {
		if c.Scenario == name {
			out = append(out, c)
		}
	}
	return out
}

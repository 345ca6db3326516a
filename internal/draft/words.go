package draft

import (
	"slices"
	"strings"
	"unicode"
)

// words splits an identifier into lower-case words: "stepMs" → step ms,
// "idempotency_key" → idempotency key, "HTTPTimeout" → http timeout.
func words(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
			continue
		case unicode.IsUpper(r) && len(cur) > 0:
			prevLower := unicode.IsLower(cur[len(cur)-1]) || unicode.IsDigit(cur[len(cur)-1])
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if prevLower || nextLower && unicode.IsUpper(cur[len(cur)-1]) {
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return out
}

// hasWord reports whether any of ws is one of want.
func hasWord(ws []string, want ...string) bool {
	for _, w := range ws {
		if slices.Contains(want, w) {
			return true
		}
	}
	return false
}

// mentions reports whether text (lower case) contains any of the phrases.
func mentions(text string, phrases ...string) bool {
	for _, p := range phrases {
		if strings.Contains(text, p) {
			return true
		}
	}
	return false
}

// Word lists of the heuristics. Each is matched against the words of a
// name (words), never against substrings, so "items" is not "ms".
var (
	// msWords and secWords name a time unit.
	msWords  = []string{"ms", "msec", "msecs", "millis", "millisecond", "milliseconds"}
	secWords = []string{"s", "sec", "secs", "second", "seconds"}
	// timeWords name a duration whose unit comes from elsewhere.
	timeWords = []string{"duration", "delay", "sleep", "wait", "interval", "period", "pause", "latency"}
	// perStepWords make a duration one step's, not the whole call's.
	perStepWords = []string{"step", "per", "each", "interval", "tick", "period"}
	// stepsWords count steps.
	stepsWords = []string{"steps", "step", "stages", "iterations", "ticks", "rounds", "chunks"}
	// notDuration disqualifies a time-like name: a timeout bounds work,
	// it does not make it last.
	notDuration = []string{"timeout", "deadline", "ttl", "expiry", "expires", "at", "timestamp", "date", "since", "until"}
	// slowNameWords make a tool look long-running.
	slowNameWords = []string{"slow", "long", "sleep", "wait", "delay", "progress", "operation", "job", "work"}
	// countWords count messages (the flood role).
	countWords = []string{"count", "n", "num", "number", "messages", "notifications", "events", "total", "burst"}
	// padWords size each message.
	padWords = []string{"pad", "padding", "size", "bytes", "payload"}
	// floodWords make a tool look like a flood of progress.
	floodWords = []string{"flood", "burst", "firehose", "stress", "spam", "storm"}
	// silentWords make a tool look silent on purpose (the silent role).
	silentWords = []string{"silent", "quiet", "heartbeat", "keepalive", "idle"}
	// tagWords label a call for an instrumented probe.
	tagWords = []string{"tag", "label", "marker"}
	// statsWords make a read-only tool look like a counter (the probe).
	statsWords = []string{"stats", "statistics", "count", "counts", "counter", "counters", "metrics", "executions", "tally", "total", "totals", "usage"}
	// lookupWords make a read-only tool look like a lookup by key.
	lookupWords = []string{"lookup", "get", "find", "fetch", "status", "reconcile", "show", "read", "query", "describe", "retrieve", "check"}
	// probeWords name an instrumented probe of tagged calls.
	probeWords = []string{"probe", "trace", "inspect", "track", "tracker"}
	// taskWords make a task-capable tool look meant for tasks.
	taskWords = []string{"research", "task", "job", "long", "batch", "export", "report", "simulate"}
)

// strongKeys are the names (norm) of arguments that carry an idempotency
// key for sure.
var strongKeys = []string{
	"idempotencykey", "idempotencytoken", "idempotencyid", "idempotentkey",
	"operationkey", "operationid", "requestid", "clientrequestid", "clientoperationid",
	"dedupkey", "dedupekey", "deduplicationkey", "deduplicationid", "dedupid",
	"idemkey", "opkey", "clienttoken", "requesttoken", "transactionkey", "uniquekey",
}

// countFields are, best first, the names of a probe's count of executions.
var countFields = []string{"executions", "executioncount", "execution_count", "count", "calls", "runs", "times", "effects", "total", "n"}

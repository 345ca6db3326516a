package clientsuite

import (
	"encoding/json"
	"fmt"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// ---- retries ----

var checkRetrySameKey = &Check{
	ID:    "CLIENT-RETRY-SAME-KEY",
	Title: "after a lost response, a keyed mutation is retried with the same key and arguments and a new id",
	How: "retry-keyed: the client calls create_support_ticket (keyed by operation_key); the proxy loses every answer to the first call. " +
		"Every later call of the tool must carry byte-for-byte the same arguments (the key included) under an id not used before. " +
		"SKIP when the client does not retry.",
	Rules:      sameRule(seed("MUST", "Conditional (a mutation with a durable idempotency key): retry with the same key and identical arguments; a new JSON-RPC id is not idempotency."), Versions...),
	Transports: allTransports,
	Scenario:   "retry-keyed",
	judge: func(r *Run) (Finding, string) {
		calls, why := callsAfterLoss(r)
		if calls == nil {
			return Unjudgeable, why
		}
		if len(calls) == 1 {
			o, _ := outcomeOf(r, r.Params.Tool)
			return NotApplicable, fmt.Sprintf("the client did not retry after losing the answer (one attempt; outcome %q)", o.Outcome)
		}
		key := r.Params.Retry.Key
		first := arguments(calls[0])
		seen := map[jsonrpc.ID]bool{}
		for _, m := range r.View().ClientRequests() {
			if m.Index < calls[1].Index {
				seen[m.Env.ID] = true
			}
		}
		for i, c := range calls[1:] {
			if got := arguments(c); got != first {
				return Broken, fmt.Sprintf("retry %d (id %s) changed the arguments: %s %s → %s (a new key makes the retry a new operation)",
					i+1, idText(c.Env.ID), key, argField(calls[0], key), argField(c, key))
			}
			if seen[c.Env.ID] {
				return Broken, fmt.Sprintf("retry %d reused the id %s of an earlier request", i+1, idText(c.Env.ID))
			}
			for _, m := range r.View().ClientRequests() {
				if m.Index < c.Index {
					seen[m.Env.ID] = true
				}
			}
		}
		return Held, fmt.Sprintf("%d retr%s with the same arguments (%s %s) under new ids", len(calls)-1, plural(len(calls)-1, "y", "ies"), key, argField(calls[0], key))
	},
}

// callsAfterLoss returns the client's calls of the scenario's tool when the
// proxy lost the answer to the first; else nil and why the run cannot be
// judged.
func callsAfterLoss(r *Run) ([]*Msg, string) {
	calls := r.View().ToolCalls(r.Params.Tool)
	if len(calls) == 0 {
		return nil, "the client never called " + r.Params.Tool + clientExit(r)
	}
	if !lostAnswer(r, calls[0]) {
		return nil, "the proxy did not lose the first call's answer (it never came?)"
	}
	return calls, ""
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func argField(m *Msg, key string) string {
	var args map[string]json.RawMessage
	_ = json.Unmarshal(params(m)["arguments"], &args)
	if v, ok := args[key]; ok {
		return string(v)
	}
	return "(absent)"
}

var checkNoBlindRetry = &Check{
	ID:    "CLIENT-NO-BLIND-RETRY",
	Title: "an unsafe mutation (no key, not read-only) is not retried blindly after its response was lost",
	How: "retry-unsafe: the client calls append_note (not read-only, not idempotent, no key); the proxy loses the answer. " +
		"The client must not send the same call again (it may reconcile, or report the outcome as unknown). Not run on 2026-07-28 HTTP, " +
		"where the specification makes a client re-issue a request whose stream broke.",
	Rules: merge(
		sameRule(seed("MUST NOT", "Unsafe (a mutation without business deduplication): do not retry automatically; reconcile first. Do not replay an unsafe mutation just because its response was lost."), legacyVersions...),
		map[string]Rule{V20260728: withTransports(seed("MUST NOT", "Unsafe (a mutation without business deduplication): do not retry automatically; reconcile first. [2026-07-28 Streamable HTTP is left out: its changelog makes a client re-issue a request whose stream broke]"), Stdio)},
	),
	Transports: allTransports,
	Scenario:   "retry-unsafe",
	judge: func(r *Run) (Finding, string) {
		calls, why := callsAfterLoss(r)
		if calls == nil {
			return Unjudgeable, why
		}
		for _, c := range calls[1:] {
			if arguments(c) == arguments(calls[0]) {
				return Broken, fmt.Sprintf("after losing the answer to %s (id %s) the client sent it again (id %s, %s later): an unsafe mutation retried blindly",
					r.Params.Tool, idText(calls[0].Env.ID), idText(c.Env.ID), msOf(c.At-calls[0].At))
			}
		}
		o, _ := outcomeOf(r, r.Params.Tool)
		return Held, fmt.Sprintf("one attempt of %s; the client reported %q", r.Params.Tool, orDash(o.Outcome))
	},
}

func orDash(s string) string {
	if s == "" {
		return "no outcome"
	}
	return s
}

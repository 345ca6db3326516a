package suites

import (
	"fmt"
	"strings"

	"github.com/mcp-conform/mcp-conform/reports"
)

// taskIDSamples is how many tasks TASK-ID-ENTROPY creates.
const taskIDSamples = 9

var checkTaskIDEntropy = register(&Check{
	ID:    "TASK-ID-ENTROPY",
	Title: "over stdio, where no authorization context binds a task, task ids are cryptographically secure: not guessable",
	How: fmt.Sprintf("Over stdio (the authorization spec does not apply to it: a stdio task is bound to no authorization "+
		"context), creates %d tasks with the task role and estimates the entropy of their taskIds as SECURITY-SESSION-ENTROPY "+
		"does for session ids (the positions that vary between the samples × the bits of the smallest usual alphabet holding "+
		"them). Fewer than %d bits — a counter, a clock, a short random — lets another requestor guess a task id: FAIL.",
		taskIDSamples, minSessionBits),
	Rules: map[string]Rule{
		v20251125: {Level: reports.Must, Spec: tasksLegacy,
			Clause: "If context-binding is unavailable, receivers MUST generate cryptographically secure task IDs with enough entropy to prevent guessing and should consider using shorter TTL durations to reduce the exposure window."},
	},
	Transports: []string{viaStdio},
	Roles:      []string{"task"},
	Clauses:    []string{"task#34"},
})

func taskIDEntropy(h *H) {
	t := tasks(h)
	ids := make([]string, 0, taskIDSamples)
	for range taskIDSamples {
		s, _ := t.create()
		ids = append(ids, s.ID)
	}
	bits, alphabet := estimateBits(ids)
	sample := strings.Join(ids[:3], ", ")
	if bits < minSessionBits {
		h.Failf("task ids carry about %.0f bits (want ≥ %d): %d of %d characters vary between %d samples, alphabet %s; e.g. %s — "+
			"guessable by another requestor, and nothing binds a stdio task to an authorization context",
			bits, minSessionBits, varying(ids), len(ids[0]), len(ids), alphabet, sample)
	}
	h.Notef("%d task ids, about %.0f bits each (alphabet %s)", len(ids), bits, alphabet)
}

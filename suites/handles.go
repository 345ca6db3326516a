package suites

// 2026-07-28 security best practices, "State Handle Hijacking": a server
// that keeps state across requests mints an explicit handle (a cart id, a
// workflow id) and takes it back as an ordinary tool argument. The handle
// role of the manifest names such a pair: its tool mints a handle (the
// member field of the structured result), use takes it back as param.
//
//	harness ──tools/call TOOL (×9)──▶ server ──▶ handles h1…h9 (field)
//	        ──tools/call USE {param: hi}──▶ accepted (each is a live handle)
//	        estimate the bits that vary between h1…h9

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/reports"
)

// handleSamples is how many handles HANDLE-ENTROPY mints.
const handleSamples = 9

var checkHandleEntropy = register(&Check{
	ID:    "HANDLE-ENTROPY",
	Title: "2026-07-28: the state handles a server mints are secure random, not predictable or sequential",
	How: fmt.Sprintf("2026-07-28, stdio and Streamable HTTP; needs the manifest's handle role (the level comes from that "+
		"declared contract: the role says its tool mints a state handle that its use tool takes back). Calls the role's tool "+
		"%d times, reads the handle from each result's structured member field, and calls use with each handle as param "+
		"(each must be accepted: otherwise the role does not work as declared, ERROR). Then estimates the entropy of the "+
		"handles as SECURITY-SESSION-ENTROPY does for session ids (the positions that vary between the samples × the bits "+
		"of the smallest usual alphabet holding them). Fewer than %d bits — a counter, a clock, a short random — or two equal "+
		"handles WARNs (secure, non-deterministic handles from a secure random number generator: SHOULD).",
		handleSamples, minSessionBits),
	Rules: sameRule(Rule{Level: reports.Should, Spec: bestPractices,
		Clause: "MCP servers SHOULD use secure, non-deterministic handles generated with secure random number generators. Avoid predictable or sequential identifiers that could be guessed by an attacker."},
		v20260728),
	Transports: []string{viaStdio, viaHTTP},
	Roles:      []string{"handle"},
	Clauses:    []string{"sec#10"},
})

func registerHandles() {
	ginkgo.Describe("SECURITY state handles (2026-07-28)", ginkgo.Label("area:security"), func() {
		define(checkHandleEntropy, handleEntropy)
	})
}

// mintHandle calls the handle role's tool on e and returns the handle it
// minted; a refusal, or a result without the declared member, is an ERROR
// (the role does not work as declared).
func mintHandle(h *H, e *endpoint) string {
	r := h.Role("handle")
	o := idemCall(h, e, e.NewID(), r.Tool, r.Arguments, "mint a handle with "+r.Tool)
	if o.Failed() {
		h.Errorf("the handle role's tool %s refused the call, so the check cannot run: %s", r.Tool, clip(o.Msg.Raw))
	}
	var out map[string]json.RawMessage
	var handle string
	if json.Unmarshal(o.Structured, &out) != nil || json.Unmarshal(out[r.Field], &handle) != nil || handle == "" {
		h.Errorf("the result of %s has no string member %q (the handle role's field): %s", r.Tool, r.Field, clip(o.Msg.Raw))
	}
	return handle
}

// useHandle calls the handle role's use tool with handle as its param.
func useHandle(h *H, e *endpoint, handle string) ToolOutcome {
	r := h.Role("handle")
	return idemCall(h, e, e.NewID(), r.Use, map[string]any{r.Param: handle}, "use a handle with "+r.Use)
}

func handleEntropy(h *H) {
	e := idemConnect(h)
	r := h.Role("handle")
	ids := make([]string, 0, handleSamples)
	for range handleSamples {
		id := mintHandle(h, e)
		if o := useHandle(h, e, id); o.Failed() {
			h.Errorf("%s refused the handle %q that %s just minted for the same caller, so the role does not work as declared: %s",
				r.Use, id, r.Tool, clip(o.Msg.Raw))
		}
		ids = append(ids, id)
	}
	seen := map[string]int{}
	for i, id := range ids {
		if j, dup := seen[id]; dup {
			h.Warnf("calls %d and %d of %s minted the same handle %q", j+1, i+1, r.Tool, id)
		}
		seen[id] = i
	}
	bits, alphabet := estimateBits(ids)
	sample := strings.Join(ids[:3], ", ")
	if bits < minSessionBits {
		h.Warnf("the handles of %s carry about %.0f bits (want ≥ %d): %d of %d characters vary between %d samples, alphabet %s; "+
			"e.g. %s — predictable or sequential, so another caller can guess one",
			r.Tool, bits, minSessionBits, varying(ids), len(ids[0]), len(ids), alphabet, sample)
	}
	h.Notef("%d handles of %s, about %.0f bits each (alphabet %s), e.g. %s; each accepted by %s", len(ids), r.Tool, bits, alphabet, sample, r.Use)
}

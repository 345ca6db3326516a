package suites

import (
	"encoding/json"
	"slices"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/reports"
)

// Lifecycle and utility checks of the wire contract (issue 12).

var checkPingEmpty = register(&Check{
	ID:    "LIFECYCLE-PING-EMPTY",
	Title: "ping is answered promptly with an empty result",
	How: "On a negotiated connection, sends ping and waits for its answer within the exchange timeout: it must be a " +
		"result (not an error) whose value is the empty object {} (a _meta member aside). 2026-07-28 removed ping " +
		"(changelog item 5), so the check runs in the 2025 versions.",
	Rules: sameRule(Rule{Level: reports.Must, Spec: "specification/VERSION/basic/utilities/ping.mdx",
		Clause: "The receiver MUST respond promptly with an empty response"}, legacyVersions...),
	Transports: []string{"stdio", "http"},
	Clauses:    []string{"ping#1"},
	Limits:     map[string]string{"ping#1": "promptness is bounded only by the exchange timeout (the page names no bound)"},
})

func registerLifecycle() {
	ginkgo.Describe("LIFECYCLE ping and handshake", ginkgo.Label("area:lifecycle"), func() {
		define(checkPingEmpty, pingEmpty)
	})
}

func pingEmpty(h *H) {
	var m json.RawMessage
	var raw []byte
	if h.Target().Transport == "http" {
		r := h.ConnectHTTP().Ping("as the first request after the handshake")
		m, raw = r.Env.Result, r.Raw
	} else {
		r := h.Connect().Ping("as the first request after the handshake")
		m, raw = r.Env.Result, r.Raw
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(m, &obj) != nil || obj == nil {
		h.Failf("ping was answered with result %s, not an object: %s", m, raw)
	}
	var extra []string
	for k := range obj {
		if k != "_meta" {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		h.Failf("ping was answered with a result that is not empty (members %v): %s", extra, raw)
	}
}

package suites

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/reports"
)

const (
	progressLegacy = "specification/VERSION/basic/utilities/progress.mdx"
	progressModern = "specification/2026-07-28/basic/patterns/progress.mdx"
)

// progressRules gives the same clause on each version's progress page.
func progressRules(level reports.Level, clause string) map[string]Rule {
	return merge(
		sameRule(Rule{Level: level, Spec: progressLegacy, Clause: clause}, legacyVersions...),
		map[string]Rule{"2026-07-28": {Level: level, Spec: progressModern, Clause: clause}},
	)
}

var (
	checkProgressToken = register(&Check{
		ID:    "PROGRESS-TOKEN-ECHO",
		Title: "progress notifications carry the request's token exactly (string and integer)",
		How: "Calls the slow role twice, with a string token and with an integer token, and compares the token " +
			"of every progress notification with the one sent, as JSON (the string \"7\" is not the number 7). " +
			"A server that sends no progress at all is not failed: the check is SKIP.",
		Rules: progressRules(reports.Must,
			"The receiver MAY then send progress notifications containing: The original progress token [...] Progress notifications MUST only reference tokens that: Were provided in an active request"),
		Transports: []string{"stdio", "websocket"},
		Roles:      []string{"slow"},
	})
	checkProgressIncreasing = register(&Check{
		ID:         "PROGRESS-INCREASING",
		Title:      "progress values strictly increase",
		How:        "Calls the slow role with a token and checks that each progress value is greater than the one before.",
		Rules:      progressRules(reports.Must, "The progress value MUST increase with each notification, even if the total is unknown."),
		Transports: []string{"stdio", "websocket"},
		Roles:      []string{"slow"},
	})
	checkProgressTotal = register(&Check{
		ID:    "PROGRESS-TOTAL-CONSTANT",
		Title: "the total of a request's progress does not change",
		How: "Calls the slow role with a token and checks that every notification that gives a total gives the same one. " +
			"The specification has no sentence on this; it is the project's reading (SHOULD): a total that moves makes progress meaningless to the user.",
		Rules: progressRules(reports.Should,
			"Progress notifications contain [...] An optional \"total\" value — mcp-conform's reading: the total, when given, describes the whole operation and stays the same."),
		Transports: []string{"stdio", "websocket"},
		Roles:      []string{"slow"},
	})
	checkProgressAfterComplete = register(&Check{
		ID:    "PROGRESS-STOP-AFTER-COMPLETE",
		Title: "no progress after the final response",
		How: "Calls the slow role with a token, waits for the response, then for two pings, and fails on any progress " +
			"for that token that arrived after the response.",
		Rules:      progressRules(reports.Must, "Progress notifications MUST stop after completion."),
		Transports: []string{"stdio", "websocket"},
		Roles:      []string{"slow"},
	})
	checkProgressAfterCancel = register(&Check{
		ID:    "PROGRESS-STOP-AFTER-CANCEL",
		Title: "no progress after the cancellation was received",
		How: "Cancels the slow call after its first progress, then sends ping: the server reads the cancellation before " +
			"the ping, so any progress for the token that arrives after the ping's answer (while an uncancelled control call " +
			"runs to completion) was sent after the server knew of the cancellation.",
		Rules: merge(
			sameRule(Rule{Level: reports.Must, Spec: progressLegacy,
				Clause: "Progress notifications MUST only reference tokens that: Were provided in an active request; Are associated with an in-progress operation"},
				legacyVersions...),
			map[string]Rule{"2026-07-28": {Level: reports.Must, Spec: stdioModern,
				Clause: "Servers SHOULD stop work on a cancelled request as soon as practical and MUST NOT send any further messages for it."}},
		),
		Transports: []string{"stdio", "websocket"},
		Roles:      []string{"slow"},
	})
)

// registerProgress declares the PROGRESS specs.
func registerProgress() {
	ginkgo.Describe("PROGRESS", ginkgo.Label("area:progress"), func() {
		define(checkProgressToken, progressTokenEcho)
		define(checkProgressIncreasing, func(h *H) { progressSeries(h, increasing) })
		define(checkProgressTotal, func(h *H) { progressSeries(h, constantTotal) })
		define(checkProgressAfterComplete, progressAfterComplete)
		define(checkProgressAfterCancel, progressAfterCancel)
	})
}

type progressParams struct {
	Token    json.RawMessage `json:"progressToken"`
	Progress *float64        `json:"progress"`
	Total    *float64        `json:"total"`
}

func readProgress(m clients.Message) progressParams {
	var p progressParams
	_ = json.Unmarshal(m.Env.Params, &p)
	return p
}

// runWithToken calls the slow role with token to completion and returns the
// progress notifications that arrived up to and including two pings after
// the response, and the response's index.
func runWithToken(c *Conn, id, token jsonrpc.ID) ([]clients.Message, int) {
	start := c.W.Len()
	p := c.StartRole("slow", id, token)
	resp := c.Await(p, "the slow call")
	c.Ping("after the slow call")
	c.Ping("after the slow call (second)")
	return c.Progress(start), resp.Seq
}

func progressTokenEcho(h *H) {
	c := h.Connect()
	tokens := []jsonrpc.ID{jsonrpc.StringID("progress-token-7"), jsonrpc.IntID(7301)}
	seen := 0
	for i, tok := range tokens {
		msgs, _ := runWithToken(c, jsonrpc.StringID(fmt.Sprintf("progress-token-call-%d", i+1)), tok)
		for _, m := range msgs {
			seen++
			if m.Env.ProgressToken != tok {
				h.Failf("progress for the request with token %s carried token %s: %s", tok, m.Env.ProgressToken, m.Raw)
			}
		}
	}
	if seen == 0 {
		h.Skip("the target sent no progress notifications (progress is optional; nothing to check)")
	}
	h.Notef("%d progress notifications, every token echoed exactly", seen)
}

type seriesRule func(h *H, token jsonrpc.ID, ps []progressParams, msgs []clients.Message)

func increasing(h *H, token jsonrpc.ID, ps []progressParams, msgs []clients.Message) {
	for i := 1; i < len(ps); i++ {
		if *ps[i].Progress <= *ps[i-1].Progress {
			h.Failf("progress did not increase: %v then %v (%s)", *ps[i-1].Progress, *ps[i].Progress, msgs[i].Raw)
		}
	}
}

func constantTotal(h *H, token jsonrpc.ID, ps []progressParams, msgs []clients.Message) {
	var first *float64
	for i, p := range ps {
		if p.Total == nil {
			continue
		}
		if first == nil {
			first = p.Total
			continue
		}
		if *p.Total != *first {
			h.Failf("total changed from %v to %v (%s)", *first, *p.Total, msgs[i].Raw)
		}
	}
}

// progressSeries checks a rule over the progress of one slow call.
func progressSeries(h *H, rule seriesRule) {
	c := h.Connect()
	token := jsonrpc.StringID("progress-series-token")
	msgs, _ := runWithToken(c, jsonrpc.StringID("progress-series-1"), token)
	var mine []clients.Message
	var ps []progressParams
	for _, m := range msgs {
		if m.Env.ProgressToken != token {
			continue
		}
		p := readProgress(m)
		if p.Progress == nil {
			h.Failf("progress notification without a numeric progress: %s", m.Raw)
		}
		mine = append(mine, m)
		ps = append(ps, p)
	}
	if len(mine) == 0 {
		if len(msgs) > 0 {
			h.Skip(fmt.Sprintf("no progress notification carried the request's token (%d carried others; see PROGRESS-TOKEN-ECHO)", len(msgs)))
		}
		h.Skip("the target sent no progress notifications (progress is optional; nothing to check)")
	}
	rule(h, token, ps, mine)
	h.Notef("%d progress notifications checked", len(mine))
}

func progressAfterComplete(h *H) {
	c := h.Connect()
	token := jsonrpc.StringID("after-complete-token")
	msgs, respSeq := runWithToken(c, jsonrpc.StringID("after-complete-1"), token)
	var late []string
	for _, m := range msgs {
		if m.Seq > respSeq && m.Env.ProgressToken == token {
			late = append(late, string(m.Raw))
		}
	}
	if len(late) > 0 {
		h.Failf("%d progress notification(s) after the final response: %s", len(late), strings.Join(late, "; "))
	}
	if len(msgs) == 0 {
		h.Notef("the target sent no progress (allowed)")
	}
}

func progressAfterCancel(h *H) {
	c := h.Connect()
	token := jsonrpc.StringID("after-cancel-token")
	_, _, sawProgress := cancelInFlight(h, c, "after-cancel", token)
	if !sawProgress {
		h.Skip("the target sent no progress for the request's token (progress is optional; nothing to check)")
	}
	barrier := c.Ping("after the cancellation")
	ctrl := c.StartRole("slow", jsonrpc.StringID("after-cancel-control"), nil)
	c.Await(ctrl, "uncancelled control call")
	c.Ping("after the control call")
	var late []string
	for _, m := range c.Progress(barrier.Seq + 1) {
		if m.Env.ProgressToken == token {
			late = append(late, string(m.Raw))
		}
	}
	if len(late) > 0 {
		h.Failf("%d progress notification(s) for the cancelled request after the server had read the cancellation: %s", len(late), strings.Join(late, "; "))
	}
}

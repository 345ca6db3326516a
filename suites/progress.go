package suites

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/reports"
)

// progressRules gives the same clause on each version's progress page.
func progressRules(level reports.Level, clause string) map[string]Rule {
	return merge(
		sameRule(Rule{Level: level, Spec: progressLegacy, Clause: clause}, legacyVersions...),
		map[string]Rule{v20260728: {Level: level, Spec: progressModern, Clause: clause}},
	)
}

// progressTransports are the transports of the PROGRESS checks: their
// clauses bind every transport. Over Streamable HTTP in the 2025 versions a
// server may send a request's progress on the standalone GET stream, so the
// checks hold one open and judge every stream.
var progressTransports = []string{viaStdio, viaHTTP, viaWebSocket}

var checkProgressToken = register(&Check{
	ID:    "PROGRESS-TOKEN-ECHO",
	Title: "progress notifications carry the request's token exactly (string and integer)",
	How: "Calls the slow role twice, with a string token and with an integer token, and compares the token " +
		"of every progress notification with the one sent, as JSON (the string \"7\" is not the number 7). " +
		"A server that sends no progress at all is not failed: the check is SKIP. Over HTTP every stream is read " +
		"(2025: the standalone GET stream is held open).",
	Rules: progressRules(reports.Must,
		"The receiver MAY then send progress notifications containing: The original progress token [...] Progress notifications MUST only reference tokens that: Were provided in an active request"),
	Transports: progressTransports,
	Roles:      []string{"slow"},
})

var checkProgressIncreasing = register(&Check{
	ID:         "PROGRESS-INCREASING",
	Title:      "progress values strictly increase",
	How:        "Calls the slow role with a token and checks that each progress value, on any stream, is greater than the one before.",
	Rules:      progressRules(reports.Must, "The progress value MUST increase with each notification, even if the total is unknown."),
	Transports: progressTransports,
	Roles:      []string{"slow"},
})

var checkProgressTotal = register(&Check{
	ID:    "PROGRESS-TOTAL-CONSTANT",
	Title: "the total of a request's progress does not change",
	How: "Calls the slow role with a token and checks that every notification that gives a total gives the same one. " +
		"The specification has no sentence on this; it is the project's reading (SHOULD): a total that moves makes progress meaningless to the user.",
	Rules: merge(
		sameRule(Rule{Level: reports.Should, Spec: progressLegacy, Source: reports.SourceReading,
			Clause: "Progress notifications contain [...] An optional \"total\" value — mcp-conform's reading: the total, when given, describes the whole operation and stays the same."},
			legacyVersions...),
		map[string]Rule{v20260728: {Level: reports.Should, Spec: progressModern, Source: reports.SourceReading,
			Clause: "Progress notifications contain [...] An optional \"total\" value — mcp-conform's reading: the total, when given, describes the whole operation and stays the same."}},
	),
	Transports: progressTransports,
	Roles:      []string{"slow"},
})

var checkProgressAfterComplete = register(&Check{
	ID:    "PROGRESS-STOP-AFTER-COMPLETE",
	Title: "no progress after the final response",
	How: "Calls the slow role with a token, waits for the response, then for two barrier requests, and fails on any progress " +
		"for that token that arrived after the response, on any stream (over 2025 HTTP the standalone GET stream, held open " +
		"during the check, is where a server's late progress lands once the POST stream has closed).",
	Rules:      progressRules(reports.Must, "Progress notifications MUST stop after completion."),
	Transports: progressTransports,
	Roles:      []string{"slow"},
})

var checkProgressAfterCancel = register(&Check{
	ID:    "PROGRESS-STOP-AFTER-CANCEL",
	Title: "no progress after the cancellation was received",
	How: "Cancels the slow call after its first progress, then sends the barrier request: the server reads the cancellation before " +
		"it, so any progress for the token that arrives after the barrier's answer (while an uncancelled control call " +
		"runs to completion) was sent after the server knew of the cancellation. 2025: receivers SHOULD stop and MAY ignore a " +
		"cancellation they cannot act on, so late progress WARNs; 2026-07-28 stdio: MUST NOT send further messages (FAIL). Over " +
		"Streamable HTTP in the 2025 versions only (in 2026-07-28 closing the stream is the cancellation: CANCEL-HTTP-CLOSE).",
	Rules: merge(
		sameRule(Rule{Level: reports.Should, Spec: cancelLegacy, Also: []string{progressLegacy},
			Clause: "Receivers of cancellation notifications SHOULD: Stop processing the cancelled request [...] Receivers MAY ignore cancellation notifications if: [...] The request cannot be cancelled [progress.mdx] Progress notifications MUST only reference tokens that: Were provided in an active request; Are associated with an in-progress operation"},
			legacyVersions...),
		map[string]Rule{v20260728: {Level: reports.Must, Spec: stdioModern,
			Clause: "Servers SHOULD stop work on a cancelled request as soon as practical and MUST NOT send any further messages for it."}},
	),
	On:         map[string]map[string]Rule{viaWebSocket: {v20260728: cancelPatternShould}},
	Only:       map[string][]string{viaHTTP: legacyVersions},
	Transports: progressTransports,
	Roles:      []string{"slow"},
})

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
// the response, and the response.
func runWithToken(c msgConn, id, token jsonrpc.ID) ([]clients.Message, clients.Message) {
	start := c.length()
	p := c.startRole("slow", id, token)
	resp := c.await(p, "the slow call")
	c.ping("after the slow call")
	c.ping("after the slow call (second)")
	return progressSince(c, start), resp
}

func progressTokenEcho(h *H) {
	c := connectMsg(h)
	tokens := []jsonrpc.ID{jsonrpc.StringID("progress-token-7"), jsonrpc.IntID(7301)}
	seen := 0
	for i, tok := range tokens {
		msgs, _ := runWithToken(c, jsonrpc.StringID(fmt.Sprintf("progress-token-call-%d", i+1)), tok)
		for _, m := range msgs {
			seen++
			// Progress carrying the token of the check's earlier call is
			// that call's (late: PROGRESS-STOP-AFTER-COMPLETE judges it).
			if m.Env.ProgressToken != tok && !slices.Contains(tokens[:i], m.Env.ProgressToken) {
				h.Failf("progress for the request with token %s carried token %s: %s", tok, m.Env.ProgressToken, m.Raw)
			}
		}
	}
	if seen == 0 {
		h.Skip("the target sent no progress notifications (progress is optional; nothing to check)")
	}
	h.Notef("%d progress notifications, every token echoed exactly", seen)
}

type seriesRule func(h *H, c msgConn, ps []progressParams, msgs []clients.Message)

// crossStreamSlack is how far apart in arrival two progress notifications
// of different HTTP streams must be for their order to count: within it,
// two streams may deliver in another order than the server wrote.
const crossStreamSlack = 100 * time.Millisecond

func increasing(h *H, c msgConn, ps []progressParams, msgs []clients.Message) {
	// On one stream (always so on stdio) the order is the server's; across
	// HTTP streams only when the arrivals are well apart.
	for i := 1; i < len(ps); i++ {
		for j := i - 1; j >= 0; j-- {
			if !c.sameStream(msgs[i], msgs[j]) && msgs[i].At.Sub(msgs[j].At) < crossStreamSlack {
				continue
			}
			if *ps[i].Progress <= *ps[j].Progress {
				h.Failf("progress did not increase: %v then %v (%s)", *ps[j].Progress, *ps[i].Progress, msgs[i].Raw)
			}
			break
		}
	}
}

func constantTotal(h *H, _ msgConn, ps []progressParams, msgs []clients.Message) {
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
	c := connectMsg(h)
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
	rule(h, c, ps, mine)
	h.Notef("%d progress notifications checked", len(mine))
}

// lateOn are the messages of msgs that came after a point the server had
// certainly passed: on the request's own stream (always so on stdio),
// those after index after; on any other HTTP stream, those after index
// barrier (a round trip later), as two streams may deliver in another
// order than the server wrote.
func lateOn(c msgConn, msgs []clients.Message, stream string, after, barrier int) []string {
	var late []string
	for _, m := range msgs {
		own := stream == "" || m.Stream == stream
		if own && m.Seq > after || !own && m.Seq > barrier {
			late = append(late, fmt.Sprintf("%s (stream %s)", m.Raw, orNone(m.Stream)))
		}
	}
	return late
}

func orNone(s string) string {
	if s == "" {
		return viaStdio
	}
	return s
}

func progressAfterComplete(h *H) {
	c := connectMsg(h)
	token := jsonrpc.StringID("after-complete-token")
	start := c.length()
	p := c.startRole("slow", jsonrpc.StringID("after-complete-1"), token)
	resp := c.await(p, "the slow call")
	barrier := resp.Seq
	if _, ok := c.(*httpMsg); ok {
		// Over HTTP late progress may come on another stream (the
		// standalone GET stream once the POST stream closed): an
		// uncancelled control call started now is the barrier — what
		// arrives for the token on another stream after its first message
		// was sent after the response.
		ctrl := c.startRole("slow", jsonrpc.StringID("after-complete-control"), jsonrpc.StringID("after-complete-control-token"))
		if first, ok := c.waitFirst(resp.Seq+1, h.Cfg().CallTimeout, func(m clients.Message) bool {
			return m.Stream == c.streamOf(ctrl)
		}); ok {
			barrier = first.Seq
		}
		c.await(ctrl, "the control call")
	}
	c.ping("after the slow call")
	c.ping("after the slow call (second)")
	var mine []clients.Message
	msgs := progressSince(c, start)
	for _, m := range msgs {
		if m.Env.ProgressToken == token {
			mine = append(mine, m)
		}
	}
	if late := lateOn(c, mine, c.streamOf(p), resp.Seq, barrier); len(late) > 0 {
		h.Failf("%d progress notification(s) after the final response: %s", len(late), strings.Join(late, "; "))
	}
	if len(msgs) == 0 {
		h.Notef("the target sent no progress (allowed)")
	}
}

func progressAfterCancel(h *H) {
	c := connectMsg(h)
	token := jsonrpc.StringID("after-cancel-token")
	id, _, sawProgress := cancelInFlight(h, c, "after-cancel", token)
	if !sawProgress {
		h.Skip("the target sent no progress for the request's token (progress is optional; nothing to check)")
	}
	bar := c.ping("after the cancellation")
	barrier := bar.Seq
	_, crossStream := c.(*httpMsg)
	var ctrlToken any
	if crossStream {
		ctrlToken = jsonrpc.StringID("after-cancel-control-token")
	}
	ctrl := c.startRole("slow", jsonrpc.StringID("after-cancel-control"), ctrlToken)
	if crossStream {
		// Over HTTP the cancelled call's stream and the barrier's are two
		// streams: what the server wrote on the first before it read the
		// cancellation may arrive after the barrier's answer. The control
		// call's first message (its first progress), a round trip and a
		// step later, is the barrier there.
		if first, ok := c.waitFirst(bar.Seq+1, h.Cfg().CallTimeout, func(m clients.Message) bool {
			return m.Stream == c.streamOf(ctrl)
		}); ok {
			barrier = first.Seq
		}
	}
	c.await(ctrl, "uncancelled control call")
	c.ping("after the control call")
	var late []string
	for _, m := range progressSince(c, barrier+1) {
		if m.Env.ProgressToken == token {
			late = append(late, string(m.Raw))
		}
	}
	if len(late) > 0 {
		h.Failf("%d progress notification(s) for the cancelled request %s after the server had read the cancellation: %s", len(late), id, strings.Join(late, "; "))
	}
}

package suites

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/protocol"
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
	Transports: []string{viaStdio, viaHTTP},
	Clauses:    []string{"ping#1"},
	Limits:     map[string]string{"ping#1": "promptness is bounded only by the exchange timeout (the page names no bound)"},
})

// pingJudgeWindow is how long the slow call must go on after the ping was
// sent for LIFECYCLE-PING-PROMPT to tell a ping answered at once from one
// held behind the call: twice the slack within which two HTTP streams may
// deliver in another order than the server wrote.
const pingJudgeWindow = 2 * crossStreamSlack

var checkPingPrompt = register(&Check{
	ID:    "LIFECYCLE-PING-PROMPT",
	Title: "a ping sent while a tools/call is in flight is answered at once, with an empty result, not after the call",
	How: "2025 versions. Starts the slow role's call with a progress token and, once its first progress arrived (the " +
		"call is in flight; without progress, once the exchange or call timeout, the shorter, has passed), sends ping. The ping must be answered " +
		"(within the call timeout) with the empty result {} (a _meta member aside) before the call's own response: on one " +
		"stream (stdio) by arrival order, across HTTP streams only when the two arrive more than " +
		crossStreamSlack.String() + " apart. A ping answered only after the call's response FAILs when the call went on " +
		"for at least " + pingJudgeWindow.String() + " after the ping was sent (a shorter call cannot tell the two apart: " +
		"SKIP). \"Promptly\" is read as: without waiting for other work in flight; the page names no bound.",
	Rules: sameRule(Rule{Level: reports.Must, Spec: "specification/VERSION/basic/utilities/ping.mdx",
		Clause: "The receiver MUST respond promptly with an empty response"}, legacyVersions...),
	Transports: []string{viaStdio, viaHTTP},
	Roles:      []string{"slow"},
	Clauses:    []string{"ping#1"},
})

// stdioExitBound is how long a server whose stdin closed may take to exit.
// "Promptly" names no number, but the page names its purpose: the client
// waits "a reasonable time" and then forces termination, and exiting on
// EOF "reduces the need for forced termination". The harness is that
// client: its own stdio Close waits faultproxy.StdioOptions.Grace (2 s by
// default) before SIGTERM. A server still running 5 s after EOF (more
// than twice that wait) is one this client would have had to force: the
// check's declared reading of "promptly".
const stdioExitBound = 5 * time.Second

var checkStdioExit = register(&Check{
	ID:    "LIFECYCLE-STDIO-EXIT",
	Title: "a stdio server exits on its own when its standard input is closed",
	How: fmt.Sprintf("2026-07-28 over stdio. After a ping is answered, closes the server's stdin (what the client "+
		"wrote before is delivered first) and sends no signal: the process must exit within %s. The harness's "+
		"SIGTERM and SIGKILL come only after that, when the connection is closed. \"Promptly\" is read as: before "+
		"this client would force termination (the page leaves the client's wait to \"a reasonable time\" and gives "+
		"exiting on EOF the purpose of sparing that force; the harness's own stdio close waits 2 s before SIGTERM, "+
		"the check allows %s).", stdioExitBound, stdioExitBound),
	Rules: map[string]Rule{v20260728: {Level: reports.Should, Spec: stdioModern,
		Clause: "Servers SHOULD exit promptly when their standard input is closed or reads return end-of-file."}},
	Transports: []string{viaStdio},
	Clauses:    []string{"st#6"},
})

func registerLifecycle() {
	ginkgo.Describe("LIFECYCLE ping and handshake", ginkgo.Label("area:lifecycle"), func() {
		define(checkPingEmpty, pingEmpty)
		define(checkPingPrompt, pingPrompt)
		define(checkStdioExit, stdioExit)
		define(checkVersionFallback, versionFallback)
		define(checkVersionLatest, versionLatest)
		define(checkVersionSame, versionSame)       // lifecycle_version_same.go
		define(checkInitializeInfo, initializeInfo) // lifecycle_initialize.go
		define(checkNoEarlyRequests, noEarlyRequests)
	})
}

func stdioExit(h *H) {
	if h.Target().Via() != protocol.TransportStdio {
		h.Skip("the target is not a stdio process (" + h.Target().Transport + "): it has no standard input to close")
	}
	c := h.Connect()
	c.Ping("before closing the server's stdin")
	closed := time.Now()
	if err := c.Link.CloseInput(); err != nil {
		h.Errorf("close the server's stdin: %v", err)
	}
	h.Notef("closed the server's stdin")
	t := time.NewTimer(stdioExitBound)
	defer t.Stop()
	select {
	case <-c.Link.Exited():
		h.Notef("the server exited %s after its stdin closed (%v)", time.Since(closed).Round(time.Millisecond), exitStatus(c.Link.ExitErr()))
	case <-t.C:
		h.Failf("the server was still running %s after its stdin closed (no signal sent)", stdioExitBound)
	case <-h.Ctx().Done():
		h.Errorf("the run ended while waiting for the server to exit: %v", h.Ctx().Err())
	}
}

// exitStatus says how a process ended.
func exitStatus(err error) string {
	if err == nil {
		return "status 0"
	}
	return err.Error()
}

func pingEmpty(h *H) {
	var m json.RawMessage
	var raw []byte
	if h.Target().Via() == protocol.TransportHTTP {
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

// emptyResultMembers returns the members of a ping result other than
// _meta, sorted, or an error when the result is not an object.
func emptyResultMembers(result json.RawMessage) ([]string, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(result, &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("result %s is not an object", result)
	}
	var extra []string
	for k := range obj {
		if k != "_meta" {
			extra = append(extra, k)
		}
	}
	slices.Sort(extra)
	return extra, nil
}

func pingPrompt(h *H) {
	c := connectMsg(h)
	from := c.length()
	callID := jsonrpc.StringID(unique("ping-prompt-call"))
	token := jsonrpc.StringID(unique("ping-prompt-token"))
	call := c.startRole("slow", callID, token)
	wait := min(h.Cfg().OpTimeout, h.Cfg().CallTimeout)
	if _, ok := c.waitFirst(from, wait, func(m clients.Message) bool {
		return m.Env.Kind == jsonrpc.Notification && m.Env.ProgressToken == token
	}); !ok {
		h.Notef("the slow call sent no progress within %s: the ping follows its request", wait)
	}
	pingID := jsonrpc.StringID(unique("ping-prompt"))
	sent := time.Now()
	pong := c.await(sendPing(h, c, pingID, callID), "ping sent while tools/call "+callID.String()+" was in flight")
	final := c.await(call, "the slow call")
	if pong.Env.Kind != jsonrpc.Response {
		h.Failf("ping sent while tools/call %s was in flight was answered with %s, not a result: %s", callID, pong.Env.Kind, pong.Raw)
	}
	if extra, err := emptyResultMembers(pong.Env.Result); err != nil || len(extra) > 0 {
		h.Failf("ping sent while tools/call %s was in flight was answered with a result that is not empty: %s", callID, pong.Raw)
	}
	before := pong.Seq < final.Seq
	if !c.sameStream(pong, final) {
		before = final.At.Sub(pong.At) > crossStreamSlack
	}
	took := pong.At.Sub(sent).Round(time.Millisecond)
	if before {
		h.Notef("the ping was answered %s after it was sent, %s before the call's response", took, final.At.Sub(pong.At).Round(time.Millisecond))
		return
	}
	if window := final.At.Sub(sent); window < pingJudgeWindow {
		h.Skip(fmt.Sprintf("the slow call answered %s after the ping was sent (under %s): too soon to tell a ping answered at once from one held behind the call", window.Round(time.Millisecond), pingJudgeWindow))
	}
	h.Failf("ping (id %s), sent while tools/call %s was in flight, was answered only %s later, after the call's own response (%s after the ping was sent): the ping waited for the call",
		pingID, callID, took, final.At.Sub(sent).Round(time.Millisecond))
}

// sendPing sends ping with id on c; a server that cannot take it (it ended
// after the call) did not answer the ping, and fails the check.
func sendPing(h *H, c msgConn, id, callID jsonrpc.ID) waiter {
	ctx, cancel := h.Op()
	defer cancel()
	var (
		w   waiter
		err error
	)
	switch x := c.(type) {
	case stdioMsg:
		w, err = x.W.Start(ctx, id, "ping", nil)
	case *httpMsg:
		w, err = x.W.Start(h.Ctx(), id, "ping", nil)
	default:
		h.Errorf("no request on a %T", c)
	}
	if err != nil {
		h.FailServer("the server did not answer ping (id %s) sent while tools/call %s was in flight: %v%s", id, callID, err, c.exitHint())
	}
	return w
}

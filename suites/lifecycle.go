package suites

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

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

// stdioExitBound is how long a server whose stdin closed may take to exit:
// "promptly" names no bound; a process that has not ended 5 s after EOF
// needs the forced termination the sentence wants to spare.
const stdioExitBound = 5 * time.Second

var checkStdioExit = register(&Check{
	ID:    "LIFECYCLE-STDIO-EXIT",
	Title: "a stdio server exits on its own when its standard input is closed",
	How: fmt.Sprintf("2026-07-28 over stdio. After a ping is answered, closes the server's stdin (what the client "+
		"wrote before is delivered first) and sends no signal: the process must exit within %s. The harness's "+
		"SIGTERM and SIGKILL come only after that, when the connection is closed.", stdioExitBound),
	Rules: map[string]Rule{"2026-07-28": {Level: reports.Should, Spec: stdioModern,
		Clause: "Servers SHOULD exit promptly when their standard input is closed or reads return end-of-file."}},
	Transports: []string{"stdio"},
	Clauses:    []string{"st#6"},
	Limits:     map[string]string{"st#6": fmt.Sprintf("promptly is read as within %s", stdioExitBound)},
})

func registerLifecycle() {
	ginkgo.Describe("LIFECYCLE ping and handshake", ginkgo.Label("area:lifecycle"), func() {
		define(checkPingEmpty, pingEmpty)
		define(checkStdioExit, stdioExit)
		define(checkVersionFallback, versionFallback)
		define(checkVersionLatest, versionLatest)
		define(checkNoEarlyRequests, noEarlyRequests)
	})
}

func stdioExit(h *H) {
	if h.Target().Transport != "stdio" {
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

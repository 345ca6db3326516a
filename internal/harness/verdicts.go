package harness

import (
	"context"
	"fmt"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/protocol"
	"github.com/mcp-conform/mcp-conform/reports"
)

// FailMust ends the check as FAIL: a MUST clause next to the check's own
// SHOULD one was broken.
func (h *H) FailMust(format string, args ...any) {
	panic(verdict{status: reports.Fail, reason: fmt.Sprintf(format, args...), level: reports.Must})
}

// Sleep waits d or until the check's context ends.
func (h *H) Sleep(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-h.ctx.Done():
		h.Errorf("interrupted while polling: %v", h.ctx.Err())
	}
}

// Clip shortens b to 300 bytes for a reason or a note.
func Clip(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

// Judge runs f on an H that knows only the session sess, outside any run,
// and returns the verdict f reached (PASS when it returned): unit tests of
// the helpers check bodies share (a capability gate, a parser) use it.
func Judge(sess clients.Session, f func(h *H)) (status reports.Status, reason string) {
	h := &H{ctx: context.Background(), session: sess}
	defer func() {
		if v, ok := recover().(verdict); ok {
			status, reason = v.status, v.reason
		}
	}()
	f(h)
	return reports.Pass, ""
}

// verdict ends a check body early with a status.
type verdict struct {
	status reports.Status
	reason string
	// level, when set, is the level of the sentence the verdict rests on,
	// when it is not the rule's (Warnf in a MUST check).
	level reports.Level
}

// FailServer ends the check as FAIL whatever the level of its clause: the
// server died, or did not answer a request it must answer (ping, a call
// that was not cancelled). That is not the clause the check is about, and a
// server that crashes or hangs must not pass the gate with a WARN.
func (h *H) FailServer(format string, args ...any) {
	panic(verdict{status: reports.Fail, reason: fmt.Sprintf(format, args...), level: reports.Must})
}

// StrayOutput describes the lines the server wrote on stdout that are not
// JSON-RPC messages (garbage, logs, a line cut short by an exit), or "".
func (h *H) StrayOutput() string {
	n, first := 0, ""
	for _, c := range h.conns {
		for _, m := range c.W.Messages() {
			if m.Env.Kind == jsonrpc.Invalid {
				if n == 0 {
					first = string(m.Raw)
					if len(first) > 120 {
						first = first[:120] + "..."
					}
				}
				n++
			}
		}
	}
	if n == 0 {
		return ""
	}
	if h.target.Via() == protocol.TransportWebSocket {
		return fmt.Sprintf("the server sent %d frame(s) that are not JSON-RPC messages, the first: %q "+
			"(custom transports \"MUST preserve the JSON-RPC message format\"; stdio: \"The server MUST NOT write anything to its stdout that is not a valid MCP message.\")", n, first)
	}
	return fmt.Sprintf("the server wrote %d line(s) on stdout that are not JSON-RPC messages, the first: %q "+
		"(stdio transport: \"The server MUST NOT write anything to its stdout that is not a valid MCP message.\")", n, first)
}

// StdioModernPage is the stdio transport's page in 2026-07-28.
const StdioModernPage = "specification/2026-07-28/basic/transports/stdio.mdx"

// stdioPage is the specification page of the stdio transport in version v.
func stdioPage(v string) string {
	if v == "" || !protocol.Version(v).Before(protocol.V20260728) {
		return StdioModernPage
	}
	return "specification/" + v + "/basic/transports.mdx"
}

// Failf ends the check: FAIL for a MUST clause, WARN for a SHOULD clause.
func (h *H) Failf(format string, args ...any) {
	st := reports.Fail
	if h.rule.Level == reports.Should {
		st = reports.Warn
	}
	panic(verdict{status: st, reason: fmt.Sprintf(format, args...)})
}

// Warnf ends the check as WARN, whatever the level of the check's rule: the
// server broke a SHOULD of the clause (or one the check observes beside
// it) but no MUST. A check result has one status: a check whose clause
// holds a MUST and a SHOULD FAILs when the MUST is broken (Failf), and only
// otherwise WARNs for the SHOULD. The reported level is SHOULD.
func (h *H) Warnf(format string, args ...any) {
	panic(verdict{status: reports.Warn, reason: fmt.Sprintf(format, args...), level: reports.Should})
}

// Skip ends the check as SKIP with the reason.
func (h *H) Skip(reason string) { panic(verdict{status: reports.Skip, reason: reason}) }

// Errorf ends the check as ERROR: the harness could not run it.
func (h *H) Errorf(format string, args ...any) {
	panic(verdict{status: reports.Error, reason: fmt.Sprintf(format, args...)})
}

// Notef records an observation in the transcript and the PASS reason.
func (h *H) Notef(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	h.notes = append(h.notes, s)
	switch {
	case len(h.hconns) > 0:
		h.hconns[len(h.hconns)-1].Proxy.Transcript().Note("%s", s)
	case len(h.conns) > 0:
		h.conns[len(h.conns)-1].Transcript().Note("%s", s)
	}
}

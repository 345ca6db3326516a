package harness

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/reports"
)

// HTTP-UTF8's machinery: a fourth judgement that rides on SCHEMA-VALID's
// walk of every check's transcripts (schema_valid.go). Over Streamable
// HTTP every JSON-RPC message the server sent — an application/json body
// or an SSE event's data, the proxy's own messages aside — must be UTF-8
// (the 2025 transports pages: "JSON-RPC messages MUST be UTF-8 encoded").
// Go's JSON parser reads a string with a stray byte as U+FFFD, so neither
// SCHEMA-VALID nor any active check would notice; this judgement reads the
// bytes as they crossed. The findings travel in the walk's schemaRun, and
// one result per transport, version and target is made when the report is
// built. The check itself (id, rules, clauses) is the catalog's, named to
// the harness by UTF8Check.

// utf8Check is the passive check the UTF-8 judgement reports as (nil: none
// is registered, no message is judged).
var utf8Check *Check

var (
	u8Mu sync.Mutex
	// u8Off is set when the run's options leave the check out.
	u8Off bool
)

// UTF8Check names c, a registered Passive check, as the one whose results
// the harness makes from the bytes of every message the server sent over
// Streamable HTTP in every other check (HTTP-UTF8). It returns c.
func UTF8Check(c *Check) *Check {
	if !c.Passive {
		panic(fmt.Sprintf("harness: UTF-8 check %s is not Passive", c.ID))
	}
	utf8Check = c
	return c
}

func setUTF8On(on bool) {
	u8Mu.Lock()
	u8Off = !on
	u8Mu.Unlock()
}

func utf8IsOn() bool {
	u8Mu.Lock()
	defer u8Mu.Unlock()
	return !u8Off && utf8Check != nil
}

// u8Finding is one server message whose bytes are not UTF-8.
type u8Finding struct {
	Conn   int    `json:"conn"`
	Stream string `json:"stream"`
	Seq    int64  `json:"seq,omitempty"`
	// At is the offset of the first byte that is not UTF-8, in the
	// message.
	At      int           `json:"at"`
	Message reports.Entry `json:"message"`
}

func (f u8Finding) String() string {
	return fmt.Sprintf("message seq %d on %s: a byte that is not UTF-8 at offset %d", f.Seq, f.Stream, f.At)
}

// firstInvalidUTF8 is the offset of the first byte of b that does not
// begin a valid UTF-8 sequence (-1: b is UTF-8).
func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return -1
}

// seeUTF8 judges one message entry's bytes (raw: the message, messageBytes')
// when the server sent it over Streamable HTTP. A body of an HTTP error
// status that is no JSON-RPC message (a plain-text error page) is not a
// JSON-RPC message the sentence speaks of.
func (w *schemaWalk) seeUTF8(e faultproxy.Entry, re reports.Entry, raw []byte) {
	if !w.run.UTF8 || e.Dir != faultproxy.ServerToClient || e.Outcome == faultproxy.OutcomeInjected {
		return
	}
	if e.Stream == "" || strings.HasPrefix(e.Stream, "WS#") || len(raw) == 0 {
		return
	}
	if w.status[e.Stream] >= 300 && !looksJSONRPC(raw) {
		return
	}
	w.run.U8Messages++
	at := firstInvalidUTF8(raw)
	if at < 0 {
		return
	}
	w.run.U8Findings = append(w.run.U8Findings, u8Finding{Conn: w.conn, Stream: e.Stream, Seq: e.Seq, At: at, Message: re})
}

// utf8ResultsOf makes the HTTP-UTF8 results of runs: one per HTTP target
// transport, version and target a check ran in.
func utf8ResultsOf(runs []schemaRun) []reports.Check {
	c := utf8Check
	if c == nil {
		return nil
	}
	var out []reports.Check
	for _, g := range groupPassive(c, runs, func(r schemaRun) bool { return r.UTF8 }) {
		rs, res := g.runs, g.res
		messages := 0
		var lines []string
		for _, r := range rs {
			messages += r.U8Messages
			for _, f := range r.U8Findings {
				lines = append(lines, fmt.Sprintf("%s (connection %d): %s", r.Check, f.Conn, f))
				res.Transcript = append(res.Transcript, reports.Entry{Kind: "note", Text: fmt.Sprintf("in %s, connection %d:", r.Check, f.Conn)}, f.Message,
					reports.Entry{AtMs: f.Message.AtMs, Kind: "note", Seq: f.Seq, Stream: f.Stream, Text: "HTTP-UTF8: " + f.String()})
			}
		}
		switch {
		case len(lines) > 0:
			res.Status = reports.Fail
			res.Reason = findingsReason(fmt.Sprintf("%d of %d messages the server sent over Streamable HTTP are not UTF-8", len(lines), messages), lines)
		case messages == 0:
			res.Status = reports.Skip
			res.Reason = fmt.Sprintf("no check of %d check runs received a message from the server over Streamable HTTP: nothing to judge", len(rs))
		default:
			res.Reason = fmt.Sprintf("%d messages the server sent over Streamable HTTP, in %d check runs, are UTF-8", messages, len(rs))
		}
		out = append(out, res)
	}
	return out
}

// utf8Gaps is schemaGaps for HTTP-UTF8, in a run of configuration cfg
// (outside the check's versions: passiveGapsIn).
func utf8Gaps(cfg *Config, res []reports.Check) []reports.Check {
	return passiveGapsIn(cfg, utf8Check, res, "no check received a message from the server on this transport: nothing to judge",
		"no message from the server to judge")
}

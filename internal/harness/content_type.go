package harness

import (
	"fmt"
	"mime"
	"slices"
	"strings"
	"sync"

	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/reports"
)

// HTTP-RESPONSE-CONTENT-TYPE's machinery: a second passive check that rides
// on SCHEMA-VALID's walk of every check's transcripts (schema_valid.go).
// Over Streamable HTTP the walk knows which POST carried a JSON-RPC request
// (the client's message entries of that stream); the server's response head
// on that stream, when its status is 2xx, must name application/json or
// text/event-stream. The findings travel in the same schemaRun (a check's
// result entry, a split part's state) and one result per transport, version
// and target is made when the report is built. The check itself (id, rules,
// clauses) is the catalog's, named to the harness by ContentTypeCheck.

// contentTypeCheck is the passive check the content-type walk reports as
// (nil: none is registered, no head is judged).
var contentTypeCheck *Check

// ctMu guards ctOff.
var (
	ctMu sync.Mutex
	// ctOff is set when the run's options leave the content-type check
	// out (--focus on other checks).
	ctOff bool
)

// ContentTypeCheck names c, a registered Passive check, as the one whose
// results the harness makes from the response heads of every other check's
// POSTs that carried a request (HTTP-RESPONSE-CONTENT-TYPE). It returns c.
func ContentTypeCheck(c *Check) *Check {
	if !c.Passive {
		panic(fmt.Sprintf("harness: content-type check %s is not Passive", c.ID))
	}
	contentTypeCheck = c
	return c
}

func setContentTypeOn(on bool) {
	ctMu.Lock()
	ctOff = !on
	ctMu.Unlock()
}

func contentTypeIsOn() bool {
	ctMu.Lock()
	defer ctMu.Unlock()
	return !ctOff && contentTypeCheck != nil
}

// passiveIsOn reports whether any passive check walks the transcripts.
func passiveIsOn() bool {
	return schemaIsOn() || contentTypeIsOn() || structuredIsOn() || utf8IsOn()
}

// ctFinding is one response head that broke the sentence.
type ctFinding struct {
	Conn   int    `json:"conn"`
	Stream string `json:"stream"`
	Seq    int64  `json:"seq,omitempty"`
	Method string `json:"method,omitempty"`
	Status int    `json:"status"`
	CT     string `json:"contentType,omitempty"`
	// Entries are the exchange as the report shows it: the client's
	// request, the server's head and the first message of its body.
	Entries []reports.Entry `json:"entries,omitempty"`
}

func (f ctFinding) String() string {
	ct := fmt.Sprintf("%q", f.CT)
	if f.CT == "" {
		ct = "none"
	}
	what := f.Method
	if what == "" {
		what = "a request"
	}
	return fmt.Sprintf("%s: HTTP %d, Content-Type %s", what, f.Status, ct)
}

// contentTypeOK reports whether a response head to a POST that carried a
// request keeps the sentence: an error status is not an answer the sentence
// speaks of (the pages let it carry no body at all); a 2xx must name one of
// the two media types (parameters and case aside).
func contentTypeOK(status int, ct string) bool {
	if status < 200 || status > 299 {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || mt == "text/event-stream")
}

// seeHead judges one response head of the server (an HTTP entry from server
// to client) when the client's POST on that stream carried a request.
func (w *schemaWalk) seeHead(e faultproxy.Entry) {
	if !w.run.ContentType || e.HTTP == nil || e.Stream == "" || strings.HasPrefix(e.Stream, "WS#") {
		return
	}
	if e.Text != "" {
		// "replaced by the proxy": a fault's own head, not the server's.
		return
	}
	method, posted := w.posted[e.Stream]
	if !posted || w.headSeen[e.Stream] {
		return
	}
	w.headSeen[e.Stream] = true
	w.run.Answers++
	ct := headerValue(e.HTTP.Header, "Content-Type")
	if contentTypeOK(e.HTTP.Status, ct) {
		return
	}
	f := ctFinding{Conn: w.conn, Stream: e.Stream, Seq: e.Seq, Method: method, Status: e.HTTP.Status, CT: ct}
	if re, ok := w.sent[e.Stream]; ok {
		f.Entries = append(f.Entries, re)
	}
	f.Entries = append(f.Entries, ReportEntry(e))
	w.run.Heads = append(w.run.Heads, f)
	w.badHead[e.Stream] = len(w.run.Heads) - 1
}

// seeBody keeps the server's first message on a stream whose head broke
// the sentence, as the finding's evidence.
func (w *schemaWalk) seeBody(e faultproxy.Entry, re reports.Entry) {
	i, ok := w.badHead[e.Stream]
	if !ok {
		return
	}
	delete(w.badHead, e.Stream)
	w.run.Heads[i].Entries = append(w.run.Heads[i].Entries, re)
}

// headerValue is the first value of header name in h, whatever its case.
func headerValue(h map[string][]string, name string) string {
	for k, vs := range h {
		if strings.EqualFold(k, name) && len(vs) > 0 {
			return vs[0]
		}
	}
	return ""
}

// contentTypeResultsOf makes the HTTP-RESPONSE-CONTENT-TYPE results of
// runs: one per HTTP target transport, version and target a check ran in.
func contentTypeResultsOf(runs []schemaRun) []reports.Check {
	c := contentTypeCheck
	if c == nil {
		return nil
	}
	var out []reports.Check
	for _, g := range groupPassive(c, runs, func(r schemaRun) bool { return r.ContentType }) {
		rs, res := g.runs, g.res
		answers := 0
		var lines []string
		for _, r := range rs {
			answers += r.Answers
			for _, f := range r.Heads {
				lines = append(lines, fmt.Sprintf("%s (connection %d, %s): %s", r.Check, f.Conn, f.Stream, f))
				res.Transcript = append(res.Transcript, reports.Entry{Kind: "note", Text: fmt.Sprintf("in %s, connection %d:", r.Check, f.Conn)})
				res.Transcript = append(res.Transcript, f.Entries...)
				res.Transcript = append(res.Transcript, reports.Entry{Kind: "note", Stream: f.Stream,
					Text: "HTTP-RESPONSE-CONTENT-TYPE: " + f.String()})
			}
		}
		switch {
		case len(lines) > 0:
			res.Status = reports.Fail
			res.Reason = findingsReason(fmt.Sprintf("%d of %d answers to a POST carrying a request came with a 2xx status and a Content-Type that is neither application/json nor text/event-stream",
				len(lines), answers), lines)
		case answers == 0:
			res.Status = reports.Skip
			res.Reason = fmt.Sprintf("no check of %d check runs sent a request over Streamable HTTP: no answer to judge", len(rs))
		default:
			res.Reason = fmt.Sprintf("%d answers to POSTs carrying a request, in %d check runs, came with application/json or text/event-stream (or an error status)", answers, len(rs))
		}
		out = append(out, res)
	}
	return out
}

// contentTypeResults makes the HTTP-RESPONSE-CONTENT-TYPE results of the
// walks recorded so far in this process.
func contentTypeResults() []reports.Check {
	schemaMu.Lock()
	runs := slices.Clone(schemaRuns)
	schemaMu.Unlock()
	return contentTypeResultsOf(runs)
}

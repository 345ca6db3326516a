package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/reports"
	"github.com/mcp-conform/mcp-conform/sse"
)

// transcript merges the transcripts of the check's connections.
func (h *H) transcript() ([]reports.Entry, time.Duration) {
	out := append([]reports.Entry(nil), h.startTranscript...)
	var trs []*faultproxy.Transcript
	for _, c := range h.conns {
		trs = append(trs, c.Transcript())
	}
	for _, c := range h.hconns {
		trs = append(trs, c.Proxy.Transcript())
	}
	var spans []waitSpan
	for i, tr := range trs {
		if len(trs) > 1 {
			out = append(out, reports.Entry{Kind: "note", Text: fmt.Sprintf("connection %d", i+1)})
		}
		sw := h.schemaWalkFor(i + 1) // SCHEMA-VALID, passively (schema_valid.go)
		tw := newSpanWalk(tr)        // the time on the target (targetwait.go)
		for _, e := range tr.Entries() {
			re := ReportEntry(e)
			out = append(out, re)
			if e.Kind != faultproxy.EntryMessage {
				if sw != nil {
					sw.seeOther(e)
				}
				continue
			}
			// One parse of the message for both walks.
			raw := messageBytes(e)
			env := parseMessage(raw)
			tw.see(e, env)
			if sw == nil {
				continue
			}
			sw.seeUTF8(e, re, raw) // HTTP-UTF8 (utf8_wire.go)
			if mark, bad := sw.see(e, re, raw, env); bad {
				out = append(out, mark)
			}
		}
		spans = append(spans, tw.spans()...)
	}
	return out, spanUnion(spans)
}

// A message larger than maxReportRaw (ROBUST-OVERSIZE sends 8 MiB) is
// shown in a report by its first reportRawHead bytes and its size.
const (
	maxReportRaw  = 256 << 10
	reportRawHead = 2 << 10
)

// ReportEntry is a transcript entry of the proxy as a report shows it.
func ReportEntry(e faultproxy.Entry) reports.Entry {
	re := reports.Entry{
		AtMs: float64(e.At.Microseconds()) / 1000, Kind: string(e.Kind), Dir: string(e.Dir),
		Rule: e.Rule, Fault: e.Fault, Text: e.Text, Stream: e.Stream,
		OnProcess: e.OnProcess,
	}
	if e.Outcome != 0 {
		re.Outcome = e.Outcome.String()
	}
	if e.Kind == faultproxy.EntryMessage || e.Kind == faultproxy.EntryFault {
		re.Seq = e.Seq
	}
	if e.HTTP != nil {
		re.HTTP = &reports.HTTPHead{Method: e.HTTP.Method, Path: e.HTTP.Path, Status: e.HTTP.Status, Header: e.HTTP.Header}
	}
	if e.Raw != nil {
		switch {
		case len(e.Raw) > maxReportRaw:
			head := e.Raw[:reportRawHead]
			re.Text = fmt.Sprintf("%s… (%d bytes in all; clipped to %d in the report)", strings.ToValidUTF8(string(head), "\uFFFD"), len(e.Raw), reportRawHead)
		case !utf8.Valid(e.Raw):
			// JSON reports are UTF-8: show the bytes, escaped.
			re.Text = "not UTF-8: " + strconv.Quote(string(e.Raw))
		case json.Valid(e.Raw):
			re.Raw = json.RawMessage(e.Raw)
		case e.Stream != "" && !strings.HasPrefix(e.Stream, "WS#") && e.Kind == faultproxy.EntryMessage:
			re.Raw, re.Text = sseEntry(e.Raw)
		default:
			re.Text = string(e.Raw)
		}
	}
	reports.Secrets.Entry(&re) // header values by name, known secrets anywhere
	return re
}

// sseEntry shows an SSE event of a transcript as its JSON-RPC message (the
// data, when it is JSON) and its other fields as text.
func sseEntry(raw []byte) (json.RawMessage, string) {
	ev, err := sse.NewReader(bytes.NewReader(raw), sse.Options{Lenient: true}).Next()
	if err != nil {
		return nil, string(raw)
	}
	var fields []string
	if ev.IsComment {
		return nil, "sse comment: " + ev.Comment
	}
	if ev.HasID {
		fields = append(fields, "id: "+ev.ID)
	}
	if ev.Type != "" {
		fields = append(fields, "event: "+ev.Type)
	}
	if ev.HasRetry {
		fields = append(fields, fmt.Sprintf("retry: %d", ev.Retry))
	}
	if ev.HasData && json.Valid([]byte(ev.Data)) {
		return json.RawMessage(ev.Data), strings.Join(append([]string{"sse"}, fields...), " ")
	}
	return nil, string(raw)
}

// ---- helpers check bodies share ----

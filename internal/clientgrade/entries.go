package clientgrade

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcp-conform/mcp-conform/clientsuite"
	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/reports"
	"github.com/mcp-conform/mcp-conform/sse"
)

// Bounds of what a report shows of one run.
const (
	maxReportRaw  = 256 << 10
	reportRawHead = 2 << 10
	stderrLines   = 20
)

// transcript is the report's evidence of a run: a note naming the
// scenario, the proxy's transcript, then the client processes (exit,
// outcome lines, the end of their stderr).
func transcript(r *clientsuite.Run) []reports.Entry {
	out := []reports.Entry{{Kind: "note", Text: fmt.Sprintf("scenario %s (%s, %s): %s", r.Scenario.Name, r.Transport, r.Version, r.Scenario.Does)}}
	if r.HarnessErr != nil {
		out = append(out, reports.Entry{Kind: "note", Text: "harness: " + r.HarnessErr.Error()})
	}
	for _, e := range r.Entries {
		out = append(out, toReportEntry(e))
	}
	var last float64
	if n := len(out); n > 0 {
		last = out[n-1].AtMs
	}
	for _, p := range r.Clients {
		at := last
		if p.ExitAt > 0 {
			at = float64(p.ExitAt.Microseconds()) / 1000
		}
		status := fmt.Sprintf("client %s exited %d", p.ID, p.ExitCode)
		switch {
		case p.StartErr != nil:
			status = fmt.Sprintf("client %s could not start: %v", p.ID, p.StartErr)
		case p.Killed:
			status = fmt.Sprintf("client %s killed at its deadline (exit %d)", p.ID, p.ExitCode)
		}
		out = append(out, reports.Entry{AtMs: at, Kind: "process", Text: status})
		for _, o := range p.Outcomes {
			b, _ := json.Marshal(o)
			out = append(out, reports.Entry{AtMs: at, Kind: "note", Text: "client " + p.ID + " outcome: " + string(b)})
		}
		if s := strings.TrimSpace(p.Stderr); s != "" {
			lines := strings.Split(s, "\n")
			if len(lines) > stderrLines {
				out = append(out, reports.Entry{AtMs: at, Kind: "note", Text: fmt.Sprintf("client %s stderr: … %d earlier lines", p.ID, len(lines)-stderrLines)})
				lines = lines[len(lines)-stderrLines:]
			}
			for _, l := range lines {
				out = append(out, reports.Entry{AtMs: at, Kind: "note", Text: "client " + p.ID + " stderr: " + l})
			}
		}
	}
	return out
}

func toReportEntry(e faultproxy.Entry) reports.Entry {
	re := reports.Entry{AtMs: float64(e.At.Microseconds()) / 1000, Kind: string(e.Kind), Dir: string(e.Dir),
		Rule: e.Rule, Fault: e.Fault, Text: e.Text, Stream: e.Stream}
	if e.Kind == faultproxy.EntryMessage || e.Kind == faultproxy.EntryFault {
		re.Seq = e.Seq
	}
	if e.HTTP != nil {
		re.HTTP = &reports.HTTPHead{Method: e.HTTP.Method, Path: e.HTTP.Path, Status: e.HTTP.Status, Header: e.HTTP.Header}
	}
	if e.Raw == nil {
		return re
	}
	switch {
	case len(e.Raw) > maxReportRaw:
		re.Text = fmt.Sprintf("%s… (%d bytes in all)", strings.ToValidUTF8(string(e.Raw[:reportRawHead]), "\uFFFD"), len(e.Raw))
	case !utf8.Valid(e.Raw):
		re.Text = "not UTF-8: " + strconv.Quote(string(e.Raw))
	case json.Valid(e.Raw):
		re.Raw = json.RawMessage(e.Raw)
	case e.Stream != "" && e.Kind == faultproxy.EntryMessage:
		ev, err := sse.NewReader(bytes.NewReader(e.Raw), sse.Options{Lenient: true}).Next()
		switch {
		case err != nil:
			re.Text = string(e.Raw)
		case ev.IsComment:
			re.Text = "sse comment: " + ev.Comment
		default:
			var fields []string
			if ev.HasID {
				fields = append(fields, "id: "+ev.ID)
			}
			if ev.HasRetry {
				fields = append(fields, "retry: "+strconv.Itoa(ev.Retry))
			}
			if json.Valid([]byte(ev.Data)) {
				re.Raw = json.RawMessage(ev.Data)
			} else if ev.Data != "" {
				fields = append(fields, "data: "+ev.Data)
			}
			re.Text = "sse " + strings.Join(fields, ", ")
		}
	default:
		re.Text = string(e.Raw)
	}
	return re
}

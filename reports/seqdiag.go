package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Geometry of a sequence diagram, in SVG user units (pixels).
const (
	diagWidth   = 930
	diagHeader  = 44
	diagRowH    = 22
	diagFooter  = 14
	laneClient  = 170
	laneProxy   = 410
	laneServer  = 650
	timeColumnX = 8
)

// DefaultMaxDiagramRows bounds the rows of one sequence diagram when
// HTMLOptions.MaxDiagramRows is zero.
const DefaultMaxDiagramRows = 140

// Colours of the diagram, one per role.
const (
	colC2S    = "#1d4ed8"
	colS2C    = "#047857"
	colInject = "#b45309"
	colFault  = "#b91c1c"
	colMuted  = "#6b7280"
	colLane   = "#9ca3af"
)

// fate is what the proxy did with one message, as its fault entries tell.
type fate struct {
	// stopped: the message never left the proxy (drop, cut before, crash
	// that lost it, status answered by the proxy, reset).
	stopped bool
	// mark is drawn where a stopped message ended: "×" or "✂".
	mark string
	// held: the message waited at the proxy until its release row (or
	// forever, when releaseAt is -1).
	held      bool
	releaseAt int
	// extra lists faults that acted but let the message through
	// (duplicate, delivered-then-cut, buffer, throttle).
	extra []string
}

// diagram is the SVG of one transcript, with what was left out.
type diagram struct {
	SVG     string
	Rows    int
	Omitted int
}

// sequenceDiagram draws entries as an inline SVG sequence diagram with
// client, proxy and server lanes: messages as arrows (label: method, id or
// kind), faults as red badges on the proxy lane where they acted (a dropped
// message ends at the proxy with ×, a held one waits on a hold bar until its
// release), stderr and process events beside the server lane, notes across
// the lanes, and the time of each row in ms. A transcript longer than
// maxRows keeps its first two thirds and its last third of maxRows with one
// row saying how many entries were left out. Every piece of text is escaped:
// nothing from the target can become markup.
func sequenceDiagram(entries []Entry, maxRows int) diagram {
	return sequenceDiagramLanes(entries, maxRows, serverLanes)
}

// lanes names the three lanes of a diagram.
type lanes [3]string

// serverLanes are the lanes of a report on a server (the harness is the
// client); clientLanes those of a report on a client (`mcp-conform
// client`: the client is the program under test, the server mcp-conform's).
var (
	serverLanes = lanes{"client (harness)", "fault proxy", "server"}
	clientLanes = lanes{"client (under test)", "fault proxy", "server (mcp-conform)"}
)

// lanesOf are the lanes of r's diagrams.
func lanesOf(r *Report) lanes {
	if r.Target.UnderTest == UnderTestClient {
		return clientLanes
	}
	return serverLanes
}

// sequenceDiagramLanes is sequenceDiagram with the lanes named.
func sequenceDiagramLanes(entries []Entry, maxRows int, names lanes) diagram {
	if maxRows <= 0 {
		maxRows = DefaultMaxDiagramRows
	}
	fates := messageFates(entries)

	// The rows shown: indexes into entries, -1 for the gap row.
	var shown []int
	omitted := 0
	if len(entries) > maxRows {
		head := maxRows * 2 / 3
		tail := maxRows - head - 1
		for i := 0; i < head; i++ {
			shown = append(shown, i)
		}
		shown = append(shown, -1)
		for i := len(entries) - tail; i < len(entries); i++ {
			shown = append(shown, i)
		}
		omitted = len(entries) - head - tail
	} else {
		for i := range entries {
			shown = append(shown, i)
		}
	}
	rowOf := map[int]int{}
	gapRow := -1
	for r, i := range shown {
		if i < 0 {
			gapRow = r
			continue
		}
		rowOf[i] = r
	}
	height := diagHeader + len(shown)*diagRowH + diagFooter
	y := func(row int) int { return diagHeader + row*diagRowH + diagRowH/2 }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="seq" role="img" width="%d" height="%d" viewBox="0 0 %d %d" font-family="ui-monospace,SFMono-Regular,Menlo,Consolas,monospace" font-size="11">`,
		diagWidth, height, diagWidth, height)
	fmt.Fprintf(&b, `<title>sequence diagram: %d transcript entries</title>`, len(entries))
	// Lanes.
	for _, l := range []struct {
		x    int
		name string
	}{{laneClient, names[0]}, {laneProxy, names[1]}, {laneServer, names[2]}} {
		fmt.Fprintf(&b, `<rect x="%d" y="6" width="140" height="22" rx="4" fill="#f3f4f6" stroke="%s"/>`, l.x-70, colLane)
		fmt.Fprintf(&b, `<text x="%d" y="21" text-anchor="middle" font-weight="bold" fill="#111827">%s</text>`, l.x, esc(l.name))
		fmt.Fprintf(&b, `<line x1="%d" y1="28" x2="%d" y2="%d" stroke="%s" stroke-dasharray="3 3"/>`, l.x, l.x, height-6, colLane)
	}
	fmt.Fprintf(&b, `<text x="%d" y="21" fill="%s">ms</text>`, timeColumnX, colMuted)

	// Hold bars first, so arrows and badges draw over them.
	for i, f := range fates {
		if !f.held {
			continue
		}
		start, ok := rowOf[i]
		if !ok {
			start = gapRow
		}
		end := len(shown) - 1
		if f.releaseAt >= 0 {
			if r, ok := rowOf[f.releaseAt]; ok {
				end = r
			} else if gapRow >= 0 {
				end = gapRow
			}
		}
		if start < 0 || end < start {
			continue
		}
		fmt.Fprintf(&b, `<rect class="hold" x="%d" y="%d" width="10" height="%d" fill="#fde68a" stroke="%s"><title>%s</title></rect>`,
			laneProxy-5, y(start), max(y(end)-y(start), 4), colInject, esc("held at the proxy"))
	}

	for r, i := range shown {
		yy := y(r)
		if i < 0 {
			fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle" font-style="italic" fill="%s">%s</text>`,
				diagWidth/2, yy+4, colMuted, esc(fmt.Sprintf("… %d entries omitted here: the full transcript is below …", omitted)))
			continue
		}
		e := entries[i]
		fmt.Fprintf(&b, `<text x="%d" y="%d" fill="%s">%s</text>`, timeColumnX, yy+4, colMuted, esc(strconv.FormatFloat(finite(e.AtMs), 'f', 1, 64)))
		drawEntry(&b, entries, fates, i, yy)
	}
	b.WriteString(`</svg>`)
	return diagram{SVG: b.String(), Rows: len(shown), Omitted: omitted}
}

// drawEntry draws the row of entries[i] at height y.
func drawEntry(b *strings.Builder, entries []Entry, fates map[int]*fate, i, y int) {
	e := entries[i]
	tip := tooltip(e)
	switch e.Kind {
	case "message":
		from, to, col := endpoints(e.Dir)
		label := messageLabel(e)
		if e.Fault == "inject" {
			// A synthetic message starts at the proxy.
			arrow(b, laneProxy, to, y, colInject, true, "injected: "+label, tip)
			return
		}
		f := fates[i]
		switch {
		case f != nil && (f.stopped || f.held):
			arrow(b, from, laneProxy, y, col, isComment(e), label, tip)
			if f.stopped {
				mark := f.mark
				if mark == "" {
					mark = "×"
				}
				fmt.Fprintf(b, `<text class="lost" x="%d" y="%d" text-anchor="middle" font-size="18" font-weight="bold" fill="%s">%s</text>`,
					laneProxy+14*sign(to-from), y+6, colFault, esc(mark))
			}
		default:
			arrow(b, from, to, y, col, isComment(e), label, tip)
		}
	case "fault":
		name := orDash(e.Fault)
		x := laneProxy
		if onProcess(e) {
			x = laneServer
		}
		w := 14 + 7*utf8.RuneCountInString(name)
		fmt.Fprintf(b, `<g class="fault"><title>%s</title><rect x="%d" y="%d" width="%d" height="16" rx="8" fill="#fee2e2" stroke="%s"/>`,
			esc(tip), x-w/2, y-8, w, colFault)
		fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle" fill="%s" font-weight="bold">%s</text></g>`, x, y+4, colFault, esc(name))
		detail := "rule " + orDash(e.Rule)
		if e.Text != "" {
			detail += ": " + e.Text
		}
		if name == "release" {
			// The held message goes on from the proxy now.
			if j := heldMessage(entries, fates, i); j >= 0 {
				_, to, col := endpoints(entries[j].Dir)
				arrow(b, laneProxy+sign(to-laneProxy)*w/2, to, y, col, false, "↳ "+messageLabel(entries[j]), tooltip(entries[j]))
				return
			}
		}
		room := 70
		if x == laneServer {
			room = 30
		}
		textAt(b, x+w/2+6, y+4, colFault, shorten(detail, room), "")
	case "stderr":
		fmt.Fprintf(b, `<circle cx="%d" cy="%d" r="3" fill="%s"/>`, laneServer, y, colMuted)
		textAt(b, laneServer+8, y+4, colMuted, "stderr: "+shorten(e.Text, 30), tip)
	case "process":
		fmt.Fprintf(b, `<rect x="%d" y="%d" width="10" height="10" fill="#e5e7eb" stroke="%s"/>`, laneServer-5, y-5, colMuted)
		textAt(b, laneServer+10, y+4, "#374151", shorten(e.Text, 38), tip)
	case "http":
		from, to, _ := endpoints(e.Dir)
		arrow(b, from, to, y, colMuted, true, httpLabel(e), tip)
	default:
		// Notes and kinds this version does not know run across the lanes.
		text := e.Text
		if e.Kind != "note" {
			text = orDash(e.Kind) + ": " + e.Text
		}
		if e.Stream != "" {
			text = "[" + e.Stream + "] " + text
		}
		fmt.Fprintf(b, `<text x="%d" y="%d" font-style="italic" fill="#4b5563" class="note">%s%s</text>`,
			laneClient-100, y+4, titleElem(tip), esc(shorten("note: "+text, 110)))
	}
}

// messageFates reads the outcomes of a transcript's fault entries and
// says, for each message they acted on (by index), what became of it. A
// fault belongs to the message with the same direction, stream and
// sequence number when the transcript has them, else to the latest such
// message before it.
func messageFates(entries []Entry) map[int]*fate {
	fates := map[int]*fate{}
	get := func(i int) *fate {
		if fates[i] == nil {
			fates[i] = &fate{releaseAt: -1}
		}
		return fates[i]
	}
	for i, e := range entries {
		if e.Kind != "fault" {
			continue
		}
		j := faultTarget(entries, i)
		if j < 0 {
			continue
		}
		f := get(j)
		switch outcomeOf(e) {
		case "dropped", "replaced", "reset", "answered":
			f.stopped, f.mark = true, "×"
		case "cut":
			f.stopped, f.mark = true, "✂"
		case "held":
			if f.releaseAt < 0 {
				f.held = true
			}
		case "released":
			if f.releaseAt < 0 {
				f.held = true
				f.releaseAt = i
			}
		default:
			f.extra = append(f.extra, e.Fault)
		}
	}
	return fates
}

// faultTarget finds the message a fault entry acted on.
func faultTarget(entries []Entry, i int) int {
	e := entries[i]
	for j := i - 1; j >= 0 && j >= i-500; j-- {
		m := entries[j]
		if m.Kind == "note" && strings.HasPrefix(m.Text, "connection ") {
			return -1 // another connection's transcript begins here
		}
		if m.Kind != "message" || m.Fault == "inject" || m.Dir != e.Dir || m.Stream != e.Stream {
			continue
		}
		if e.Seq != 0 && m.Seq != 0 && e.Seq != m.Seq {
			continue
		}
		return j
	}
	return -1
}

// heldMessage finds the message a release entry lets go.
func heldMessage(entries []Entry, fates map[int]*fate, i int) int {
	for j, f := range fates {
		if f.releaseAt == i {
			return j
		}
	}
	return faultTarget(entries, i)
}

// endpoints gives the lanes a message of direction dir goes from and to,
// and its colour.
func endpoints(dir string) (from, to int, col string) {
	if dir == "s2c" {
		return laneServer, laneClient, colS2C
	}
	return laneClient, laneServer, colC2S
}

// arrow draws a horizontal arrow from x1 to x2 at height y with its label
// above it.
func arrow(b *strings.Builder, x1, x2, y int, col string, dashed bool, label, tip string) {
	dash := ""
	if dashed {
		dash = ` stroke-dasharray="5 3"`
	}
	s := sign(x2 - x1)
	fmt.Fprintf(b, `<g class="msg">%s<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="1.5"%s/>`,
		titleElem(tip), x1, y, x2-6*s, y, col, dash)
	fmt.Fprintf(b, `<polygon points="%d,%d %d,%d %d,%d" fill="%s"/>`, x2, y, x2-8*s, y-4, x2-8*s, y+4, col)
	if label != "" {
		mid := (x1 + x2) / 2
		fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle" fill="%s" stroke="#fff" stroke-width="3" paint-order="stroke">%s</text>`,
			mid, y-3, col, esc(shorten(label, max(abs(x2-x1)*10/66-1, 8))))
	}
	b.WriteString(`</g>`)
}

// textAt writes one line of text with an optional tooltip.
func textAt(b *strings.Builder, x, y int, col, text, tip string) {
	fmt.Fprintf(b, `<text x="%d" y="%d" fill="%s">%s%s</text>`, x, y, col, titleElem(tip), esc(text))
}

// titleElem is an SVG <title> (a hover tooltip), or nothing.
func titleElem(tip string) string {
	if tip == "" {
		return ""
	}
	return "<title>" + esc(tip) + "</title>"
}

func abs(d int) int { return d * sign(d) }

func sign(d int) int {
	if d < 0 {
		return -1
	}
	return 1
}

// messageLabel names a message briefly: "tools/call #7", "result #7",
// "error -32800 #7", "notifications/progress 1/8", ": keep-alive".
func messageLabel(e Entry) string {
	if len(e.Raw) == 0 {
		if e.Text != "" {
			if c, ok := strings.CutPrefix(e.Text, "sse comment: "); ok {
				return ": " + c
			}
			return "(not JSON) " + e.Text
		}
		return "(empty)"
	}
	raw := bytes.TrimSpace(e.Raw)
	if len(raw) > 0 && raw[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(raw, &batch) == nil {
			return fmt.Sprintf("batch of %d", len(batch))
		}
	}
	var env struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Progress  json.RawMessage `json:"progress"`
			Total     json.RawMessage `json:"total"`
			RequestID json.RawMessage `json:"requestId"`
			Name      string          `json:"name"`
		} `json:"params"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return "(not JSON) " + s
		}
		return "(not JSON-RPC) " + string(raw)
	}
	id := ""
	if len(env.ID) > 0 && string(env.ID) != "null" {
		id = " #" + strings.Trim(string(env.ID), `"`)
	}
	switch {
	case env.Method == "notifications/progress":
		s := env.Method + " " + string(env.Params.Progress)
		if len(env.Params.Total) > 0 {
			s += "/" + string(env.Params.Total)
		}
		return s
	case env.Method == "notifications/cancelled" && len(env.Params.RequestID) > 0:
		return env.Method + " of #" + strings.Trim(string(env.Params.RequestID), `"`)
	case env.Method == "tools/call" && env.Params.Name != "":
		return "tools/call " + env.Params.Name + id
	case env.Method != "":
		return env.Method + id
	case env.Error != nil:
		return "error " + strconv.Itoa(env.Error.Code) + id
	case len(env.Result) > 0:
		return "result" + id
	}
	return "(JSON) " + string(raw)
}

// httpLabel names an HTTP head: "POST /mcp POST#1" or "200 text/event-stream".
func httpLabel(e Entry) string {
	if e.HTTP == nil {
		return "http " + e.Stream
	}
	var s string
	if e.HTTP.Status != 0 {
		s = strconv.Itoa(e.HTTP.Status)
		if ct := e.HTTP.Header["Content-Type"]; len(ct) > 0 {
			s += " " + ct[0]
		}
	} else {
		s = e.HTTP.Method + " " + e.HTTP.Path
	}
	if e.Stream != "" {
		s += " [" + e.Stream + "]"
	}
	return s
}

// isComment reports whether a message entry is an SSE comment (a
// keep-alive), drawn dashed.
func isComment(e Entry) bool {
	return len(e.Raw) == 0 && strings.HasPrefix(e.Text, "sse comment:")
}

// tooltip is the full line of an entry, as FormatTranscript writes it.
func tooltip(e Entry) string {
	return entryBody(e)
}

// shorten makes s one line and cuts it to n characters with "…".
func shorten(s string, n int) string {
	s = oneLine(s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// esc escapes text for HTML and SVG content and attributes.
func esc(s string) string { return html.EscapeString(oneLine(s)) }

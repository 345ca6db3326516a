package reports

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
)

// faultCheck is a failing check whose transcript has every kind of entry
// and the faults the diagram draws specially.
func faultCheck() Check {
	msg := func(at float64, dir string, seq int64, raw string) Entry {
		return Entry{AtMs: at, Kind: "message", Dir: dir, Seq: seq, Raw: json.RawMessage(raw)}
	}
	return Check{
		ID: "IDEM-RETRY-SAME-KEY", Title: "a retry with the same key runs the effect once", Level: Must, Status: Fail,
		Reason:    "the effect ran 2 times for key k1",
		Spec:      []string{"specification/2026-07-28/server/tools.mdx", "seeds/000_a0534be125a2219a.txt"},
		Clause:    "Retry with the same key and identical arguments.",
		Transport: "stdio", ProtocolVersion: "2026-07-28", DurationMs: 77.25,
		Transcript: []Entry{
			{AtMs: 0.5, Kind: "process", Text: "started pid 42: server"},
			msg(1, "c2s", 1, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"open_ticket","arguments":{"operation_key":"k1"}}}`),
			msg(2, "s2c", 2, `{"jsonrpc":"2.0","id":7,"result":{}}`),
			{AtMs: 2.1, Kind: "fault", Dir: "s2c", Seq: 2, Rule: "lose-reply", Fault: "drop", Text: "message swallowed"},
			{AtMs: 3, Kind: "stderr", Text: "ticket opened for k1"},
			msg(4, "c2s", 3, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`),
			{AtMs: 4.1, Kind: "fault", Dir: "c2s", Seq: 3, Rule: "hold-cancel", Fault: "hold", Text: "held until a matching message passes"},
			msg(5, "s2c", 4, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1,"total":2}}`),
			msg(6, "s2c", 5, `{"jsonrpc":"2.0","id":9,"error":{"code":-32800,"message":"cancelled"}}`),
			{AtMs: 6.2, Kind: "fault", Dir: "c2s", Seq: 3, Rule: "hold-cancel", Fault: "release", Text: "trigger message passed"},
			{AtMs: 7, Kind: "message", Dir: "s2c", Seq: 6, Raw: json.RawMessage(`{"jsonrpc":"2.0","method":"bogus"}`), Fault: "inject"},
			{AtMs: 8, Kind: "http", Dir: "c2s", Stream: "POST#1", HTTP: &HTTPHead{Method: "POST", Path: "/mcp"}},
			{AtMs: 9, Kind: "http", Dir: "s2c", Stream: "POST#1", HTTP: &HTTPHead{Status: 200, Header: map[string][]string{"Content-Type": {"text/event-stream"}}}},
			{AtMs: 10, Kind: "message", Dir: "s2c", Stream: "POST#1", Text: "sse comment: keep-alive"},
			msg(11, "c2s", 7, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"open_ticket","arguments":{"operation_key":"k1"}}}`),
			{AtMs: 11.5, Kind: "fault", Dir: "c2s", Seq: 7, Rule: "twice", Fault: "duplicate", Text: "delivered 1 extra time(s)"},
			{AtMs: 12, Kind: "message", Dir: "s2c", Seq: 8, Text: "garbage on stdout"},
			{AtMs: 13, Kind: "fault", Dir: "s2c", Seq: 8, Rule: "boom", Fault: "crash", Text: "SIGKILL to the server process group; message lost with it"},
			{AtMs: 14, Kind: "note", Text: "probe: executions=2"},
			{AtMs: 15, Kind: "process", Text: "exited with signal killed"},
		},
	}
}

// htmlReport is the sample report with the fault check and a retry-class
// table.
func htmlReport() *Report {
	r := sampleReport()
	r.Target.Transport, r.Target.ProtocolVersion = "stdio,http", "2026-07-28,2025-11-25"
	r.Checks = append(r.Checks, faultCheck())
	r.RetryClasses = []ToolClass{
		{Target: "reference", Tool: "lookup_ticket", Class: Safe, Evidence: []string{"readOnlyHint: true"}},
		{Target: "reference", Tool: "open_ticket", Class: Conditional, Key: "operation_key", Evidence: []string{"manifest role mutation, key operation_key", "IDEM-RETRY-SAME-KEY FAIL"}},
	}
	return r
}

func TestWriteHTMLGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteHTML(&b, htmlReport(), HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.html", b.Bytes())
	wellFormedSVG(t, b.String())
}

// wellFormedSVG parses every inline <svg> of page as strict XML: the
// diagram writer escapes everything itself, so a mistake shows here.
func wellFormedSVG(t *testing.T, page string) {
	t.Helper()
	svgs := regexp.MustCompile(`(?s)<svg .*?</svg>`).FindAllString(page, -1)
	if len(svgs) == 0 {
		t.Fatal("no <svg> in the page")
	}
	for i, s := range svgs {
		d := xml.NewDecoder(strings.NewReader(s))
		d.Strict = true
		for {
			_, err := d.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("svg %d is not well-formed XML: %v\n%s", i, err, s)
			}
		}
	}
}

func TestHTMLSummaryAndSections(t *testing.T) {
	var b bytes.Buffer
	if err := WriteHTML(&b, htmlReport(), HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	wantContains(t, "page", page,
		`<td>reference</td>`, // target
		`2026-07-28 (stateless era), 2025-11-25 (stateful era)`, // eras
		`ERROR: the harness could not run 1 check(s) (exit 2)`,
		// MUST: PASS 2, FAIL 2, WARN 0, SKIP 1, ERROR 1.
		`<tr><th>MUST</th><td class="n">2</td><td class="n">2</td><td class="n">0</td><td class="n">1</td><td class="n">1</td><td class="n">6</td></tr>`,
		`id="art-cancel"`, `id="art-retry"`, `id="art-task"`,
		`<td class="mono">open_ticket</td><td><b>Conditional</b></td><td class="mono">operation_key</td>`,
		`href="https://modelcontextprotocol.io/specification/2026-07-28/server/tools"`,
		`seeds/000_a0534be125a2219a.txt</div>`, // not a page of the site: no link
		`transcript as text (20 entries)`,
	)
	// Areas with no check in the run say so.
	flow := page[strings.Index(page, `id="art-flow"`):]
	flow = flow[:strings.Index(flow, "</section>")]
	if !strings.Contains(flow, "not run") {
		t.Errorf("the FLOW section does not say not run:\n%s", flow)
	}
	// The problems come before the artefacts and the other checks.
	if p, a := strings.Index(page, `id="problems"`), strings.Index(page, `id="artefacts"`); p < 0 || a < p {
		t.Errorf("problems at %d, artefacts at %d", p, a)
	}
}

func TestHTMLVersionFromChecks(t *testing.T) {
	var b bytes.Buffer
	r := &Report{Target: Target{Name: "x"}, Checks: []Check{{ID: "CANCEL-HTTP-CLOSE", Status: Pass, ProtocolVersion: "2026-07-28"}}}
	if err := WriteHTML(&b, r, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "<td>2026-07-28 (stateless era)</td>") {
		t.Error("the version the checks ran in is not shown when the target has none")
	}
}

func TestHTMLMarksFaults(t *testing.T) {
	d := sequenceDiagram(faultCheck().Transcript, 0)
	wantContains(t, "diagram", d.SVG,
		`class="lost"`,    // the dropped reply and the message lost in the crash
		`class="hold"`,    // the held cancellation
		`injected: bogus`, // the synthetic message
		`>drop</text>`, `>hold</text>`, `>release</text>`, `>duplicate</text>`, `>crash</text>`,
		`>↳ notifications/cancelled of`,
		`POST /mcp [POST#1]`, `200 text/event-stream [POST#1]`, `: keep-alive`,
		`stderr: ticket opened for k1`, `note: probe: executions=2`,
		`tools/call open_ticket #7`, `result #7`, `error -32800 #9`, `notifications/progress 1/2`,
	)
	if n := strings.Count(d.SVG, `class="lost"`); n != 2 {
		t.Errorf("%d lost marks, want 2 (drop, crash)", n)
	}
	if d.Rows != 20 || d.Omitted != 0 {
		t.Errorf("rows %d omitted %d", d.Rows, d.Omitted)
	}
}

func TestHTMLTruncatesLongTranscripts(t *testing.T) {
	var entries []Entry
	for i := range 300 {
		entries = append(entries, Entry{AtMs: float64(i), Kind: "message", Dir: "c2s", Raw: json.RawMessage(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i))})
	}
	d := sequenceDiagram(entries, 30)
	if d.Rows != 30 || d.Omitted != 300-29 {
		t.Fatalf("rows %d omitted %d, want 30 and %d", d.Rows, d.Omitted, 300-29)
	}
	wantContains(t, "diagram", d.SVG, "ping #0<", "ping #19<", "ping #299<", "271 entries omitted here")
	if strings.Contains(d.SVG, "ping #20<") {
		t.Error("an omitted entry is drawn")
	}
	var b bytes.Buffer
	r := &Report{Target: Target{Name: "long"}, Checks: []Check{{ID: "X-LONG", Status: Fail, Level: Must, Transcript: entries}}}
	if err := WriteHTML(&b, r, HTMLOptions{MaxDiagramRows: 30}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "The diagram leaves out 271 of 300 entries") {
		t.Error("the page does not say the diagram was cut")
	}
}

// TestHTMLEscapesHostileText puts markup everywhere a target or a check
// can put text: none of it may become an element, an attribute or a link.
func TestHTMLEscapesHostileText(t *testing.T) {
	const evil = `<script>alert(1)</script><img src=x onerror=alert(2)>"'&`
	r := &Report{
		Tool:   Tool{Name: "mcp-conform", Version: evil},
		Target: Target{Name: evil, Transport: evil, ProtocolVersion: evil, Command: evil, URL: "javascript:alert(3)", Mutant: evil},
		Checks: []Check{{
			ID: "CANCEL-" + evil, Title: evil, Level: Must, Status: Fail, Reason: evil, Clause: evil,
			Spec: []string{"specification/" + evil, "javascript:alert(4)"}, Transport: evil, ProtocolVersion: evil,
			Transcript: []Entry{
				{Kind: "message", Dir: "c2s", Raw: json.RawMessage(`{"jsonrpc":"2.0","id":"` + strings.ReplaceAll(evil, `"`, `\"`) + `","method":"<script>x</script>"}`)},
				{Kind: "message", Dir: "s2c", Text: evil},
				{Kind: "fault", Dir: "s2c", Rule: evil, Fault: evil, Text: evil},
				{Kind: "stderr", Text: evil + "\x1b[31m\x00"},
				{Kind: "process", Text: evil},
				{Kind: "note", Text: evil},
				{Kind: evil, Dir: evil, Text: evil},
				{Kind: "http", Dir: "c2s", Stream: evil, HTTP: &HTTPHead{Method: evil, Path: evil}},
			},
		}},
		RetryClasses: []ToolClass{{Target: evil, Tool: evil, Class: RetryClass(evil), Key: evil, Evidence: []string{evil}}},
	}
	for _, base := range []string{"", "javascript:alert(5)//", "spec/"} {
		var b bytes.Buffer
		if err := WriteHTML(&b, r, HTMLOptions{SpecBase: base}); err != nil {
			t.Fatal(err)
		}
		page := strings.ToLower(b.String())
		for _, tag := range regexp.MustCompile(`<([a-z0-9]+)`).FindAllStringSubmatch(page, -1) {
			if !allowedTags[tag[1]] {
				t.Errorf("base %q: element <%s> in the page", base, tag[1])
			}
		}
		for _, tag := range regexp.MustCompile(`<[a-z0-9]+(?:\s+[a-z:-]+(?:="[^"]*")?)*\s*/?>`).FindAllString(page, -1) {
			for _, a := range regexp.MustCompile(`\s([a-z:-]+)(?:="[^"]*")?`).FindAllStringSubmatch(tag, -1) {
				if strings.HasPrefix(a[1], "on") {
					t.Errorf("base %q: event handler attribute in %s", base, tag)
				}
			}
		}
		for _, bad := range []string{"<script", "<img", `href="javascript:`, "\x00", "\x1b"} {
			if strings.Contains(page, bad) {
				i := strings.Index(page, bad)
				t.Errorf("base %q: page contains %q: …%s…", base, bad, page[max(0, i-80):min(len(page), i+80)])
			}
		}
		if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("base %q: the hostile text is not shown escaped", base)
		}
		wellFormedSVG(t, b.String())
	}
}

// allowedTags are the elements the report itself writes.
var allowedTags = map[string]bool{}

func init() {
	for _, t := range strings.Fields(`html head meta title style body main h1 h2 h3 section table tr th td div p nav a
		code pre span blockquote details summary article b br svg rect text line polygon g circle`) {
		allowedTags[t] = true
	}
}

func TestSpecHref(t *testing.T) {
	for _, tc := range []struct{ base, ref, want string }{
		{DefaultSpecBase, "specification/2026-07-28/basic/patterns/cancellation.mdx", "https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/cancellation"},
		{DefaultSpecBase, "extensions/tasks/overview.mdx", "https://modelcontextprotocol.io/extensions/tasks/overview"},
		{DefaultSpecBase, "seeds/x.txt", ""},
		{"https://modelcontextprotocol.io", "specification/2025-11-25/basic/transports.mdx", "https://modelcontextprotocol.io/specification/2025-11-25/basic/transports"},
		{"spec", "specification/2025-11-25/basic/transports.mdx", "spec/specification/2025-11-25/basic/transports.mdx"},
		{"../shared/spec/", "seeds/x.txt", "../shared/spec/seeds/x.txt"},
		{DefaultSpecBase, "", ""},
	} {
		if got := specHref(tc.base, tc.ref); got != tc.want {
			t.Errorf("specHref(%q, %q) = %q, want %q", tc.base, tc.ref, got, tc.want)
		}
	}
}

func TestWriteHTMLNil(t *testing.T) {
	if err := WriteHTML(io.Discard, nil, HTMLOptions{}); err == nil {
		t.Error("nil report accepted")
	}
}

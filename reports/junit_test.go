package reports

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"strings"
	"testing"
)

// Parsed-back JUnit, independent of the writer's own types.
type pSuites struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Skipped  int      `xml:"skipped,attr"`
	Suites   []pSuite `xml:"testsuite"`
}

type pSuite struct {
	Name      string  `xml:"name,attr"`
	Tests     int     `xml:"tests,attr"`
	Failures  int     `xml:"failures,attr"`
	Errors    int     `xml:"errors,attr"`
	Skipped   int     `xml:"skipped,attr"`
	Time      string  `xml:"time,attr"`
	Timestamp string  `xml:"timestamp,attr"`
	Props     []pProp `xml:"properties>property"`
	Cases     []pCase `xml:"testcase"`
	SystemOut *string `xml:"system-out"`
}

type pProp struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type pProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type pCase struct {
	Classname string    `xml:"classname,attr"`
	Name      string    `xml:"name,attr"`
	Time      string    `xml:"time,attr"`
	Props     []pProp   `xml:"properties>property"`
	Failure   *pProblem `xml:"failure"`
	Error     *pProblem `xml:"error"`
	Skipped   *pProblem `xml:"skipped"`
	SystemOut *string   `xml:"system-out"`
}

func parseJUnit(t *testing.T, data []byte) pSuites {
	t.Helper()
	// A token pass first: it reports the exact offset of any malformation.
	d := xml.NewDecoder(bytes.NewReader(data))
	for {
		if _, err := d.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("JUnit output is not well-formed XML: %v\n%s", err, data)
		}
	}
	var s pSuites
	if err := xml.Unmarshal(data, &s); err != nil {
		t.Fatalf("unmarshal JUnit: %v", err)
	}
	return s
}

func TestWriteJUnitGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, sampleReport()); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.junit.xml", buf.Bytes())
}

func TestWriteJUnitStructure(t *testing.T) {
	r := sampleReport()
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, r); err != nil {
		t.Fatal(err)
	}
	doc := parseJUnit(t, buf.Bytes())
	if doc.Tests != 6 || doc.Failures != 1 || doc.Errors != 1 || doc.Skipped != 1 {
		t.Errorf("testsuites counts = %+v", doc)
	}
	if len(doc.Suites) != 1 {
		t.Fatalf("%d testsuites, want 1", len(doc.Suites))
	}
	s := doc.Suites[0]
	if s.Name != "reference" || s.Tests != 6 || s.Failures != 1 || s.Errors != 1 || s.Skipped != 1 {
		t.Errorf("testsuite = %s tests=%d failures=%d errors=%d skipped=%d", s.Name, s.Tests, s.Failures, s.Errors, s.Skipped)
	}
	if s.Time != "4.321" && s.Time != "4.322" {
		t.Errorf("testsuite time = %q, want the run's 4.3215s", s.Time)
	}
	if s.Timestamp != "2026-03-01T12:00:00" {
		t.Errorf("timestamp = %q", s.Timestamp)
	}
	props := map[string]string{}
	for _, p := range s.Props {
		props[p.Name] = p.Value
	}
	for k, v := range map[string]string{"transport": "stdio", "protocolVersion": "2025-11-25", "mutant": "no-cancel"} {
		if props[k] != v {
			t.Errorf("property %s = %q, want %q", k, props[k], v)
		}
	}
	if len(s.Cases) != len(r.Checks) {
		t.Fatalf("%d testcases, want %d", len(s.Cases), len(r.Checks))
	}

	type want struct {
		failure, err, skipped, systemOut, warnProp bool
	}
	wants := map[Status]want{
		Pass:  {},
		Fail:  {failure: true, systemOut: true},
		Error: {err: true, systemOut: true},
		Skip:  {skipped: true},
		Warn:  {systemOut: true, warnProp: true},
	}
	for i, c := range r.Checks {
		tc := s.Cases[i]
		w := wants[c.Status]
		t.Run(c.ID, func(t *testing.T) {
			if tc.Classname != "mcp-conform."+strings.Split(c.ID, "-")[0] {
				t.Errorf("classname = %q", tc.Classname)
			}
			if tc.Name != c.ID+" "+c.Title {
				t.Errorf("name = %q", tc.Name)
			}
			if (tc.Failure != nil) != w.failure || (tc.Error != nil) != w.err || (tc.Skipped != nil) != w.skipped {
				t.Errorf("failure=%v error=%v skipped=%v, want %+v", tc.Failure != nil, tc.Error != nil, tc.Skipped != nil, w)
			}
			if (tc.SystemOut != nil) != w.systemOut {
				t.Errorf("system-out present = %v, want %v", tc.SystemOut != nil, w.systemOut)
			}
			warnProp := len(tc.Props) == 1 && tc.Props[0] == pProp{"status", "WARN"}
			if warnProp != w.warnProp {
				t.Errorf("status=WARN property = %v, want %v (props %v)", warnProp, w.warnProp, tc.Props)
			}
			for _, p := range []*pProblem{tc.Failure, tc.Error, tc.Skipped} {
				if p != nil && p.Message != c.Reason {
					t.Errorf("message = %q, want reason %q", p.Message, c.Reason)
				}
			}
			if tc.Failure != nil && tc.Failure.Type != "MUST" {
				t.Errorf("failure type = %q, want MUST", tc.Failure.Type)
			}
			if c.Status == Warn && !strings.Contains(*tc.SystemOut, c.Reason) {
				t.Errorf("WARN reason not in system-out: %q", *tc.SystemOut)
			}
			if w.systemOut && len(c.Transcript) > 0 && !strings.Contains(*tc.SystemOut, "transcript (") {
				t.Errorf("transcript not in system-out: %q", *tc.SystemOut)
			}
		})
	}
	fail := s.Cases[1]
	for _, part := range []string{`c2s  {"jsonrpc":"2.0","id":7,`, "FAULT rule=drop-first-reply fault=drop", `stderr | ticket opened <k1> & "quoted"`, "note: retrying"} {
		if !strings.Contains(*fail.SystemOut, part) {
			t.Errorf("FAIL system-out lacks %q:\n%s", part, *fail.SystemOut)
		}
	}
}

func TestWriteJUnitHostileText(t *testing.T) {
	nasty := "nul\x00 bell\x07 esc\x1b[31m bad\xff\xfe utf8 \xed\xa0\x80 surrogate \uFFFE nonchar ]]> cdata-end <tag> & \"q\" 'a' ok é 🦀"
	r := &Report{
		Target: Target{Name: "srv\x00name", Transport: "stdio\x01", Mutant: "m\xff"},
		Checks: []Check{
			{ID: "ROBUST-\x00GARBAGE", Title: "t\x0b", Level: Must, Status: Fail, Reason: nasty,
				Transcript: []Entry{
					{Kind: "message", Dir: "s2c", Text: nasty},
					{Kind: "message", Dir: "s2c", Raw: json.RawMessage(`{"s":"` + nasty + `"}`)},
					{Kind: "stderr", Text: nasty},
					{Kind: "note", Text: nasty},
					{Kind: "fault", Rule: nasty, Fault: nasty, Dir: nasty},
				}},
			{ID: "ROBUST-W", Status: Warn, Reason: nasty, Transcript: []Entry{{Kind: "stderr", Text: nasty}}},
			{ID: "ROBUST-S", Status: Skip, Reason: nasty},
			{ID: "ROBUST-E", Status: Error, Reason: nasty, Clause: nasty, Spec: []string{nasty}},
			{ID: "ROBUST-U", Status: "\x00BOGUS", Reason: nasty},
		},
	}
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, r); err != nil {
		t.Fatal(err)
	}
	doc := parseJUnit(t, buf.Bytes())
	s := doc.Suites[0]
	if s.Failures != 1 || s.Errors != 2 || s.Skipped != 1 || s.Tests != 5 {
		t.Errorf("counts: %+v", s)
	}
	msg := s.Cases[0].Failure.Message
	for _, part := range []string{`nul\x00`, `bell\x07`, `\xff\xfe`, "\uFFFD nonchar", "]]> cdata-end <tag> &", "é 🦀"} {
		if !strings.Contains(msg, part) {
			t.Errorf("failure message %q lacks %q", msg, part)
		}
	}
	if !strings.Contains(*s.Cases[0].SystemOut, "]]> cdata-end") {
		t.Errorf("system-out lost the ]]> sequence: %q", *s.Cases[0].SystemOut)
	}
	if s.Cases[4].Error == nil || !strings.Contains(s.Cases[4].Error.Message, "unknown status") {
		t.Errorf("unknown status not reported as an error: %+v", s.Cases[4])
	}
}

func TestWriteJUnitEmpty(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, &Report{}); err != nil {
		t.Fatal(err)
	}
	doc := parseJUnit(t, buf.Bytes())
	if doc.Tests != 0 || len(doc.Suites) != 1 || doc.Suites[0].Name == "" {
		t.Errorf("empty report: %+v", doc)
	}
	if err := WriteJUnit(&buf, nil); err == nil {
		t.Error("nil report accepted")
	}
}

func FuzzWriteJUnit(f *testing.F) {
	f.Add("reason", "text", []byte(`{"a":1}`), "PASS")
	f.Add("\x00\xff", "\x1b]]>", []byte("\x00{"), "FAIL")
	f.Add("", "", []byte(nil), "WARN")
	f.Fuzz(func(t *testing.T, reason, text string, raw []byte, status string) {
		r := &Report{
			Target: Target{Name: text, Mutant: reason},
			Checks: []Check{{ID: text, Title: reason, Status: Status(status), Reason: reason,
				Transcript: []Entry{
					{Kind: "message", Dir: "c2s", Raw: raw, Text: text},
					{Kind: "stderr", Text: text},
					{Kind: text, Text: reason, Raw: raw},
				}}},
		}
		for _, st := range []Status{Status(status), Fail, Warn, Error} {
			r.Checks[0].Status = st
			var buf bytes.Buffer
			if err := WriteJUnit(&buf, r); err != nil {
				t.Fatal(err)
			}
			parseJUnit(t, buf.Bytes())
		}
	})
}

// TestWriteJUnitRunDetails covers what a CI reader needs beyond the
// verdicts: one testcase per check, transport and version (a --spec all
// run), an expected failure of the baseline as skipped with its reason and
// evidence, the stale entries and the retry-class table on the suite.
func TestWriteJUnitRunDetails(t *testing.T) {
	r := &Report{
		Target: Target{Name: "reference", Transport: "stdio,http", ProtocolVersion: "2026-07-28,2025-11-25"},
		Checks: []Check{
			{ID: "CANCEL-A", Title: "a", Level: Must, Status: Fail, Reason: "answered after cancel", Transport: "stdio", ProtocolVersion: "2026-07-28",
				Transcript: []Entry{{AtMs: 1, Kind: "message", Dir: "s2c", Raw: json.RawMessage(`{"jsonrpc":"2.0","id":1,"result":{}}`)}}},
			{ID: "CANCEL-A", Title: "a", Level: Should, Status: Warn, Reason: "answered after cancel", Transport: "stdio", ProtocolVersion: "2025-11-25"},
			{ID: "SSE-B", Title: "b", Level: Should, Status: Warn, Reason: "no keep-alive", Transport: "http", ProtocolVersion: "2026-07-28"},
			{ID: "PROGRESS-C", Title: "c", Level: Must, Status: Pass, Transport: "stdio", ProtocolVersion: "2026-07-28"},
		},
		RetryClasses: []ToolClass{
			{Target: "reference", Tool: "open_ticket", Class: Conditional, Key: "operation_key", Evidence: []string{"manifest mutation role"}},
			{Target: "reference", Tool: "lookup", Class: Safe},
		},
	}
	(&Baseline{File: "baseline.yaml", Entries: []BaselineEntry{
		{ID: "CANCEL-A", Reason: "upstream bug 7", Spec: "2026-07-28"},
		{ID: "PROGRESS-C", Reason: "was flaky"},
	}}).Apply(r)
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "run-details.junit.xml", buf.Bytes())
	doc := parseJUnit(t, buf.Bytes())
	s := doc.Suites[0]
	if s.Tests != 4 || s.Failures != 0 || s.Skipped != 1 {
		t.Errorf("counts tests=%d failures=%d skipped=%d, want 4 0 1", s.Tests, s.Failures, s.Skipped)
	}
	names := map[string]bool{}
	for _, c := range s.Cases {
		if names[c.Name] {
			t.Errorf("two testcases named %q", c.Name)
		}
		names[c.Name] = true
	}
	if !names["CANCEL-A [stdio 2026-07-28] a"] || !names["CANCEL-A [stdio 2025-11-25] a"] {
		t.Errorf("names lack transport and version: %v", names)
	}
	exp := s.Cases[0]
	if exp.Skipped == nil || exp.Skipped.Message != "expected FAIL (baseline: upstream bug 7): answered after cancel" {
		t.Errorf("expected failure: %+v", exp.Skipped)
	}
	if exp.SystemOut == nil || !strings.Contains(*exp.SystemOut, "transcript (1 entry)") {
		t.Errorf("expected failure lost its transcript: %v", exp.SystemOut)
	}
	if exp.Failure != nil || exp.Error != nil {
		t.Error("expected failure reported as a failure")
	}
	// The unlisted WARN of the other version is a passing testcase.
	if w := s.Cases[1]; w.Skipped != nil || w.Failure != nil || w.SystemOut == nil {
		t.Errorf("unlisted WARN: %+v", w)
	}
	props := map[string]string{}
	for _, p := range s.Props {
		props[p.Name] = p.Value
	}
	for k, v := range map[string]string{
		"retryClass reference open_ticket": "Conditional (key operation_key): manifest mutation role",
		"retryClass reference lookup":      "Safe",
		"baseline":                         "baseline.yaml",
		"baseline.expected":                "1",
		"baseline.stale":                   "PROGRESS-C",
	} {
		if props[k] != v {
			t.Errorf("suite property %s = %q, want %q", k, props[k], v)
		}
	}
}

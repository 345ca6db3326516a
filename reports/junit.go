package reports

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The JUnit document. Field order is element order.
type junitSuites struct {
	XMLName xml.Name `xml:"testsuites"`
	Name    string   `xml:"name,attr"`
	junitCounts
	Suites []junitSuite `xml:"testsuite"`
}

// junitCounts are the count and time attributes of <testsuites> and of
// <testsuite>, in this order.
type junitCounts struct {
	Tests    int    `xml:"tests,attr"`
	Failures int    `xml:"failures,attr"`
	Errors   int    `xml:"errors,attr"`
	Skipped  int    `xml:"skipped,attr"`
	Time     string `xml:"time,attr"`
}

type junitSuite struct {
	Name string `xml:"name,attr"`
	junitCounts
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties *junitProps     `xml:"properties"`
	Cases      []junitTestCase `xml:"testcase"`
	SystemOut  *junitText      `xml:"system-out"`
}

type junitProps struct {
	Props []junitProp `xml:"property"`
}

type junitProp struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitTestCase struct {
	Classname  string        `xml:"classname,attr"`
	Name       string        `xml:"name,attr"`
	Time       string        `xml:"time,attr"`
	Properties *junitProps   `xml:"properties"`
	Failure    *junitProblem `xml:"failure"`
	Error      *junitProblem `xml:"error"`
	Skipped    *junitSkipped `xml:"skipped"`
	SystemOut  *junitText    `xml:"system-out"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",cdata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

type junitText struct {
	Text string `xml:",cdata"`
}

// WriteJUnit writes r as JUnit XML, the shape CI systems (GitHub, GitLab,
// Jenkins, Azure) display: one <testsuites> holding one <testsuite> named
// after the target, with the target's transport, protocolVersion and mutant
// as <properties>, and one <testcase> per check, classname
// "mcp-conform.<AREA>" and name "<ID> <title>". Counts are recomputed from
// the checks.
//
// A FAIL check carries <failure message=reason type=level>, an ERROR check
// <error message=reason>, a SKIP check <skipped message=reason/>. A WARN check
// is a passing testcase with the property status=WARN and its reason in
// <system-out>. A FAIL or WARN the baseline expects is <skipped> with the
// baseline's reason (properties status and expected). When the report holds
// several protocol versions, each name carries its version too. The
// retry-class table and the baseline's result are suite properties
// (retryClass:TARGET/TOOL, baseline.expected, baseline.stale) and the
// suite's <system-out>. The transcripts of FAIL, WARN and ERROR checks are written as
// FormatTranscript lines in <system-out>. A check with an unknown status is
// reported as an error, since it is a harness bug.
//
// The output is well-formed XML whatever the transcripts hold: invalid UTF-8
// and characters XML 1.0 forbids (NUL, most C0 controls) are escaped as \xNN
// or replaced with U+FFFD.
func WriteJUnit(w io.Writer, r *Report) error {
	if r == nil {
		return errors.New("reports: nil report")
	}
	suite := junitSuite{
		Name:        xmlSafe(orDefault(r.Target.Name, "mcp-conform")),
		junitCounts: junitCounts{Tests: len(r.Checks)},
		Properties:  suiteProps(r),
		Cases:       make([]junitTestCase, 0, len(r.Checks)),
	}
	if !r.StartedAt.IsZero() {
		suite.Timestamp = r.StartedAt.UTC().Format("2006-01-02T15:04:05")
	}
	manyVersions := strings.Contains(r.Target.ProtocolVersion, ",")
	var sumMs float64
	for _, c := range r.Checks {
		tc := junitCase(c, manyVersions)
		switch {
		case tc.Failure != nil:
			suite.Failures++
		case tc.Error != nil:
			suite.Errors++
		case tc.Skipped != nil:
			suite.Skipped++
		}
		sumMs += finite(c.DurationMs)
		suite.Cases = append(suite.Cases, tc)
	}
	totalMs := finite(r.Duration)
	if totalMs <= 0 {
		totalMs = sumMs
	}
	suite.Time = seconds(totalMs)
	if out := suiteOut(r); out != "" {
		suite.SystemOut = &junitText{Text: xmlSafe(out)}
	}
	doc := junitSuites{Name: "mcp-conform", junitCounts: suite.junitCounts, Suites: []junitSuite{suite}}
	out, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("reports: encode JUnit report: %w", err)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	out = append(out, '\n')
	_, err = w.Write(out)
	return err
}

// suiteProps lists what a CI reader needs to know about the target.
func suiteProps(r *Report) *junitProps {
	var props []junitProp
	add := func(name, value string) {
		if value != "" {
			props = append(props, junitProp{Name: name, Value: xmlSafe(value)})
		}
	}
	add("transport", r.Target.Transport)
	add("protocolVersion", r.Target.ProtocolVersion)
	add("mutant", r.Target.Mutant)
	add("command", r.Target.Command)
	add("url", r.Target.URL)
	add("tool", strings.TrimSpace(r.Tool.Name+" "+r.Tool.Version))
	add("schema", SchemaV1)
	if r.Seed != 0 {
		add("seed", strconv.FormatUint(r.Seed, 10))
	} else if len(r.Seeds) > 0 {
		add("seeds", joinSeeds(r.Seeds))
	}
	if r.Repeat > 1 {
		add("repeat", strconv.Itoa(r.Repeat))
	}
	props = append(props, retryClassProps(r.RetryClasses)...)
	if b := r.Baseline; b != nil {
		add("baseline", orDefault(b.File, "-"))
		add("baseline.expected", strconv.Itoa(b.Expected))
		var stale []string
		for _, e := range b.Stale {
			stale = append(stale, e.ID+qualifiers(e))
		}
		add("baseline.stale", strings.Join(stale, ", "))
	}
	return &junitProps{Props: props}
}

// suiteOut is the testsuite's <system-out>: the retry-class table and what
// the baseline did, for a person reading the CI log.
func suiteOut(r *Report) string {
	var b strings.Builder
	if len(r.RetryClasses) > 0 {
		b.WriteString("retry classes (Safe: retry; Conditional: retry with the same key and arguments; Unsafe: reconcile first):\n")
		for _, tc := range r.RetryClasses {
			fmt.Fprintf(&b, "  %-12s %s/%s", tc.Class, tc.Target, tc.Tool)
			if tc.Key != "" {
				fmt.Fprintf(&b, " key=%s", tc.Key)
			}
			if len(tc.Evidence) > 0 {
				fmt.Fprintf(&b, " (%s)", strings.Join(tc.Evidence, "; "))
			}
			b.WriteByte('\n')
		}
	}
	if r.Baseline != nil {
		var bb bytes.Buffer
		writeBaseline(&bb, r, false)
		b.Write(bb.Bytes())
	}
	return b.String()
}

// junitCase renders one check; withVersion names its protocol version too
// (a --spec all run has one testcase per check, transport and version).
func junitCase(c Check, withVersion bool) junitTestCase {
	name := c.ID
	switch {
	case c.Transport != "" && withVersion && c.ProtocolVersion != "":
		name += " [" + c.Transport + " " + c.ProtocolVersion + "]"
	case c.Transport != "":
		name += " [" + c.Transport + "]"
	case withVersion && c.ProtocolVersion != "":
		name += " [" + c.ProtocolVersion + "]"
	}
	if c.Title != "" {
		name += " " + c.Title
	}
	tc := junitTestCase{
		Classname: xmlSafe("mcp-conform." + area(c.ID)),
		Name:      xmlSafe(strings.TrimSpace(name)),
		Time:      seconds(c.DurationMs),
	}
	reason := xmlSafe(c.Reason)
	if c.Expected != "" && (c.Status == Fail || c.Status == Warn) {
		// An expected failure (baseline) neither fails nor passes: CI
		// shows it as skipped, with the baseline's reason and the evidence.
		tc.Skipped = &junitSkipped{Message: xmlSafe(fmt.Sprintf("expected %s (baseline: %s): %s", c.Status, c.Expected, c.Reason))}
		tc.Properties = &junitProps{Props: []junitProp{{Name: "status", Value: string(c.Status)}, {Name: "expected", Value: xmlSafe(c.Expected)}}}
		if out := systemOut(c); out != "" {
			tc.SystemOut = &junitText{Text: xmlSafe(out)}
		}
		return tc
	}
	switch c.Status {
	case Pass:
	case Skip:
		tc.Skipped = &junitSkipped{Message: reason}
	case Fail:
		tc.Failure = &junitProblem{
			Message: reason,
			Type:    string(orDefault(c.Level, Must)),
			Text:    xmlSafe(problemText(c)),
		}
	case Warn:
		tc.Properties = &junitProps{Props: []junitProp{{Name: "status", Value: string(Warn)}}}
	case Error:
		tc.Error = &junitProblem{Message: reason, Text: xmlSafe(problemText(c))}
	default:
		msg := xmlSafe(fmt.Sprintf("unknown status %q", c.Status))
		if reason != "" {
			msg += ": " + reason
		}
		tc.Error = &junitProblem{Message: msg, Type: "harness", Text: xmlSafe(problemText(c))}
	}
	if c.Status != Pass && c.Status != Skip {
		if out := systemOut(c); out != "" {
			tc.SystemOut = &junitText{Text: xmlSafe(out)}
		}
	}
	if c.Flaky {
		// A flaky check keeps its worst verdict's element; the runs are
		// properties (flaky, run.1 … run.N: "STATUS reason").
		if tc.Properties == nil {
			tc.Properties = &junitProps{}
		}
		tc.Properties.Props = append(tc.Properties.Props, junitProp{Name: "flaky", Value: "true"})
		for i, run := range c.Runs {
			tc.Properties.Props = append(tc.Properties.Props, junitProp{Name: fmt.Sprintf("run.%d", i+1),
				Value: xmlSafe(strings.TrimSpace(string(run.Status) + " " + run.Reason))})
		}
	}
	return tc
}

// problemText is the body of a <failure> or <error>: the reason, then where
// the rule comes from.
func problemText(c Check) string {
	var b strings.Builder
	b.WriteString(c.Reason)
	b.WriteByte('\n')
	b.WriteString(references(c))
	return strings.TrimSpace(b.String())
}

// references lists the level, clause and specification files of a check, one
// per line.
func references(c Check) string {
	var b strings.Builder
	if c.Level != "" {
		fmt.Fprintf(&b, "level: %s\n", c.Level)
	}
	if c.Clause != "" {
		fmt.Fprintf(&b, "clause: %s\n", c.Clause)
	}
	if c.Source != "" {
		fmt.Fprintf(&b, "source: %s\n", c.Source.Describe(c.ProtocolVersion))
	}
	for _, s := range c.Spec {
		fmt.Fprintf(&b, "spec: %s\n", s)
	}
	return b.String()
}

// systemOut is what a FAIL, WARN or ERROR testcase prints: for WARN the reason
// and references (there is no failure element to hold them), then the
// transcript.
func systemOut(c Check) string {
	var b strings.Builder
	if c.Status == Warn {
		fmt.Fprintf(&b, "WARN (%s): %s\n", orDefault(c.Level, Should), c.Reason)
		b.WriteString(references(c))
	}
	if len(c.Transcript) > 0 {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "transcript (%d %s):\n", len(c.Transcript), plural(len(c.Transcript), "entry", "entries"))
		FormatTranscript(&b, c.Transcript)
	}
	return b.String()
}

// area is the AREA of an AREA-NAME check id, or the whole id when it has no
// dash.
func area(id string) string {
	if id == "" {
		return "UNKNOWN"
	}
	a, _, _ := strings.Cut(id, "-")
	return a
}

// seconds renders milliseconds as the seconds JUnit wants, to the millisecond.
func seconds(ms float64) string {
	ms = finite(ms)
	if ms < 0 {
		ms = 0
	}
	return strconv.FormatFloat(ms/1000, 'f', 3, 64)
}

// orDefault returns v, or def when v is empty.
func orDefault[T ~string](v, def T) T {
	if v == "" {
		return def
	}
	return v
}

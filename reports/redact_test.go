package reports

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestSensitiveHeader(t *testing.T) {
	for name, want := range map[string]bool{
		"Authorization": true, "proxy-authorization": true, "Cookie": true, "Set-Cookie": true,
		"X-Api-Key": true, "X-Auth-Token": true, "X-Client-Secret": true, "Apikey": true,
		"WWW-Authenticate": false, "Mcp-Session-Id": false, "Content-Type": false, "Mcp-Protocol-Version": false,
		"Idempotency-Key": false,
	} {
		if got := SensitiveHeader(name); got != want {
			t.Errorf("SensitiveHeader(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestRedactorReport: a secret never survives in any field a writer
// prints, and JSON raw messages stay JSON.
func TestRedactorReport(t *testing.T) {
	var r Redactor
	r.AddHeader("X-Tenant")
	r.Add("Bearer tok-0123456789", "short", `quo"te-secret-value`)
	rep := &Report{
		Target: Target{Name: "t", URL: "http://h/mcp?k=tok-0123456789"},
		Checks: []Check{{
			ID: "X", Status: Fail, Reason: "server echoed Bearer tok-0123456789 back",
			Runs: []CheckRun{{Status: Fail, Reason: "tok-0123456789"}},
			Transcript: []Entry{
				{Kind: "http", HTTP: &HTTPHead{Header: map[string][]string{"Authorization": {"Bearer x"}, "X-Tenant": {"t1"}, "Accept": {"tok-0123456789"}}}},
				{Kind: "message", Raw: json.RawMessage(`{"echo":"tok-0123456789","q":"quo\"te-secret-value"}`)},
				{Kind: "stderr", Text: "got tok-0123456789"},
			},
		}},
	}
	r.Report(rep)
	var b bytes.Buffer
	if err := WriteJSONWith(&b, rep, JSONOptions{KeepAllTranscripts: true}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, s := range []string{"tok-0123456789", "te-secret-value", `"t1"`, "Bearer x"} {
		if strings.Contains(out, s) {
			t.Errorf("report still holds %q:\n%s", s, out)
		}
	}
	if !strings.Contains(out, Redacted) {
		t.Errorf("no %s in the report", Redacted)
	}
	if raw := rep.Checks[0].Transcript[1].Raw; !json.Valid(raw) {
		t.Errorf("scrubbed raw is not JSON: %s", raw)
	}
	if got := r.String("a short word"); got != "a short word" {
		t.Errorf("a value under 8 bytes was scrubbed from text: %q", got)
	}
}

// TestFlakyInReports: a flaky check shows FLAKY and each run in the
// console, Markdown, HTML and JUnit; the seed is in each header.
func TestFlakyInReports(t *testing.T) {
	rep := &Report{Schema: SchemaV1, Seed: 4242, Repeat: 2, Target: Target{Name: "t"},
		Checks: []Check{{ID: "CANCEL-X", Title: "t", Level: Must, Status: Fail, Flaky: true,
			Reason: "flaky: PASS, FAIL in 2 runs; run 2: answered late",
			Runs:   []CheckRun{{Status: Pass}, {Status: Fail, Reason: "answered late"}}}}}
	var con, md, html, junit bytes.Buffer
	if err := WriteConsole(&con, rep, ConsoleOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkdown(&md, rep, MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&html, rep, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteJUnit(&junit, rep); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		out  string
		want []string
	}{
		"console":  {con.String(), []string{"seed 4242", "each check run 2 times", "FLAKY", "run 1: PASS", "run 2: FAIL answered late", "FLAKY 1"}},
		"markdown": {md.String(), []string{"seed 4242", "FLAKY"}},
		"html":     {html.String(), []string{"<td>4242</td>", "badge flaky", "answered late"}},
		"junit":    {junit.String(), []string{`name="seed" value="4242"`, `name="flaky" value="true"`, `name="run.2" value="FAIL answered late"`}},
	} {
		for _, w := range tc.want {
			if !strings.Contains(tc.out, w) {
				t.Errorf("%s lacks %q:\n%s", name, w, tc.out)
			}
		}
	}
	if s := Summarize(rep.Checks); s.Flaky != 1 || s.Fail != 1 {
		t.Errorf("summary %+v", s)
	}
}

package reports

import (
	"bytes"
	"strings"
	"testing"
)

// TestWriteGitHubAnnotationsGolden pins the workflow commands of the sample
// run: an error per FAIL and ERROR, a warning per WARN, nothing else.
func TestWriteGitHubAnnotationsGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteGitHubAnnotations(&b, sampleReport()); err != nil {
		t.Fatal(err)
	}
	golden(t, "annotations.txt", b.Bytes())
}

// TestWriteGitHubAnnotationsEscapes: whatever a target writes, each check
// is one workflow command line, so a reason cannot issue commands of its
// own (a "::add-mask::" or "::set-output" after a line break), and an
// expected failure is a notice.
func TestWriteGitHubAnnotationsEscapes(t *testing.T) {
	r := &Report{Checks: []Check{
		{ID: "ROBUST-X", Title: "t", Level: Must, Status: Fail, Reason: "50% done\r\n::add-mask::secret\n::error::forged", Clause: "a, b: c"},
		{ID: "SSE-Y", Level: Should, Status: Warn, Reason: "w", Transport: "http"},
		{ID: "SSE-Y", Level: Should, Status: Warn, Reason: "w", Transport: "stdio", Expected: "known"},
		{ID: "OK", Status: Pass}, {ID: "S", Status: Skip, Reason: "no role"},
	}}
	var b bytes.Buffer
	if err := WriteGitHubAnnotations(&b, r); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	want := []string{
		"::error title=FAIL ROBUST-X (MUST)::t: 50%25 done%0A::add-mask::secret%0A::error::forged%0Aclause: a, b: c",
		"::warning title=WARN SSE-Y [http] (SHOULD)::w",
		"::notice title=WARN SSE-Y [stdio] (SHOULD)::w%0Aexpected by the baseline: known",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if p := escapeProperty("a:b,c%"); p != "a%3Ab%2Cc%25" {
		t.Errorf("escapeProperty = %q", p)
	}
}

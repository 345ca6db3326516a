package main

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/reports"
)

// TestJUnitFromRun writes the JUnit report of a real run against a mutant
// that makes a SHOULD check WARN (total-changes), with a baseline that
// expects it, and reads it back as a CI system would: one testcase per
// check run, SKIP as <skipped>, the expected WARN as <skipped> with the
// baseline's reason and its transcript in <system-out>.
func TestJUnitFromRun(t *testing.T) {
	limitFast(t) // a report's format: the binary without -race
	dir := t.TempDir()
	out, bl := filepath.Join(dir, "junit.xml"), filepath.Join(dir, "baseline.yaml")
	if err := os.WriteFile(bl, []byte("- id: PROGRESS-TOTAL-CONSTANT\n  reason: total is an estimate here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := fastRun(t, runLimit, "run", "-q", "--mutant", "total-changes", "--strict", "--baseline", bl, "--junit", out)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0 (the only WARN is expected)\n%s", r.code, r.stdout)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suites []struct {
			Props []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"properties>property"`
			Cases []struct {
				Name    string `xml:"name,attr"`
				Skipped *struct {
					Message string `xml:"message,attr"`
				} `xml:"skipped"`
				Failure   *struct{} `xml:"failure"`
				SystemOut string    `xml:"system-out"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	cases := doc.Suites[0].Cases
	if len(cases) != len(r.report.Checks) {
		t.Fatalf("%d testcases for %d checks", len(cases), len(r.report.Checks))
	}
	for i, c := range r.report.Checks {
		tc := cases[i]
		if !strings.HasPrefix(tc.Name, c.ID+" ["+c.Transport+"]") {
			t.Errorf("testcase %d is %q, want %s [%s]", i, tc.Name, c.ID, c.Transport)
		}
		switch {
		case c.Status == reports.Skip:
			if tc.Skipped == nil || tc.Skipped.Message != c.Reason {
				t.Errorf("%s: SKIP not skipped with its reason", c.ID)
			}
		case c.ID == "PROGRESS-TOTAL-CONSTANT":
			if c.Status != reports.Warn || tc.Skipped == nil || !strings.Contains(tc.Skipped.Message, "expected WARN (baseline: total is an estimate here)") {
				t.Errorf("%s: %s, skipped %+v", c.ID, c.Status, tc.Skipped)
			}
			if !strings.Contains(tc.SystemOut, "notifications/progress") {
				t.Errorf("%s: no transcript in system-out:\n%s", c.ID, tc.SystemOut)
			}
		case c.Status == reports.Pass:
			if tc.Skipped != nil || tc.Failure != nil {
				t.Errorf("%s: PASS shown as %+v", c.ID, tc)
			}
		default:
			t.Errorf("%s: unexpected %s: %s", c.ID, c.Status, c.Reason)
		}
	}
}

package reports

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestSourceShown: where a check's clause comes from is in every report a
// person or a script reads: the JSON report's "source" field, the
// console's line under a FAIL or WARN, the HTML card and the JUnit details.
func TestSourceShown(t *testing.T) {
	r := &Report{Checks: []Check{
		{ID: "A-SPEC", Level: Must, Status: Fail, Reason: "broke a MUST", Source: SourceSpec, ProtocolVersion: "2025-11-25", Transcript: []Entry{{Kind: "note", Text: "x"}}},
		{ID: "B-READING", Level: Should, Status: Warn, Reason: "broke a reading", Source: SourceReading, ProtocolVersion: "2026-07-28", Transcript: []Entry{{Kind: "note", Text: "x"}}},
		{ID: "C-MANIFEST", Level: Must, Status: Pass, Source: SourceManifest, ProtocolVersion: "2026-07-28"},
	}}
	var js bytes.Buffer
	if err := WriteJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Checks []struct{ ID, Source string }
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"spec", "reading", "manifest"} {
		if back.Checks[i].Source != want {
			t.Errorf("JSON %s: source %q, want %q", back.Checks[i].ID, back.Checks[i].Source, want)
		}
	}
	var con bytes.Buffer
	if err := WriteConsole(&con, r, ConsoleOptions{}); err != nil {
		t.Fatal(err)
	}
	wantContains(t, "console", con.String(),
		"clause: MUST, from the MCP specification, 2025-11-25",
		"clause: SHOULD, from mcp-conform's reading of good practice",
	)
	var html bytes.Buffer
	if err := WriteHTML(&html, r, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(html.String(), "source: the MCP specification, 2025-11-25") ||
		!strings.Contains(html.String(), "source: the contract the target declares in its manifest") {
		t.Errorf("HTML report does not show the sources")
	}
	var ju bytes.Buffer
	if err := WriteJUnit(&ju, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ju.String(), "source: the MCP specification, 2025-11-25") {
		t.Errorf("JUnit details do not show the source")
	}
}

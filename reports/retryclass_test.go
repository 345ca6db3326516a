package reports

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
)

// retryReport is the sample report with a retry-class table.
func retryReport() *Report {
	r := sampleReport()
	r.RetryClasses = []ToolClass{
		{Target: "reference (stdio)", Tool: "ticket_stats", Class: Safe, Evidence: []string{"tools/list: readOnlyHint: true"}},
		{Target: "reference (stdio)", Tool: "create_support_ticket", Class: Conditional, Key: "operation_key",
			Evidence: []string{"manifest: mutation role keyed by operation_key", "IDEM-LOST-RESPONSE: a retry after a lost response returned the stored result, 1 execution"}},
		{Target: "reference (stdio)", Tool: "append_note\x1b[31m", Class: Unsafe,
			Evidence: []string{"tools/list: idempotentHint: false", "mutation without a declared key: do not retry blindly, reconcile first"}},
	}
	return r
}

// TestRetryClassesInEveryReport: the table reaches the console (one line
// per tool, its deciding evidence, escaped), the JSON report (round trip)
// and the JUnit report (one suite property per tool).
func TestRetryClassesInEveryReport(t *testing.T) {
	r := retryReport()
	var con bytes.Buffer
	if err := WriteConsole(&con, r, ConsoleOptions{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "retryclasses.console.txt", con.Bytes())
	if strings.Contains(con.String(), "\x1b") {
		t.Error("a tool name drove the terminal")
	}

	var js bytes.Buffer
	if err := WriteJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSON(&js)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.RetryClasses) != 3 || back.RetryClasses[1].Class != Conditional || back.RetryClasses[1].Key != "operation_key" ||
		len(back.RetryClasses[1].Evidence) != 2 {
		t.Errorf("JSON round trip: %+v", back.RetryClasses)
	}

	var ju bytes.Buffer
	if err := WriteJUnit(&ju, r); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(ju.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	found := map[string]string{}
	for _, p := range doc.Suites[0].Properties.Props {
		if strings.HasPrefix(p.Name, "retryClass ") {
			found[p.Name] = p.Value
		}
	}
	if v := found["retryClass reference (stdio) create_support_ticket"]; !strings.HasPrefix(v, "Conditional (key operation_key): manifest: mutation role") {
		t.Errorf("JUnit property for create_support_ticket: %q (all: %v)", v, found)
	}
	if len(found) != 3 {
		t.Errorf("JUnit retry-class properties: %v", found)
	}
}

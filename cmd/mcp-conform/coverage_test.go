package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/internal/clauses"
	"github.com/mcp-conform/mcp-conform/internal/describe"
	"github.com/mcp-conform/mcp-conform/suites"
)

// TestCatalogClausesKnown: every clause id a check cites is in
// docs/CLAUSES.md, in one of the versions the check runs in; every clause
// CLAUSES.md marks covered has a check with a mutant that declares it; the
// not-testable list names known clauses no check declares.
func TestCatalogClausesKnown(t *testing.T) {
	set, err := clauses.Load()
	if err != nil {
		t.Fatal(err)
	}
	nt, err := clauses.LoadNotTestable()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range clauses.Validate(set, describe.CoverageCatalog(), nt) {
		t.Error(e)
	}
	// Every check that cites the specification declares an id (the
	// manifest's contract and mcp-conform's reading have none).
	for _, c := range suites.Catalog() {
		spec := false
		for _, r := range c.AllRules() {
			if r.SourceOf() == "spec" {
				spec = true
			}
		}
		if spec && len(c.Clauses) == 0 && !strings.HasPrefix(c.ID, "IDEM-") && !specWithoutID[c.ID] {
			t.Errorf("%s cites the specification but declares no clause id", c.ID)
		}
	}
}

// specWithoutID are checks whose cited sentence CLAUSES.md has no row for.
var specWithoutID = map[string]bool{
	"ROBUST-DUPLICATE-ID":     true, // basic#5 is the harness's correlation (implicit); the check judges survival
	"ROBUST-UNKNOWN-TOOL":     true, // the tools page's error example, no RFC 2119 keyword
	"SSE-HEARTBEAT":           true,
	"PROGRESS-TOTAL-CONSTANT": true,
	// The authorization page's 401 sentence: CLAUSES.md maps no row of that
	// page (the nearest, sec#3 and sec#8, are the security guide's).
	"SECURITY-AUTH-REQUIRED": true,
}

// TestCoverageCommand: the text lists the in-scope pages and the summary;
// --format json has the shape.
func TestCoverageCommand(t *testing.T) {
	var out bytes.Buffer
	cmd := newCoverageCmd()
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"--format", "json"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Clauses []map[string]json.RawMessage `json:"clauses"`
		Summary map[string]json.RawMessage   `json:"summary"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if len(doc.Clauses) < 190 || doc.Summary["versions"] == nil {
		t.Fatalf("%d clauses, summary %v", len(doc.Clauses), doc.Summary)
	}
	for _, k := range []string{"id", "level", "versions", "status", "checks", "mutants"} {
		if doc.Clauses[0][k] == nil {
			t.Errorf("clause entry lacks %q: %v", k, doc.Clauses[0])
		}
	}
	found := false
	for _, c := range doc.Clauses {
		var id string
		_ = json.Unmarshal(c["id"], &id)
		if id == "tr#29" {
			found = true
			if !strings.Contains(string(c["checks"]), "SESSION-DELETE") || !strings.Contains(string(c["mutants"]), "delete-ignored") || string(c["status"]) != `"covered"` {
				t.Errorf("tr#29: %s", mustJSON(c))
			}
		}
	}
	if !found {
		t.Error("no tr#29")
	}
	out.Reset()
	cmd = newCoverageCmd()
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"--page", "tr"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "tr#29") || strings.Contains(out.String(), "basic#1 ") {
		t.Errorf("--page tr:\n%s", out.String())
	}
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

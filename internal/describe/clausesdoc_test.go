package describe

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcp-conform/mcp-conform/internal/clauses"
)

var updateClauses = flag.Bool("update-clauses", false, "rewrite docs/CLAUSES.md's status and covered-by cells of the clauses whose status the catalog no longer matches")

// TestClausesDocStatus: the status column of docs/CLAUSES.md is what the
// catalog computes (mcp-conform coverage), so that the page never says
// "none" of a clause a check with a mutant covers, nor "covered" of one no
// check declares. A clause written "implicit" may compute none. With
// -update-clauses the drifted rows are rewritten from the catalog.
func TestClausesDocStatus(t *testing.T) {
	set, err := clauses.Load()
	if err != nil {
		t.Fatal(err)
	}
	r, err := Coverage()
	if err != nil {
		t.Fatal(err)
	}
	drifts := clauses.Drifts(set, r)
	if *updateClauses && len(drifts) > 0 {
		path := filepath.Join("..", "..", "docs", "CLAUSES.md")
		md, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, clauses.Rewrite(md, drifts), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %d rows of %s", len(drifts), path)
		return
	}
	for _, d := range drifts {
		t.Errorf("docs/CLAUSES.md says %s is %q; the catalog computes %q (%s); run go test ./internal/describe -run TestClausesDocStatus -update-clauses", d.ID, d.Written, d.Computed, d.CoveredBy)
	}
}

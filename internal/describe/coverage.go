package describe

import (
	"fmt"
	"io"
	"strings"

	"github.com/mcp-conform/mcp-conform/clients/reliable"
	"github.com/mcp-conform/mcp-conform/clientsuite"
	"github.com/mcp-conform/mcp-conform/fixtures"
	"github.com/mcp-conform/mcp-conform/internal/clauses"
	"github.com/mcp-conform/mcp-conform/internal/usageerr"
	"github.com/mcp-conform/mcp-conform/suites"
)

// CoverageCatalog describes both catalogs for internal/clauses: the server
// checks with the reference server's mutants that break them, and the
// CLIENT checks with the reliable client's defects that break them.
func CoverageCatalog() []clauses.Check {
	breaks := map[string][]string{}
	for _, m := range fixtures.Mutants() {
		if m.Breaks != "" {
			breaks[m.Breaks] = append(breaks[m.Breaks], m.Name)
		}
	}
	for _, d := range reliable.Defects() {
		if d.Breaks != "" {
			breaks[d.Breaks] = append(breaks[d.Breaks], string(d.Name))
		}
	}
	var out []clauses.Check
	for _, c := range suites.Catalog() {
		out = append(out, clauses.Check{ID: c.ID, Clauses: c.Clauses, Limits: c.Limits, Versions: c.Versions(), Mutants: breaks[c.ID]})
	}
	for _, c := range clientsuite.Catalog() {
		out = append(out, clauses.Check{ID: c.ID, Clauses: c.Clauses(), Versions: c.Versions(), Mutants: breaks[c.ID]})
	}
	return out
}

// Coverage computes the coverage of docs/CLAUSES.md by the catalogs
// ("mcp-conform coverage").
func Coverage() (clauses.Report, error) {
	set, err := clauses.Load()
	if err != nil {
		return clauses.Report{}, err
	}
	nt, err := clauses.LoadNotTestable()
	if err != nil {
		return clauses.Report{}, err
	}
	return clauses.Compute(set, CoverageCatalog(), nt), nil
}

// WriteCoverage writes "mcp-conform coverage": the coverage of the clauses
// whose prefixes are in pages (all with none), as text or json (format).
func WriteCoverage(w io.Writer, format string, pages []string) error {
	r, err := Coverage()
	if err != nil {
		return err
	}
	r = r.Filter(pages...)
	switch strings.ToLower(format) {
	case "", "text":
		return r.WriteText(w)
	case "json":
		return r.WriteJSON(w)
	}
	return &usageerr.Error{Err: fmt.Errorf("--format %q: want text or json", format)}
}

package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcp-conform/mcp-conform/clients/reliable"
	"github.com/mcp-conform/mcp-conform/clientsuite"
	"github.com/mcp-conform/mcp-conform/fixtures"
	"github.com/mcp-conform/mcp-conform/internal/clauses"
	"github.com/mcp-conform/mcp-conform/suites"
)

// coverageCatalog describes both catalogs for internal/clauses: the server
// checks with the reference server's mutants that break them, and the
// CLIENT checks with the reliable client's defects that break them.
func coverageCatalog() []clauses.Check {
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

// coverageReport computes the coverage of docs/CLAUSES.md by the catalogs.
func coverageReport() (clauses.Report, error) {
	set, err := clauses.Load()
	if err != nil {
		return clauses.Report{}, err
	}
	nt, err := clauses.LoadNotTestable()
	if err != nil {
		return clauses.Report{}, err
	}
	return clauses.Compute(set, coverageCatalog(), nt), nil
}

func newCoverageCmd() *cobra.Command {
	var format string
	var pages []string
	cmd := &cobra.Command{
		Use:   "coverage",
		Short: "Every clause of docs/CLAUSES.md with its status and the checks and mutants that prove it",
		Long: `Print, per page and protocol version, every normative sentence of docs/CLAUSES.md
with its status: covered (a check declares the clause and a mutant proves that check
can fail), partial (a check sees part of it, or has no mutant), not testable (with the
reason, from docs/clauses-not-testable.yaml) or none; then the share of testable
clauses covered per side and version. --format json gives
{"clauses":[{"id","level","versions","status","checks","mutants",...}],"summary":{...}}.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := coverageReport()
			if err != nil {
				return err
			}
			r = r.Filter(pages...)
			switch strings.ToLower(format) {
			case "", "text":
				return r.WriteText(cmd.OutOrStdout())
			case "json":
				return r.WriteJSON(cmd.OutOrStdout())
			}
			return usageError{fmt.Errorf("--format %q: want text or json", format)}
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "text or json")
	cmd.Flags().StringSliceVar(&pages, "page", nil, "keep only these clause prefixes (e.g. --page basic,tr,lc)")
	return cmd
}

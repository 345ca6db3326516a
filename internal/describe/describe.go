// Package describe renders the check catalog and the reference server's
// mutants for people: `mcp-conform list` (a table of every check),
// `mcp-conform explain ID` (one check: how it is provoked, its clause per
// version, the mutant that breaks it) and `mcp-conform fixture --list`.
package describe

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/mcp-conform/mcp-conform/fixtures"
	"github.com/mcp-conform/mcp-conform/suites"
)

// List writes every check (the server catalog, then the CLIENT checks): id, level by version, versions, transports,
// roles and the spec page of its newest version.
func List(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tLEVEL\tVERSIONS\tTRANSPORTS\tROLES\tSPEC")
	for _, c := range suites.Catalog() {
		vs := c.Versions()
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", c.ID, levels(c), strings.Join(vs, ","),
			strings.Join(c.Transports, ","), orDash(strings.Join(c.Roles, ",")), c.Rules[vs[0]].Spec)
	}
	listClientChecks(tw)
	return tw.Flush()
}

// levels summarises a check's level across versions, e.g. "MUST" or
// "MUST(2026-07-28) SHOULD(2025-06-18,2025-11-25)".
func levels(c *suites.Check) string {
	byLevel := map[string][]string{}
	for _, v := range c.Versions() {
		l := string(c.Rules[v].Level)
		byLevel[l] = append(byLevel[l], v)
	}
	if len(byLevel) == 1 {
		for l := range byLevel {
			return l
		}
	}
	var parts []string
	for l, vs := range byLevel {
		parts = append(parts, fmt.Sprintf("%s(%s)", l, strings.Join(vs, ",")))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// Explain writes what check c enforces and how: the way it is provoked,
// its transports and roles, the clause of each version, and the mutant
// that breaks it.
func Explain(w io.Writer, c *suites.Check) {
	fmt.Fprintf(w, "%s — %s\n\n", c.ID, c.Title)
	fmt.Fprintf(w, "How it is checked:\n  %s\n\n", c.How)
	fmt.Fprintf(w, "Transports: %s    Roles needed: %s\n\n", strings.Join(c.Transports, ", "), orDash(strings.Join(c.Roles, ", ")))
	for _, v := range c.Versions() {
		r := c.Rules[v]
		fmt.Fprintf(w, "%s  %s  (%s)\n  %q\n", v, r.Level, r.Spec, r.Clause)
	}
	for _, m := range fixtures.Mutants() {
		if m.Breaks == c.ID {
			fmt.Fprintf(w, "\nMutant that breaks it: %s — %s\n  try: mcp-conform run --mutant %s --focus %s\n", m.Name, m.Description, m.Name, c.ID)
		}
	}
}

// Mutants writes the reference server's mutants and the check each breaks.
func Mutants(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MUTANT\tBREAKS\tWHAT IT DOES")
	for _, m := range fixtures.Mutants() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", m.Name, orDash(m.Breaks), m.Description)
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

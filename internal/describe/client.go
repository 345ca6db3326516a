package describe

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mcp-conform/mcp-conform/clients/reliable"
	"github.com/mcp-conform/mcp-conform/clientsuite"
)

// listClientChecks adds the CLIENT checks to `mcp-conform list` (ROLES
// names the scenario that provokes each; "every" for the hygiene checks).
func listClientChecks(w io.Writer) {
	for _, c := range clientsuite.Catalog() {
		vs := c.Versions()
		scenario := "scenario:" + c.Scenario
		if c.Hygiene() {
			scenario = "scenario:every"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", c.ID, clientLevels(c), strings.Join(vs, ","),
			strings.Join(c.Transports, ","), scenario, c.Rules[vs[0]].Spec)
	}
}

// clientLevels is levels for a CLIENT check.
func clientLevels(c *clientsuite.Check) string {
	byLevel := map[string][]string{}
	for _, v := range c.Versions() {
		l := string(c.Rules[v].Level)
		byLevel[l] = append(byLevel[l], v)
	}
	var parts []string
	for l, vs := range byLevel {
		if len(byLevel) == 1 {
			return l
		}
		parts = append(parts, fmt.Sprintf("%s(%s)", l, strings.Join(vs, ",")))
	}
	slices.Sort(parts)
	return strings.Join(parts, " ")
}

// ExplainClient is `mcp-conform explain` for a CLIENT check.
func ExplainClient(w io.Writer, c *clientsuite.Check) {
	fmt.Fprintf(w, "%s — %s\n\n", c.ID, c.Title)
	fmt.Fprintf(w, "How it is checked:\n  %s\n\n", c.How)
	scenario := c.Scenario
	if c.Hygiene() {
		scenario = "every scenario (a hygiene check)"
	}
	fmt.Fprintf(w, "Transports: %s    Scenario: %s    Clauses: %s\n\n", strings.Join(c.Transports, ", "), scenario, orDash(strings.Join(c.Clauses(), ", ")))
	for _, v := range c.Versions() {
		r := c.Rules[v]
		source := "spec"
		if r.Source == clientsuite.SourceSeed {
			source = "seed"
		}
		on := ""
		if len(r.Transports) > 0 {
			on = " on " + strings.Join(r.Transports, ", ")
		}
		fmt.Fprintf(w, "%s  %s (%s, %s%s)  (%s)\n  %q\n", v, r.Level, r.Word, source, on, r.Spec, r.Clause)
	}
	for _, d := range reliable.Defects() {
		if d.Breaks == c.ID {
			fmt.Fprintf(w, "\nClient mutant that breaks it: %s — %s\n  try: mcp-conform client --command \"mcp-conform reliable-driver --mutant %s\"", d.Name, d.Description, d.Name)
			if !c.Hygiene() {
				fmt.Fprintf(w, " --scenario %s", c.Scenario)
			}
			fmt.Fprintln(w)
		}
	}
}

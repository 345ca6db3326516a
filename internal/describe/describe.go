// Package describe renders the check catalog and the reference server's
// mutants for people: `mcp-conform list` (a table of every check),
// `mcp-conform explain ID` (one check: how it is provoked, its clause per
// version, the mutant that breaks it) and `mcp-conform fixture --list`.
package describe

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/mcp-conform/mcp-conform/clientsuite"
	"github.com/mcp-conform/mcp-conform/fixtures"
	"github.com/mcp-conform/mcp-conform/suites"
)

// List writes every check (the server catalog, then the CLIENT checks): id, level by version, versions, transports,
// roles and the spec page of its newest version.
func List(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tLEVEL\tSOURCE\tVERSIONS\tTRANSPORTS\tROLES\tSPEC")
	for _, c := range suites.Catalog() {
		vs := c.Versions()
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.ID, levels(c), sources(c), strings.Join(vs, ","),
			strings.Join(c.Transports, ","), orDash(strings.Join(c.Roles, ",")), c.Rules[vs[0]].Spec)
	}
	listClientChecks(tw)
	return tw.Flush()
}

// levels summarises a check's level across versions and transports, e.g.
// "MUST" or "MUST(2026-07-28) SHOULD(2025-11-25,2025-06-18)"; a level that
// holds on some transports only names them ("SHOULD(websocket 2026-07-28)").
func levels(c *suites.Check) string {
	return summarise(c, func(r suites.Rule) string { return string(r.Level) })
}

// sources summarises where a check's clauses come from, as levels does.
func sources(c *suites.Check) string {
	return summarise(c, func(r suites.Rule) string { return string(r.SourceOf()) })
}

// summarise groups a check's rules by what key says of them.
func summarise(c *suites.Check, key func(suites.Rule) string) string {
	byKey := map[string][]string{}
	for _, tr := range c.AllRules() {
		k := key(tr.Rule)
		byKey[k] = append(byKey[k], tr.Transport+" "+tr.Version)
	}
	if len(byKey) == 1 {
		for k := range byKey {
			return k
		}
	}
	var parts []string
	for k, where := range byKey {
		parts = append(parts, fmt.Sprintf("%s(%s)", k, strings.Join(compactWhere(c, where), ",")))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// compactWhere turns "transport version" pairs into versions when the pair
// holds on every transport the check runs on in that version.
func compactWhere(c *suites.Check, where []string) []string {
	set := map[string]bool{}
	for _, w := range where {
		set[w] = true
	}
	var out []string
	done := map[string]bool{}
	for _, w := range where {
		tr, v, _ := strings.Cut(w, " ")
		all := true
		for _, t := range c.Transports {
			if _, runs := c.RuleOn(t, v); runs && !set[t+" "+v] {
				all = false
			}
		}
		switch {
		case all && !done[v]:
			out = append(out, v)
			done[v] = true
		case !all:
			out = append(out, tr+" "+v)
		}
	}
	return out
}

// Explain writes what check c enforces and how: the way it is provoked,
// its transports and roles, the clause of each version, and the mutant
// that breaks it.
func Explain(w io.Writer, c *suites.Check) {
	fmt.Fprintf(w, "%s — %s\n\n", c.ID, c.Title)
	fmt.Fprintf(w, "How it is checked:\n  %s\n\n", c.How)
	fmt.Fprintf(w, "Transports: %s    Roles needed: %s    Clauses: %s\n\n", strings.Join(c.Transports, ", "), orDash(strings.Join(c.Roles, ", ")), orDash(strings.Join(c.Clauses, ", ")))
	for _, g := range groupRules(c.AllRules()) {
		src := g.rule.SourceOf().Describe(g.versions[0])
		if len(g.versions) > 1 && g.rule.SourceOf() == "spec" {
			src = g.rule.SourceOf().Describe(strings.Join(g.versions, ", "))
		}
		fmt.Fprintf(w, "%s  %s  (%s)\n  source: %s\n  %q\n", g.where, g.rule.Level,
			strings.Join(g.rule.Pages(), ", "), src, g.rule.Clause)
	}
	for _, m := range fixtures.Mutants() {
		if m.Breaks == c.ID {
			fmt.Fprintf(w, "\nMutant that breaks it: %s — %s\n  try: mcp-conform run --mutant %s --focus %s\n", m.Name, m.Description, m.Name, c.ID)
		}
	}
}

// Mutants writes the reference server's mutants and the check each breaks,
// then its correct variants.
func Mutants(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MUTANT\tBREAKS\tWHAT IT DOES")
	for _, m := range fixtures.Mutants() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", m.Name, orDash(m.Breaks), m.Description)
	}
	fmt.Fprintln(tw, "\nVARIANT\t(correct)\tHOW IT DIFFERS FROM THE REFERENCE")
	for _, v := range fixtures.Variants() {
		fmt.Fprintf(tw, "%s\t-\t%s\n", v.Name, v.Description)
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// ruleGroup is one rule of a check and where it holds.
type ruleGroup struct {
	rule     suites.Rule
	versions []string
	where    string
}

// groupRules joins the versions and transports that share one rule, in
// catalog order: "2025-11-25, 2025-06-18 on stdio, websocket".
func groupRules(all []suites.TransportRule) []ruleGroup {
	type acc struct {
		rule       suites.Rule
		pairs      map[string]bool
		trs, vs    []string
		firstIndex int
	}
	var order []string
	groups := map[string]*acc{}
	for i, tr := range all {
		k := fmt.Sprintf("%s|%s|%s|%q", tr.Level, tr.SourceOf(), strings.Join(tr.Pages(), ","), tr.Clause)
		g, ok := groups[k]
		if !ok {
			g = &acc{rule: tr.Rule, pairs: map[string]bool{}, firstIndex: i}
			groups[k] = g
			order = append(order, k)
		}
		g.pairs[tr.Transport+" "+tr.Version] = true
		if !slices.Contains(g.trs, tr.Transport) {
			g.trs = append(g.trs, tr.Transport)
		}
		if !slices.Contains(g.vs, tr.Version) {
			g.vs = append(g.vs, tr.Version)
		}
	}
	var out []ruleGroup
	for _, k := range order {
		g := groups[k]
		where := strings.Join(g.vs, ", ") + " on " + strings.Join(g.trs, ", ")
		if len(g.pairs) != len(g.trs)*len(g.vs) {
			var ps []string
			for _, t := range g.trs {
				for _, v := range g.vs {
					if g.pairs[t+" "+v] {
						ps = append(ps, v+" on "+t)
					}
				}
			}
			where = strings.Join(ps, "; ")
		}
		out = append(out, ruleGroup{rule: g.rule, versions: g.vs, where: where})
	}
	return out
}

// ExplainID explains the server or CLIENT check id ("mcp-conform
// explain"); false: no check has that id.
func ExplainID(w io.Writer, id string) bool {
	c, ok := suites.Lookup(id)
	if cc, isClient := clientsuite.Lookup(id); !ok && isClient {
		ExplainClient(w, cc)
		return true
	}
	if !ok {
		return false
	}
	Explain(w, c)
	return true
}

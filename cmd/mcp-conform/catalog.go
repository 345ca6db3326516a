package main

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcp-conform/mcp-conform/fixtures"
	"github.com/mcp-conform/mcp-conform/suites"
)

func newListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List every check: id, level by version, transports, roles, spec reference",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tLEVEL\tSOURCE\tVERSIONS\tTRANSPORTS\tROLES\tSPEC")
			for _, c := range suites.Catalog() {
				vs := c.Versions()
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.ID, levels(c), sources(c), strings.Join(vs, ","),
					strings.Join(c.Transports, ","), orDash(strings.Join(c.Roles, ",")), c.Rules[vs[0]].Spec)
			}
			return tw.Flush()
		},
	}
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

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func newExplainCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "explain CHECK-ID",
		Short: "Explain a check: the clause, the spec sentence, how it is provoked, and its mutant",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ok := suites.Lookup(args[0])
			if !ok {
				return usageError{fmt.Errorf("no check %q (see 'mcp-conform list')", args[0])}
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "%s — %s\n\n", c.ID, c.Title)
			fmt.Fprintf(w, "How it is checked:\n  %s\n\n", c.How)
			fmt.Fprintf(w, "Transports: %s    Roles needed: %s\n\n", strings.Join(c.Transports, ", "), orDash(strings.Join(c.Roles, ", ")))
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
			return nil
		},
	}
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

func newFixtureCmd() *cobra.Command {
	var mutant, httpAddr, wsAddr, ledger, variant string
	var heartbeat time.Duration
	var list bool
	cmd := &cobra.Command{
		Use:   "fixture",
		Short: "Serve the reference MCP server (or one of its mutants) on stdio",
		Long: `Serve the reference server over stdio: it keeps the whole contract mcp-conform
checks. --mutant switches on exactly one deliberate bug, to see a check fail.
--http serves Streamable HTTP instead (both protocol eras on one endpoint); --ws serves
JSON-RPC over WebSocket (one message per text frame), a custom transport with the
stdio message rules.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if list {
				tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
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
			if variant != "" {
				if _, err := fixtures.ParseVariants(variant); err != nil {
					return usageError{fmt.Errorf("--variant: %w (see 'mcp-conform fixture --list')", err)}
				}
				if err := os.Setenv(suites.FixtureVariantEnv, variant); err != nil {
					return fmt.Errorf("--variant: %w", err)
				}
			}
			if mutant != "" && !fixtures.ValidMutant(mutant) {
				return usageError{fmt.Errorf("unknown mutant %q (see 'mcp-conform fixture --list')", mutant)}
			}
			if ledger != "" {
				if err := os.Setenv(suites.FixtureLedgerEnv, ledger); err != nil {
					return fmt.Errorf("--ledger: %w", err)
				}
			}
			if wsAddr != "" {
				if httpAddr != "" {
					return usageError{fmt.Errorf("fixture: give --http or --ws, not both")}
				}
				if code := suites.ServeFixtureWS(mutant, wsAddr); code != 0 {
					return exitError{code}
				}
				return nil
			}
			if httpAddr != "" {
				if code := suites.ServeFixtureHTTP(mutant, httpAddr, heartbeat); code != 0 {
					return exitError{code}
				}
				return nil
			}
			if code := suites.ServeFixture(mutant); code != 0 {
				return exitError{code}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&mutant, "mutant", "", "switch on one deliberate bug")
	cmd.Flags().StringVar(&httpAddr, "http", "", "serve Streamable HTTP on this address (e.g. 127.0.0.1:3001; the endpoint is /mcp, printed once listening)")
	cmd.Flags().StringVar(&wsAddr, "ws", "", "serve JSON-RPC over WebSocket on this address (one message per text frame, one session per connection; the endpoint ws://ADDR/mcp is printed once listening)")
	cmd.Flags().DurationVar(&heartbeat, "heartbeat", 15*time.Second, "interval of SSE comment keep-alives on silent streams (--http)")
	cmd.Flags().BoolVar(&list, "list", false, "list the mutants and the check each one breaks, and the correct variants")
	cmd.Flags().StringVar(&variant, "variant", "", "serve correct variants of the reference (comma-separated, see --list; default $"+suites.FixtureVariantEnv+"): the same contract in another shape")
	cmd.Flags().StringVar(&ledger, "ledger", "", "SQLite file of the keyed mutation tools' ledger (default $"+suites.FixtureLedgerEnv+", else a private temporary file); servers given one file share it")
	return cmd
}

// Package clientsuite is the catalog of the CLIENT checks of
// `mcp-conform client`: what a real MCP client must do when its server
// misbehaves — cancel on its own timeout with the era's signal, keep two
// clocks, retry a keyed mutation with the same key and never an unsafe one
// blindly, resume or re-issue after a cut stream, start a new session on a
// 404, back off with jitter, and keep the protocol's hygiene. It holds the
// scenarios (the server behaviour and proxy faults of each, and what the
// client under test is asked to do: the driver contract of
// docs/CLIENT-DRIVERS.md) and the checks, each a judge over what one run
// left on the proxy's transcript.
//
// The shapes mirror package suites' (Check: id, title, how, per-version
// Rule with level, clause, spec page and a clause source, transports,
// clause ids) so that the two catalogs can be joined; the harness that
// runs the client is internal/clientgrade.
package clientsuite

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mcp-conform/mcp-conform/reports"
)

// Protocol versions, as the rules name them.
const (
	V20250618 = "2025-06-18"
	V20251125 = "2025-11-25"
	V20260728 = "2026-07-28"
)

// Versions are the protocol versions the catalog knows, newest first.
var Versions = []string{V20260728, V20251125, V20250618}

// legacyVersions are the 2025 versions (the initialize-based era).
var legacyVersions = []string{V20251125, V20250618}

// Transports the client checks run on.
const (
	Stdio = "stdio"
	HTTP  = "http"
)

// Sources of a clause.
const (
	// SourceSpec: a sentence of the MCP specification (CLAUSES.md,
	// "Clauses that bind clients").
	SourceSpec = "spec"
	// SourceSeed: the seeds' request coordinator and retry matrix
	// (../shared/seeds/), where the specification is silent; the project's
	// reading, labelled as such.
	SourceSeed = "seed"
)

// Rule is the clause a check enforces in one protocol version.
type Rule struct {
	// Level is what a broken clause costs: MUST (and MUST NOT, REQUIRED)
	// fail, SHOULD (and SHOULD NOT) warn.
	Level reports.Level
	// Word is the sentence's own keyword for the client ("MUST NOT").
	Word string
	// Clause is the sentence (condensed as CLAUSES.md quotes it).
	Clause string
	// Spec is the page it comes from (a spec path, or a seed file).
	Spec string
	// Source is SourceSpec or SourceSeed.
	Source string
	// Clauses are the CLAUSES.md ids the rule enforces (none for a seed
	// rule).
	Clauses []string
	// Transports, when set, narrows the check's transports in this version.
	Transports []string
}

// Check describes one CLIENT check.
type Check struct {
	// ID is CLIENT-NAME, stable across releases.
	ID string
	// Title says what the check proves, in a line.
	Title string
	// How says how the scenario provokes the clause and what is judged.
	How string
	// Rules gives, per protocol version, the clause; a version absent from
	// Rules is not checked.
	Rules map[string]Rule
	// Transports the check runs on.
	Transports []string
	// Scenario is the scenario whose runs the check judges; empty for the
	// hygiene checks, judged on the runs of every scenario.
	Scenario string
	// judge decides one run.
	judge judgeFunc
}

// Clauses are the CLAUSES.md ids of every rule, sorted.
func (c *Check) Clauses() []string {
	var ids []string
	for _, r := range c.Rules {
		ids = append(ids, r.Clauses...)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// Versions lists the versions the check applies to, newest first.
func (c *Check) Versions() []string {
	vs := make([]string, 0, len(c.Rules))
	for v := range c.Rules {
		vs = append(vs, v)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(vs)))
	return vs
}

// Applies returns the rule of version v on transport tr, if the check runs
// there.
func (c *Check) Applies(v, tr string) (Rule, bool) {
	r, ok := c.Rules[v]
	if !ok {
		return Rule{}, false
	}
	trs := c.Transports
	if len(r.Transports) > 0 {
		trs = r.Transports
	}
	return r, slices.Contains(trs, tr)
}

// Hygiene reports whether the check is judged on every scenario's runs.
func (c *Check) Hygiene() bool { return c.Scenario == "" }

var catalog []*Check

func register(c *Check) *Check {
	for _, o := range catalog {
		if o.ID == c.ID {
			panic(fmt.Sprintf("clientsuite: check %s registered twice", c.ID))
		}
	}
	if !strings.HasPrefix(c.ID, "CLIENT-") {
		panic(fmt.Sprintf("clientsuite: check %s is not in area CLIENT", c.ID))
	}
	catalog = append(catalog, c)
	return c
}

// Catalog returns every CLIENT check, in declaration order.
func Catalog() []*Check { return slices.Clone(catalog) }

// Lookup finds a check by id (case-insensitive).
func Lookup(id string) (*Check, bool) {
	for _, c := range catalog {
		if strings.EqualFold(c.ID, id) {
			return c, true
		}
	}
	return nil, false
}

// sameRule gives r to every listed version, with VERSION in Spec replaced.
func sameRule(r Rule, versions ...string) map[string]Rule {
	m := make(map[string]Rule, len(versions))
	for _, v := range versions {
		rr := r
		rr.Spec = strings.ReplaceAll(r.Spec, "VERSION", v)
		m[v] = rr
	}
	return m
}

// merge joins rule maps.
func merge(ms ...map[string]Rule) map[string]Rule {
	out := map[string]Rule{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// levelOf maps an RFC 2119 keyword to the level it costs.
func levelOf(word string) reports.Level {
	switch word {
	case "MUST", "MUST NOT", "REQUIRED", "SHALL", "SHALL NOT":
		return reports.Must
	}
	return reports.Should
}

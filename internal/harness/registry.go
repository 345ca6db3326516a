// Package harness runs mcp-conform's checks: the registry that describes
// each check (id, level, clause, versions, transports, roles), the target
// manifests and run configuration, the connections to a target through the
// fault proxy (stdio, Streamable HTTP, WebSocket), the target's processes,
// ports and private directories, and H, which a check body uses and which
// turns what happened into a verdict and a transcript.
//
// The checks themselves (the catalog) are in package suites; this package
// knows none of them.
package harness

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/mcp-conform/mcp-conform/reports"
)

// Era names a family of protocol versions sharing one wire contract.
const (
	legacy = "legacy"
	modern = "modern"
)

// Rule is the clause a check enforces in one protocol version: its level,
// the sentence, the page it comes from and where that sentence's authority
// comes from (Source).
//
// The level is the word of the sentence, for the server, in that version:
// MUST / MUST NOT → reports.Must (a break FAILs), SHOULD / SHOULD NOT →
// reports.Should (a break WARNs). Only a sentence of the specification
// (reports.SourceSpec) or a contract the target itself declared in its
// manifest (reports.SourceManifest) may be a Must; mcp-conform's own reading
// of good practice (reports.SourceReading) is at most a Should
// (TestCatalogLevelsHaveASource).
type Rule struct {
	Level  reports.Level
	Clause string
	Spec   string
	// Source is where the clause comes from; empty means the
	// specification (reports.SourceSpec).
	Source reports.Source
	// Also lists further pages the clause quotes, after Spec (e.g. the
	// MUST NOT of basic/index.mdx beside a cancellation page's SHOULD).
	Also []string
}

// SourceOf returns the rule's source, SourceSpec when none was given.
func (r Rule) SourceOf() reports.Source {
	if r.Source == "" {
		return reports.SourceSpec
	}
	return r.Source
}

// Pages returns the spec pages the rule cites: Spec, then Also.
func (r Rule) Pages() []string {
	return append([]string{r.Spec}, r.Also...)
}

// Check describes one check of the catalog.
type Check struct {
	// ID is AREA-NAME, stable across releases.
	ID string
	// Title says what the check proves, in a line.
	Title string
	// How says how the check provokes the clause (for `explain`).
	How string
	// Rules gives, per protocol version, the level, clause and spec page.
	// A version absent from Rules is not checked (SKIP "not in VERSION").
	Rules map[string]Rule
	// On replaces, on one transport, the rule of some versions: the
	// sentence that binds that transport (e.g. on WebSocket, a custom
	// transport, the cancellation pattern's SHOULD in place of the stdio
	// page's MUST NOT).
	On map[string]map[string]Rule
	// Only limits, on one transport, the versions the check runs in (the
	// clause does not bind that transport in the others); a transport
	// absent from Only runs in every version of Rules.
	Only map[string][]string
	// Transports the check runs on ("stdio", "http").
	Transports []string
	// Roles the target manifest must declare.
	Roles []string
	// Clauses are the docs/CLAUSES.md ids the check enforces ("tr#29");
	// the JSON report lists them per check and `mcp-conform coverage`
	// reads them (see clauses.go).
	Clauses []string
	// Limits marks declared clauses the check sees only in part (clause id
	// → what it does not see); coverage counts them as partial.
	Limits map[string]string
	// Passive marks a check with no spec of its own: it judges what the
	// other checks' connections carried (SCHEMA-VALID), and its results are
	// made when the report is built.
	Passive bool
}

// Area is the part of the id before the first dash.
func (c *Check) Area() string { a, _, _ := strings.Cut(c.ID, "-"); return a }

// Versions lists the protocol versions the check applies to, newest first.
func (c *Check) Versions() []string {
	vs := make([]string, 0, len(c.Rules))
	for v := range c.Rules {
		vs = append(vs, v)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(vs)))
	return vs
}

// RuleFor returns the clause for version v (on the check's first
// transport).
func (c *Check) RuleFor(v string) (Rule, bool) {
	r, ok := c.Rules[v]
	return r, ok
}

// RuleOn returns the clause for version v on transport tr: the override of
// On, else Rules; ok is false when the check does not run there.
func (c *Check) RuleOn(tr, v string) (Rule, bool) {
	if only, limited := c.Only[tr]; limited && !slices.Contains(only, v) {
		return Rule{}, false
	}
	if r, ok := c.On[tr][v]; ok {
		return r, true
	}
	r, ok := c.Rules[v]
	return r, ok
}

// VersionsOn lists the versions the check runs in on transport tr, newest
// first.
func (c *Check) VersionsOn(tr string) []string {
	var out []string
	for _, v := range c.Versions() {
		if _, ok := c.RuleOn(tr, v); ok {
			out = append(out, v)
		}
	}
	return out
}

// AllRules returns every rule of the check: per transport, per version it
// runs in there.
func (c *Check) AllRules() []TransportRule {
	var out []TransportRule
	for _, tr := range c.Transports {
		for _, v := range c.VersionsOn(tr) {
			r, _ := c.RuleOn(tr, v)
			out = append(out, TransportRule{Transport: tr, Version: v, Rule: r})
		}
	}
	return out
}

// TransportRule is a check's rule on one transport in one version.
type TransportRule struct {
	Transport, Version string
	Rule
}

// Labels are the Ginkgo labels of the check's spec on a transport, for
// --label-filter. A check does not change once registered: they are
// computed once per check and transport (a run's planning asks often).
func (c *Check) Labels(transport string) []string {
	k := labelKey{c, transport}
	if ls, ok := labelCache.Load(k); ok {
		return slices.Clone(ls.([]string))
	}
	ls := c.labels(transport)
	labelCache.Store(k, ls)
	return slices.Clone(ls)
}

type labelKey struct {
	c         *Check
	transport string
}

var labelCache sync.Map // labelKey → []string

func (c *Check) labels(transport string) []string {
	ls := []string{"area:" + strings.ToLower(c.Area()), "id:" + c.ID, "transport:" + transport}
	levels := map[reports.Level]bool{}
	for _, v := range c.VersionsOn(transport) {
		ls = append(ls, "spec:"+v)
		r, _ := c.RuleOn(transport, v)
		levels[r.Level] = true
	}
	for l := range levels {
		ls = append(ls, "level:"+strings.ToLower(string(l)))
	}
	for _, r := range c.Roles {
		ls = append(ls, "role:"+r)
	}
	slices.Sort(ls)
	return slices.Compact(ls)
}

var catalog []*Check

// Register adds a check to the catalog; ids must be unique. Every check
// file of the catalog (package suites) registers its checks at init.
func Register(c *Check) *Check {
	for _, o := range catalog {
		if o.ID == c.ID {
			panic(fmt.Sprintf("suites: check %s registered twice", c.ID))
		}
	}
	catalog = append(catalog, c)
	return c
}

// Catalog returns every check, in declaration order.
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

// Package suites holds the conformance checks of mcp-conform as Ginkgo specs,
// the registry that describes each check (id, level, clause, versions,
// transports, roles), and the harness that runs a check against a target
// through the fault proxy and turns what happened into a verdict.
//
// The same specs run in-process from `mcp-conform run` and under
// `ginkgo -r suites -- --stdio "…"`.
package suites

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mcp-conform/mcp-conform/reports"
)

// Era names a family of protocol versions sharing one wire contract.
const (
	legacy = "legacy"
	modern = "modern"
)

// Rule is the clause a check enforces in one protocol version: its level
// and the sentence of the specification, with the page it comes from.
type Rule struct {
	Level  reports.Level
	Clause string
	Spec   string
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
	// Transports the check runs on ("stdio", "http").
	Transports []string
	// Roles the target manifest must declare.
	Roles []string
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

// RuleFor returns the clause for version v.
func (c *Check) RuleFor(v string) (Rule, bool) {
	r, ok := c.Rules[v]
	return r, ok
}

// Labels are the Ginkgo labels of the check's spec on a transport, for
// --label-filter.
func (c *Check) Labels(transport string) []string {
	ls := []string{"area:" + strings.ToLower(c.Area()), "id:" + c.ID, "transport:" + transport}
	levels := map[reports.Level]bool{}
	for _, v := range c.Versions() {
		ls = append(ls, "spec:"+v)
		levels[c.Rules[v].Level] = true
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

// register adds a check to the catalog; ids must be unique.
func register(c *Check) *Check {
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

// sameRule gives one rule to every listed version.
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

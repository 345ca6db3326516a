package runner

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/protocol"
	"github.com/mcp-conform/mcp-conform/reports"
	"github.com/mcp-conform/mcp-conform/suites"
)

// MergeFiles reads the JSON reports at paths and merges them (Merge):
// "mcp-conform report merge". Its errors are bad usage (a file that is not
// a report, parts that do not belong together).
func MergeFiles(paths []string) (*reports.Report, error) {
	var parts []*reports.Report
	for _, p := range paths {
		rep, err := ReadReport(p)
		if err != nil {
			return nil, usage(err)
		}
		parts = append(parts, rep)
	}
	rep, err := Merge(parts)
	if err != nil {
		return nil, usage(err)
	}
	return rep, nil
}

// Merge joins the JSON reports of runs that each checked a part of a whole:
// the children of a split run, the --shard slices of CI jobs, or runs of
// different targets. The result is the report the whole run gives: every
// check in report order (transport, version newest first, catalog order),
// the retry-class rows without repeats, the totals recomputed, the target
// facts combined (names and transports joined, the URL, command and mutant
// kept when every part has the same), the versions accepted and refused
// joined. Parts of different targets get each check and version marked
// with its target's name. A check run (target, check, transport, version)
// found in two parts is an error: the same run merged twice.
func Merge(parts []*reports.Report) (*reports.Report, error) {
	if len(parts) == 0 {
		return nil, errors.New("merge: no report")
	}
	var names []string
	for _, p := range parts {
		if !slices.Contains(names, p.Target.Name) {
			names = append(names, p.Target.Name)
		}
	}
	fleet := len(names) > 1
	out := &reports.Report{Schema: reports.SchemaV1, Tool: parts[0].Tool}
	var (
		targets []reports.Target
		lists   []string
		from    = map[string]int{}
		seen    = map[string]bool{}
		start   time.Time
		end     time.Time
	)
	for i, p := range parts {
		if p.Schema != "" && p.Schema != reports.SchemaV1 {
			return nil, fmt.Errorf("merge: report %d has schema %q, want %q", i+1, p.Schema, reports.SchemaV1)
		}
		t := p.Target
		t.Versions = slices.Clone(t.Versions)
		for j := range t.Versions {
			if fleet && t.Versions[j].Target == "" {
				t.Versions[j].Target = p.Target.Name
			}
		}
		targets = append(targets, t)
		lists = append(lists, splitList(p.Target.ProtocolVersion, ",")...)
		for _, c := range p.Checks {
			if fleet && c.Target == "" {
				c.Target = p.Target.Name
			}
			k := strings.Join([]string{c.Target, c.ID, c.Transport, c.ProtocolVersion}, "\x00")
			if j, dup := from[k]; dup && j != i {
				return nil, fmt.Errorf("merge: %s%s is in reports %d and %d: the same run merged twice", c.ID, tags(c), j+1, i+1)
			}
			from[k] = i
			out.Checks = append(out.Checks, c)
		}
		for _, tc := range p.RetryClasses {
			k := tc.Target + "\x00" + tc.Tool + "\x00" + string(tc.Class)
			if !seen[k] {
				seen[k] = true
				out.RetryClasses = append(out.RetryClasses, tc)
			}
		}
		if s := p.StartedAt; !s.IsZero() && (start.IsZero() || s.Before(start)) {
			start = s
		}
		if e := p.StartedAt.Add(time.Duration(p.Duration * float64(time.Millisecond))); e.After(end) {
			end = e
		}
	}
	sortChecks(out.Checks, names)
	out.Target = combineTargets(targets)
	out.Target.ProtocolVersion = joinVersions(lists, checkVersions(out.Checks))
	out.StartedAt = start.UTC()
	if !start.IsZero() {
		out.Duration = float64(end.Sub(start).Microseconds()) / 1000
	}
	out.Baseline = mergeBaselines(parts, out.Checks)
	out.Seed, out.Seeds = mergeSeeds(parts)
	out.Repeat = parts[0].Repeat
	for _, p := range parts[1:] {
		if p.Repeat != out.Repeat {
			out.Repeat = 0
		}
	}
	out.Summary = reports.Summarize(out.Checks)
	return out, nil
}

// mergeSeeds is the seed of parts that share one, or (0 and) the list of
// their different seeds.
func mergeSeeds(parts []*reports.Report) (uint64, []uint64) {
	var seeds []uint64
	for _, p := range parts {
		for _, s := range append([]uint64{p.Seed}, p.Seeds...) {
			if s != 0 && !slices.Contains(seeds, s) {
				seeds = append(seeds, s)
			}
		}
	}
	if len(seeds) == 1 {
		return seeds[0], nil
	}
	return 0, seeds
}

// tags names a check run's target, transport and version, e.g.
// " [stdio 2025-11-25]".
func tags(c reports.Check) string {
	s := strings.TrimSpace(strings.Join([]string{c.Target, c.Transport, c.ProtocolVersion}, " "))
	if s == "" {
		return ""
	}
	return " [" + strings.Join(strings.Fields(s), " ") + "]"
}

// sortChecks puts checks in report order: by target (in the order given),
// transport (stdio first), protocol version (newest first), then catalog
// order — the order of a whole run's report.
func sortChecks(cs []reports.Check, names []string) {
	order := map[string]int{}
	for i, c := range suites.Catalog() {
		order[c.ID] = i
	}
	rank := func(id string) int {
		if r, ok := order[id]; ok {
			return r
		}
		return len(order)
	}
	slices.SortStableFunc(cs, func(a, b reports.Check) int {
		if a.Target != b.Target {
			return slices.Index(names, a.Target) - slices.Index(names, b.Target)
		}
		if a.Transport != b.Transport {
			return strings.Compare(transportOrder(a.Transport), transportOrder(b.Transport))
		}
		if a.ProtocolVersion != b.ProtocolVersion {
			return strings.Compare(b.ProtocolVersion, a.ProtocolVersion)
		}
		if d := rank(a.ID) - rank(b.ID); d != 0 {
			return d
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// transportOrder sorts transports as protocol.Transports does (stdio,
// http, websocket), unknown ones last by name — the order of a whole run's
// targets.
func transportOrder(t string) string {
	if i := slices.Index(protocol.Transports(), protocol.Transport(t)); i >= 0 {
		return strconv.Itoa(i)
	}
	return "9" + t
}

// combineTargets joins the targets of parts: names (" + ") and transports
// (",") without repeats, the URL, command and mutant when all agree, the
// versions joined.
func combineTargets(ts []reports.Target) reports.Target {
	var out reports.Target
	var names, transports []string
	for i, t := range ts {
		for _, n := range splitList(t.Name, " + ") {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
		for _, tr := range splitList(t.Transport, ",") {
			if !slices.Contains(transports, tr) {
				transports = append(transports, tr)
			}
		}
		if i == 0 {
			out.URL, out.Command, out.Mutant = t.URL, t.Command, t.Mutant
		}
		if t.URL != out.URL {
			out.URL = ""
		}
		if t.Command != out.Command {
			out.Command = ""
		}
		if t.Mutant != out.Mutant {
			out.Mutant = ""
		}
		out.Versions = unionVersions(out.Versions, t.Versions)
	}
	slices.SortStableFunc(transports, func(a, b string) int { return strings.Compare(transportOrder(a), transportOrder(b)) })
	out.Name = strings.Join(names, " + ")
	out.Transport = strings.Join(transports, ",")
	return out
}

// checkVersions lists the versions checks ran in.
func checkVersions(cs []reports.Check) []string {
	var vs []string
	for _, c := range cs {
		if c.ProtocolVersion != "" {
			vs = append(vs, c.ProtocolVersion)
		}
	}
	return vs
}

// joinVersions joins versions without repeats, newest first.
func joinVersions(lists ...[]string) string {
	var vs []string
	for _, l := range lists {
		for _, v := range l {
			if !slices.Contains(vs, v) {
				vs = append(vs, v)
			}
		}
	}
	slices.Sort(vs)
	slices.Reverse(vs)
	return strings.Join(vs, ",")
}

// unionVersions joins lists of versions without repeats (the first reason
// of a refusal is kept), in order: target, transport (stdio first),
// version (the order of clients.KnownVersions, then newest first).
func unionVersions(lists ...[]reports.TargetVersion) []reports.TargetVersion {
	var out []reports.TargetVersion
	for _, l := range lists {
		for _, v := range l {
			if !slices.ContainsFunc(out, func(o reports.TargetVersion) bool {
				return o.Target == v.Target && o.Transport == v.Transport && o.ProtocolVersion == v.ProtocolVersion && o.Status == v.Status
			}) {
				out = append(out, v)
			}
		}
	}
	var targets []string
	for _, v := range out {
		if !slices.Contains(targets, v.Target) {
			targets = append(targets, v.Target)
		}
	}
	known := func(v string) int {
		if i := slices.Index(clients.KnownVersions, v); i >= 0 {
			return i
		}
		return len(clients.KnownVersions)
	}
	slices.SortStableFunc(out, func(a, b reports.TargetVersion) int {
		switch {
		case a.Target != b.Target:
			return slices.Index(targets, a.Target) - slices.Index(targets, b.Target)
		case a.Transport != b.Transport:
			return strings.Compare(transportOrder(a.Transport), transportOrder(b.Transport))
		case known(a.ProtocolVersion) != known(b.ProtocolVersion):
			return known(a.ProtocolVersion) - known(b.ProtocolVersion)
		}
		return strings.Compare(b.ProtocolVersion, a.ProtocolVersion)
	})
	if len(out) == 0 {
		return nil
	}
	return out
}

// mergeBaselines joins what a baseline did to each part: the expected
// failures counted again from the merged checks, an entry stale when it
// was stale in some part and expected in none, unmatched when no part
// matched it.
func mergeBaselines(parts []*reports.Report, cs []reports.Check) *reports.BaselineResult {
	var out *reports.BaselineResult
	unmatched := map[reports.BaselineEntry]int{}
	stale := map[reports.BaselineEntry]bool{}
	with := 0
	for _, p := range parts {
		b := p.Baseline
		if b == nil {
			continue
		}
		with++
		if out == nil {
			out = &reports.BaselineResult{File: b.File}
		}
		for _, e := range b.Unmatched {
			if unmatched[e]++; unmatched[e] == 1 {
				out.Unmatched = append(out.Unmatched, e)
			}
		}
		for _, e := range b.Stale {
			if !stale[e] {
				stale[e] = true
				out.Stale = append(out.Stale, e)
			}
		}
	}
	if out == nil {
		return nil
	}
	out.Unmatched = slices.DeleteFunc(out.Unmatched, func(e reports.BaselineEntry) bool { return unmatched[e] < with })
	out.Stale = slices.DeleteFunc(out.Stale, func(e reports.BaselineEntry) bool {
		return slices.ContainsFunc(cs, func(c reports.Check) bool { return c.Expected == e.Reason && strings.EqualFold(c.ID, e.ID) })
	})
	for _, c := range cs {
		if c.Expected != "" {
			out.Expected++
		}
	}
	return out
}

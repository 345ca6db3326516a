package clauses

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// Check is what coverage needs to know of one check of the catalog.
type Check struct {
	// ID is the check id ("SESSION-EXPIRED-404").
	ID string
	// Clauses are the CLAUSES.md ids the check declares it enforces.
	Clauses []string
	// Limits marks declared clauses the check sees only in part (clause id
	// → what it does not see, e.g. "POST only"): they count as partial.
	Limits map[string]string
	// Versions are the protocol versions the check runs in.
	Versions []string
	// Mutants are the reference server's mutants that make the check fail
	// (fixtures.Mutant.Breaks == ID): the proof it can fail.
	Mutants []string
}

// Status values. A clause that cannot be tested black-box reads
// "not testable: REASON".
const (
	Covered     = "covered"
	Partial     = "partial"
	None        = "none"
	notTestable = "not testable"
)

// NotTestableStatus is the status of a clause that cannot be tested.
func NotTestableStatus(reason string) string { return notTestable + ": " + reason }

// IsNotTestable reports whether a status is "not testable: ...".
func IsNotTestable(status string) bool { return strings.HasPrefix(status, notTestable) }

// ClauseCoverage is one clause in the coverage report (the JSON shape of
// `mcp-conform coverage --format json`).
type ClauseCoverage struct {
	ID       string   `json:"id"`
	Level    string   `json:"level"`
	Versions []string `json:"versions"`
	// Status is covered, partial, none or "not testable: REASON": the
	// status in every version when they agree, otherwise partial when some
	// version is covered or partial, else none. ByVersion has each.
	Status    string            `json:"status"`
	ByVersion map[string]string `json:"byVersion"`
	// Checks declaring the clause in one of its versions, and the mutants
	// of those checks; Limits the parts they do not see.
	Checks  []string `json:"checks"`
	Mutants []string `json:"mutants"`
	Limits  []string `json:"limits,omitempty"`
	// Page is the prefix, Binds whom the clause binds, Proposed whether
	// its text is in no pinned page (proposed clauses count apart).
	Page     string `json:"page"`
	Binds    Side   `json:"binds"`
	Proposed bool   `json:"proposed,omitempty"`
	Text     string `json:"text"`
}

// Counts are clause counts by status over one version (or page and
// version). Testable excludes not-testable and proposed clauses;
// CoveredPct is Covered / Testable in percent (100 when nothing is
// testable).
type Counts struct {
	Clauses     int     `json:"clauses"`
	Testable    int     `json:"testable"`
	Covered     int     `json:"covered"`
	Partial     int     `json:"partial"`
	None        int     `json:"none"`
	NotTestable int     `json:"notTestable"`
	Proposed    int     `json:"proposed"`
	CoveredPct  float64 `json:"coveredPct"`
}

func (c *Counts) add(status string, proposed bool) {
	c.Clauses++
	switch {
	case proposed:
		c.Proposed++
		return
	case IsNotTestable(status):
		c.NotTestable++
		return
	}
	c.Testable++
	switch status {
	case Covered:
		c.Covered++
	case Partial:
		c.Partial++
	default:
		c.None++
	}
}

func (c *Counts) finish() {
	if c.Testable == 0 {
		c.CoveredPct = 100
		return
	}
	c.CoveredPct = math.Round(1000*float64(c.Covered)/float64(c.Testable)) / 10
}

// PageCounts are the counts of one page (prefix) in one version.
type PageCounts struct {
	Page    string `json:"page"`
	Title   string `json:"title"`
	Version string `json:"version"`
	Path    string `json:"path,omitempty"`
	Counts
}

// Summary sums a report up: per side (server, client) and version, and per
// page and version.
type Summary struct {
	// Clauses counts every clause; ByStatus by overall status ("not
	// testable" and "proposed" without reasons).
	Clauses  int            `json:"clauses"`
	ByStatus map[string]int `json:"byStatus"`
	// Versions has, per side and version, the counts and the share of
	// testable clauses covered.
	Versions map[Side]map[string]*Counts `json:"versions"`
	// Pages has the counts per page and version, in document order.
	Pages []PageCounts `json:"pages"`
	// Checks is the size of the catalog; Unproven the checks with no
	// mutant.
	Checks   int      `json:"checks"`
	Unproven []string `json:"checksWithoutMutant,omitempty"`
}

// Report is the coverage of a clause set by a catalog.
type Report struct {
	Clauses []ClauseCoverage `json:"clauses"`
	Summary Summary          `json:"summary"`

	set *Set
}

// Compute works out the coverage of set by catalog. In a version V a clause
// is not testable when nt lists it; covered when a check that runs in V
// declares it without a limit and has a mutant; partial when a check that
// runs in V declares it otherwise (with a limit, or with no mutant); none
// when no check does.
func Compute(set *Set, catalog []Check, nt NotTestable) Report {
	byClause := map[string][]*Check{}
	for i := range catalog {
		for _, id := range catalog[i].Clauses {
			byClause[id] = append(byClause[id], &catalog[i])
		}
	}
	r := Report{set: set}
	for _, c := range set.Clauses {
		cc := ClauseCoverage{ID: c.ID, Level: c.Level, Versions: slices.Clone(c.Versions), ByVersion: map[string]string{},
			Page: c.Prefix, Binds: c.Binds, Proposed: c.Proposed, Text: c.Text, Checks: []string{}, Mutants: []string{}}
		reason, untestable := nt[c.ID]
		checks, mutants, limits := map[string]bool{}, map[string]bool{}, map[string]bool{}
		for _, v := range c.Versions {
			status := None
			if untestable {
				status = NotTestableStatus(reason)
			}
			for _, ch := range byClause[c.ID] {
				if !slices.Contains(ch.Versions, v) {
					continue
				}
				checks[ch.ID] = true
				for _, m := range ch.Mutants {
					mutants[m] = true
				}
				limit := ch.Limits[c.ID]
				if limit != "" {
					limits[ch.ID+" ("+limit+")"] = true
				}
				switch {
				case untestable:
				case limit == "" && len(ch.Mutants) > 0:
					status = Covered
				case status != Covered:
					status = Partial
				}
			}
			cc.ByVersion[v] = status
		}
		cc.Status = overall(cc.ByVersion)
		cc.Checks, cc.Mutants, cc.Limits = sortedKeys(checks), sortedKeys(mutants), sortedKeys(limits)
		if len(cc.Limits) == 0 {
			cc.Limits = nil
		}
		r.Clauses = append(r.Clauses, cc)
	}
	r.Summary = summarize(set, r.Clauses)
	r.Summary.Checks = len(catalog)
	for _, ch := range catalog {
		if len(ch.Mutants) == 0 {
			r.Summary.Unproven = append(r.Summary.Unproven, ch.ID)
		}
	}
	sort.Strings(r.Summary.Unproven)
	return r
}

// overall folds the per-version statuses into one.
func overall(by map[string]string) string {
	var first string
	same := true
	anyCover := false
	for _, v := range Versions() {
		s, ok := by[v]
		if !ok {
			continue
		}
		if first == "" {
			first = s
		} else if s != first {
			same = false
		}
		if s == Covered || s == Partial {
			anyCover = true
		}
	}
	switch {
	case first == "":
		return None
	case same:
		return first
	case anyCover:
		return Partial
	default:
		return None
	}
}

func summarize(set *Set, clauses []ClauseCoverage) Summary {
	s := Summary{ByStatus: map[string]int{}, Versions: map[Side]map[string]*Counts{Server: {}, Client: {}}}
	pages := map[string]map[string]*Counts{}
	for _, cc := range clauses {
		s.Clauses++
		key := cc.Status
		if IsNotTestable(key) {
			key = notTestable
		}
		if cc.Proposed {
			key = "proposed"
		}
		s.ByStatus[key]++
		for _, v := range cc.Versions {
			side := s.Versions[cc.Binds]
			if side[v] == nil {
				side[v] = &Counts{}
			}
			side[v].add(cc.ByVersion[v], cc.Proposed)
			if pages[cc.Page] == nil {
				pages[cc.Page] = map[string]*Counts{}
			}
			if pages[cc.Page][v] == nil {
				pages[cc.Page][v] = &Counts{}
			}
			pages[cc.Page][v].add(cc.ByVersion[v], cc.Proposed)
		}
	}
	for _, side := range s.Versions {
		for _, c := range side {
			c.finish()
		}
	}
	for _, prefix := range set.Prefixes {
		for _, v := range Versions() {
			c := pages[prefix][v]
			if c == nil {
				continue
			}
			c.finish()
			p := set.Pages[prefix]
			s.Pages = append(s.Pages, PageCounts{Page: prefix, Title: p.Title, Version: v, Path: p.Paths[v], Counts: *c})
		}
	}
	return s
}

// Filter keeps the clauses of the given pages (prefixes) and sums them up
// again; no prefix keeps everything.
func (r Report) Filter(prefixes ...string) Report {
	if len(prefixes) == 0 {
		return r
	}
	out := Report{set: r.set}
	for _, cc := range r.Clauses {
		if slices.Contains(prefixes, cc.Page) {
			out.Clauses = append(out.Clauses, cc)
		}
	}
	out.Summary = summarize(r.set, out.Clauses)
	out.Summary.Checks, out.Summary.Unproven = r.Summary.Checks, r.Summary.Unproven
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Validate checks a catalog against the clause set and the not-testable
// list. Errors: a check cites an id the set lacks; a clause whose status
// column in CLAUSES.md says covered has no check with a mutant declaring it
// (in one of its versions); a check declares a clause in none of the
// clause's versions, or limits a clause it does not declare; the
// not-testable list names an unknown id, or a clause a check declares.
func Validate(set *Set, catalog []Check, nt NotTestable) []error {
	var errs []error
	proven := map[string]bool{}
	declared := map[string][]string{}
	for _, ch := range catalog {
		for _, id := range ch.Clauses {
			c, ok := set.Lookup(id)
			if !ok {
				errs = append(errs, fmt.Errorf("check %s cites %s, which CLAUSES.md lacks", ch.ID, id))
				continue
			}
			declared[id] = append(declared[id], ch.ID)
			shared := false
			for _, v := range c.Versions {
				if slices.Contains(ch.Versions, v) {
					shared = true
				}
			}
			if !shared {
				errs = append(errs, fmt.Errorf("check %s declares %s but runs in none of its versions (%s)", ch.ID, id, c.VersionsText))
			} else if len(ch.Mutants) > 0 {
				proven[id] = true
			}
		}
		for id := range ch.Limits {
			if !slices.Contains(ch.Clauses, id) {
				errs = append(errs, fmt.Errorf("check %s limits %s, which it does not declare", ch.ID, id))
			}
		}
	}
	for _, c := range set.Clauses {
		if c.Status == Covered && !proven[c.ID] {
			errs = append(errs, fmt.Errorf("%s is marked covered in CLAUSES.md (by %s) but no check with a mutant declares it", c.ID, c.CoveredBy))
		}
	}
	ids := sortedKeys(func() map[string]bool {
		m := map[string]bool{}
		for id := range nt {
			m[id] = true
		}
		return m
	}())
	for _, id := range ids {
		if _, ok := set.Lookup(id); !ok {
			errs = append(errs, fmt.Errorf("clauses-not-testable.yaml lists %s, which CLAUSES.md lacks", id))
		}
		if chs := declared[id]; len(chs) > 0 {
			errs = append(errs, fmt.Errorf("%s is listed as not testable, yet %s declare(s) it", id, strings.Join(chs, ", ")))
		}
	}
	return errs
}

// Drift is a server clause whose status column in CLAUSES.md is not what
// the catalog computes: Written is the column, Computed what Compute gives
// ("not testable: …" shortened to "not testable"), CoveredBy the covered-by
// cell the computed status implies.
type Drift struct {
	ID, Written, Computed, CoveredBy string
}

// Drifts lists the server clauses of r whose written status disagrees with
// the computed one. A clause written "implicit" (the harness relies on it
// while setting up) may compute none: no check declares what setup needs.
func Drifts(set *Set, r Report) []Drift {
	var out []Drift
	for _, cc := range r.Clauses {
		c, ok := set.Lookup(cc.ID)
		if !ok || c.Binds != Server {
			continue
		}
		computed := cc.Status
		if IsNotTestable(computed) {
			computed = notTestable
		}
		written := c.Status
		if written == computed || (written == "implicit" && computed == None) {
			continue
		}
		out = append(out, Drift{ID: cc.ID, Written: written, Computed: computed, CoveredBy: coveredBy(cc)})
	}
	return out
}

// coveredBy is the covered-by cell of a computed clause: its checks, each
// with the part it does not see in parentheses.
func coveredBy(cc ClauseCoverage) string {
	if IsNotTestable(cc.Status) {
		return "docs/clauses-not-testable.yaml"
	}
	if len(cc.Checks) == 0 {
		return None
	}
	limits := map[string]string{}
	for _, l := range cc.Limits {
		if id, rest, ok := strings.Cut(l, " ("); ok {
			limits[id] = strings.TrimSuffix(rest, ")")
		}
	}
	parts := make([]string, 0, len(cc.Checks))
	for _, id := range cc.Checks {
		if l := limits[id]; l != "" {
			id += " (" + l + ")"
		}
		parts = append(parts, id)
	}
	return strings.Join(parts, ", ")
}

// Rewrite returns md with the status and covered-by cells of each drifted
// clause's row set to the computed ones; other rows are unchanged.
func Rewrite(md []byte, drifts []Drift) []byte {
	byID := map[string]Drift{}
	for _, d := range drifts {
		byID[d.ID] = d
	}
	lines := strings.Split(string(md), "\n")
	for i, line := range lines {
		cells := splitRow(line)
		if len(cells) < 6 {
			continue
		}
		d, ok := byID[cells[0]]
		if !ok {
			continue
		}
		// Cut the last two cells (status, covered by) off the row.
		body := strings.TrimSuffix(strings.TrimRight(line, " "), " |")
		j := strings.LastIndex(body, " | ")
		if j < 0 {
			continue
		}
		k := strings.LastIndex(body[:j], " | ")
		if k < 0 {
			continue
		}
		lines[i] = body[:k] + " | " + d.Computed + " | " + d.CoveredBy + " |"
	}
	return []byte(strings.Join(lines, "\n"))
}

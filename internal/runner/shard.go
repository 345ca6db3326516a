package runner

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mcp-conform/mcp-conform/suites"
)

// Shard is one slice of a run, --shard INDEX/COUNT (1 ≤ INDEX ≤ COUNT);
// the zero Shard is the whole run.
//
// The unit is the check: every run of one check (each transport and
// version it is planned on) lands in the same slice, so that a slice is a
// label filter (id:…) that a child process and an in-process run apply
// alike. The checks are dealt out by their planned runs, most first, each
// to the slice with the fewest runs so far (ties: the lower index; equal
// weights: catalog order): the same plan gives the same slices on every
// machine, and the COUNT slices together are the whole run.
type Shard struct{ Index, Count int }

// ParseShard reads "i/n".
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return Shard{}, fmt.Errorf("--shard %q: want INDEX/COUNT with 1 ≤ INDEX ≤ COUNT, e.g. 2/4", s)
	}
	return Shard{Index: i, Count: n}, nil
}

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Checks deals the checks ro selects in cfg out to the slices and returns
// the ids in this one, in catalog order.
func (s Shard) Checks(cfg *suites.Config, ro suites.RunOptions) ([]string, error) {
	ws, err := plannedRuns(cfg, ro)
	if err != nil {
		return nil, err
	}
	order := map[string]int{}
	for i, w := range ws {
		order[w.id] = i
	}
	slices.SortStableFunc(ws, func(a, b plannedRun) int { return b.n - a.n })
	load := make([]int, s.Count)
	var mine []string
	for _, w := range ws {
		k := slices.Index(load, slices.Min(load))
		load[k] += w.n
		if k == s.Index-1 {
			mine = append(mine, w.id)
		}
	}
	slices.SortFunc(mine, func(a, b string) int { return order[a] - order[b] })
	return mine, nil
}

// filter is the label filter of this slice: ro's own, and one of its
// checks' ids. empty reports a slice with no check.
func (s Shard) filter(cfg *suites.Config, ro suites.RunOptions) (string, bool, error) {
	ids, err := s.Checks(cfg, ro)
	if err != nil || len(ids) == 0 {
		return ro.LabelFilter, true, err
	}
	for i, id := range ids {
		ids[i] = "id:" + id
	}
	return and(ro.LabelFilter, strings.Join(ids, " || ")), false, nil
}

// and joins two label filters.
func and(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return "(" + a + ") && (" + b + ")"
}

// plannedRun is a check ro selects and the number of its check runs in
// cfg.
type plannedRun struct {
	id string
	n  int
}

// plannedRuns returns the checks ro selects that have check runs in cfg,
// in catalog order, each with its count: what both a shard and a split
// run's pieces deal out.
func plannedRuns(cfg *suites.Config, ro suites.RunOptions) ([]plannedRun, error) {
	checks, err := suites.Selected(ro)
	if err != nil {
		return nil, err
	}
	var out []plannedRun
	for _, c := range checks {
		o := ro
		o.LabelFilter = and(ro.LabelFilter, "id:"+c.ID)
		n, err := suites.Planned(cfg, o)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			out = append(out, plannedRun{c.ID, n})
		}
	}
	return out, nil
}

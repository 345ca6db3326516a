package runner

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/mcp-conform/mcp-conform/reports"
	"github.com/mcp-conform/mcp-conform/suites"
)

// A split run's children are pieces: each runs one part (a target in one
// version), or one slice of a part's checks. A part whose server the
// harness starts for each check (a command, on stdio or on a {port} of its
// own: every check has its own server processes and private directory)
// may be sliced, as its versions already run at once; a fixed URL's checks
// share one server and stay in one child per version.
//
//	parts:   stdio 2026 (49 runs)   http 2025-11-25 (69 runs)   ...
//	pieces:  stdio 2026 1/2, 2/2    http 2025-11-25 1/2, 2/2    ...  (longest first, Jobs at once)
//	         └ each a label filter id:A || id:C || … || id:SCHEMA-VALID
//	join:    a sliced part's reports + PartStates ─▶ suites.JoinParts ─▶ one part's results
//
// Slicing fills the job slots to the end of the run: with as many parts as
// slots, the run lasts as long as its longest part; its slices end
// sooner. Each slice is a child process (a start and a plan: tens of ms of
// CPU), so a part is sliced only into pieces of at least minSliceRuns
// check runs, and the run into about twice as many pieces as slots.

// minSliceRuns is the fewest check runs a slice of a part may have;
// sliceRunsEnv overrides it (tests slice a run of a few checks with it).
const (
	minSliceRuns = 24
	sliceRunsEnv = "MCP_CONFORM_SLICE_RUNS"
)

// sliceRuns is minSliceRuns, or the positive number sliceRunsEnv gives.
func sliceRuns() int {
	if n, err := strconv.Atoi(os.Getenv(sliceRunsEnv)); err == nil && n > 0 {
		return n
	}
	return minSliceRuns
}

// piece is one child process of a split run.
type piece struct {
	// part indexes p.parts and p.cfg.Targets.
	part int
	// slice is this piece's slice of the part (1-based) of slices; a part
	// that is not sliced is its one slice of 1.
	slice, slices int
	// filter is the child's label filter.
	filter string
	// runs counts the check runs planned for the piece.
	runs int
}

// pieces deals the plan's parts out to child processes, longest first,
// slicing the parts that may be sliced so that there are about twice as
// many pieces as job slots.
func (p *Plan) pieces(jobs int) ([]piece, error) {
	runs := make([]int, len(p.parts))
	total := 0
	for i := range p.parts {
		n, err := suites.Planned(p.partConfig(i), p.runOptions())
		if err != nil {
			return nil, err
		}
		runs[i] = n
		total += n
	}
	per := max(1, (total+2*jobs-1)/(2*jobs))
	least := sliceRuns()
	var out []piece
	for i := range p.parts {
		k := 1
		if p.sliceable(i) {
			k = max(1, min((runs[i]+per-1)/per, runs[i]/least))
		}
		if k == 1 {
			out = append(out, piece{part: i, slice: 1, slices: 1, filter: p.filter, runs: runs[i]})
			continue
		}
		for j := 1; j <= k; j++ {
			ids, err := Shard{Index: j, Count: k}.Checks(p.partConfig(i), p.runOptions())
			if err != nil {
				return nil, err
			}
			if len(ids) == 0 {
				continue
			}
			alt := make([]string, 0, len(ids)+1)
			for _, id := range ids {
				alt = append(alt, "id:"+id)
			}
			// SCHEMA-VALID judges every check's messages: each slice
			// validates its own (when the run selects it at all) and
			// the parent joins them.
			alt = append(alt, "id:"+schemaID)
			out = append(out, piece{part: i, slice: j, slices: k, filter: and(p.filter, strings.Join(alt, " || ")), runs: len(ids)})
		}
	}
	// Longest first (ties: plan order, then slice order): with fewer job
	// slots than pieces, the long ones start at once and the short ones
	// fill the slots they leave, which ends the whole sooner.
	slices.SortStableFunc(out, func(a, b piece) int { return b.runs - a.runs })
	return out, nil
}

// schemaID is the passive check every slice keeps.
const schemaID = "SCHEMA-VALID"

// partConfig is the configuration of part i alone, as its child plans it.
func (p *Plan) partConfig(i int) *suites.Config {
	cfg := *p.cfg
	// A plan of one part is that part's whole run: it keeps the checks of
	// other transports and versions, which SKIP with the reason, as the
	// run in one process would (slicesAlone).
	cfg.Targets, cfg.Part = []*suites.Manifest{p.cfg.Targets[i]}, len(p.parts) > 1
	return &cfg
}

// sliceable reports whether part i's checks may run in several processes
// at once: its server is started for each check, by a command — on stdio,
// or over HTTP on a port of its own ({port} in its URL). A fixed URL is
// one server the checks share.
func (p *Plan) sliceable(i int) bool {
	t := p.cfg.Targets[i]
	return len(t.Command) > 0 && (t.URL == "" || strings.Contains(t.URL, "{port}"))
}

// slicesAlone reports whether a run of one part (one target in one
// version: --spec V, or a server that accepts one) is dealt into slices
// too, as a part of a larger run would be: its server is started per
// check and it has the check runs for more than one slice. Such a run
// would otherwise go one check at a time in this process.
func (p *Plan) slicesAlone() bool {
	if len(p.parts) != 1 || !p.sliceable(0) || p.o.Shard.Count > 0 {
		return false
	}
	jobs := p.o.Jobs
	if jobs <= 0 {
		jobs = DefaultJobs
	}
	pcs, err := p.pieces(jobs)
	return err == nil && len(pcs) > 1
}

// joinSlices gives each sliced part's results to the report of its first
// slice: every result of its slices, SCHEMA-VALID and
// the retry classes joined over their saved states (suites.JoinParts); its
// other slices keep only their target facts and times, for Merge. Pieces of
// parts that were not sliced are kept as they are. The reports come back
// in plan order (part, then slice).
func (p *Plan) joinSlices(pcs []piece, reps []*reports.Report, paths []string) ([]*reports.Report, error) {
	byPart := map[int][]int{}
	var order []int
	for i, pc := range pcs {
		if pc.slices == 1 {
			continue
		}
		if _, seen := byPart[pc.part]; !seen {
			order = append(order, pc.part)
		}
		byPart[pc.part] = append(byPart[pc.part], i)
	}
	out := slices.Clone(reps)
	for _, part := range order {
		var (
			res    []reports.Check
			states []suites.PartState
		)
		for _, i := range byPart[part] {
			res = append(res, reps[i].Checks...)
			st, err := readState(paths[i] + ".state")
			if err != nil {
				return nil, fmt.Errorf("the run for target %d (%s), slice %d/%d: %w", part, p.cfg.Targets[part].Transport, pcs[i].slice, pcs[i].slices, err)
			}
			states = append(states, st)
		}
		for k, i := range byPart[part] {
			r := *reps[i]
			r.Checks, r.RetryClasses = nil, nil
			if k == 0 {
				r.Checks, r.RetryClasses = suites.JoinParts(p.partConfig(part), res, states)
			}
			out[i] = &r
		}
	}
	// Merged in plan order, as a run of one child per part is: the
	// report's order of retry-class rows and target facts follows it.
	idx := make([]int, len(pcs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if pcs[a].part != pcs[b].part {
			return pcs[a].part - pcs[b].part
		}
		return pcs[a].slice - pcs[b].slice
	})
	ordered := make([]*reports.Report, len(idx))
	for k, i := range idx {
		ordered[k] = out[i]
	}
	return ordered, nil
}

// readState reads the PartState a child wrote.
func readState(path string) (suites.PartState, error) {
	var st suites.PartState
	b, err := os.ReadFile(path)
	if err != nil {
		return st, fmt.Errorf("no saved state (%w)", err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("saved state %s: %w", path, err)
	}
	return st, nil
}

// writeState saves this child's PartState where its parent asked
// (stateEnv), when it asked.
func writeState() error {
	path, ok := os.LookupEnv(stateEnv)
	if !ok || path == "" {
		return nil
	}
	b, err := json.Marshal(suites.SavePartState())
	if err != nil {
		return fmt.Errorf("save the part's state: %w", err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("save the part's state: %w", err)
	}
	return nil
}

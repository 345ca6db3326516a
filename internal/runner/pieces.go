package runner

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"runtime"
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
//	pieces:  stdio 2026 1/2, 2/2    http 2025-11-25 1/3 … 3/3   ...  (costliest first, Jobs at once)
//	         └ each a label filter id:A || id:C || … || id:SCHEMA-VALID
//	join:    a sliced part's reports + PartStates ─▶ suites.JoinParts ─▶ one part's results
//
// A run lasts as long as its costliest child, and a child's checks mostly
// wait on the server (the slow role's steps, a session left to expire), so
// the checks are dealt by what they are expected to take (checkCost, the
// committed costs.json), not by their number: a few checks hold most of
// the run's time. How many slices each part gets comes from simulating the
// schedule (Jobs slots, costliest piece first to the slot that frees
// first) for a range of bounds on a slice's cost, each child costing
// pieceOverheadMs besides its checks; the bound whose schedule ends first
// wins, each child's start charged to the cores too (ties: fewer children).

// pieceOverheadMs is what a child process costs before its first check
// (start, plan, catalog, schemas): about 30–50 ms measured on 2 cores.
const pieceOverheadMs = 60

// pieceCPUMs is the CPU a child's start takes, which the children running
// beside it lack on a machine of few cores: its version's schema compiled
// (36–65 ms), Ginkgo, the catalog and the plan. Measured on the full
// reference run at 16 jobs: 46 children took 2.1 s more CPU than 16
// (about 70 ms each), and 16 ended it in 0.75 of the wall time (4
// alternated pairs under load).
const pieceCPUMs = 70

// sliceRunsEnv, when set to a positive N, slices every part that may be
// sliced into slices of about N check runs instead of by cost: tests slice
// a run of a few quick checks with it.
const sliceRunsEnv = "MCP_CONFORM_SLICE_RUNS"

// forcedSliceRuns is sliceRunsEnv's positive number, or 0.
func forcedSliceRuns() int {
	if n, err := strconv.Atoi(os.Getenv(sliceRunsEnv)); err == nil && n > 0 {
		return n
	}
	return 0
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
	// cost is the piece's expected milliseconds: its checks' costs and
	// pieceOverheadMs.
	cost float64
}

// partCheck is one check planned in a part, with its expected cost.
type partCheck struct {
	id   string
	cost float64
}

// pieces deals the plan's parts out to child processes, costliest first,
// slicing the parts that may be sliced as far as the simulated schedule
// of jobs slots ends sooner.
func (p *Plan) pieces(jobs int) ([]piece, error) {
	checks := make([][]partCheck, len(p.parts))
	for i := range p.parts {
		cs, err := p.partChecks(i)
		if err != nil {
			return nil, err
		}
		checks[i] = cs
	}
	k := p.sliceCounts(checks, jobs)
	var out []piece
	for i := range p.parts {
		if k[i] <= 1 {
			out = append(out, piece{part: i, slice: 1, slices: 1, filter: p.filter, runs: len(checks[i]), cost: sumCost(checks[i]) + pieceOverheadMs})
			continue
		}
		for j, sl := range dealByCost(checks[i], k[i]) {
			if len(sl) == 0 {
				continue
			}
			alt := make([]string, 0, len(sl)+1)
			for _, c := range sl {
				alt = append(alt, "id:"+c.id)
			}
			// SCHEMA-VALID judges every check's messages (and
			// HTTP-RESPONSE-CONTENT-TYPE every answer's head, the mixed
			// TOOLS-OUTPUT-SCHEMA and TOOLS-STRUCTURED-TEXT every
			// tools/call result): each slice judges its own (when the
			// run selects the check at all) and the parent joins them.
			for _, id := range passiveIDs() {
				alt = append(alt, "id:"+id)
			}
			out = append(out, piece{part: i, slice: j + 1, slices: k[i], filter: and(p.filter, strings.Join(alt, " || ")), runs: len(sl), cost: sumCost(sl) + pieceOverheadMs})
		}
	}
	// Costliest first (ties: plan order, then slice order): with fewer job
	// slots than pieces, the long ones start at once and the short ones
	// fill the slots they leave, which ends the whole sooner.
	slices.SortStableFunc(out, func(a, b piece) int { return cmp.Compare(b.cost, a.cost) })
	return out, nil
}

// partChecks are the checks planned in part i, in catalog order, each
// with its expected cost on the part's transport.
func (p *Plan) partChecks(i int) ([]partCheck, error) {
	cfg := p.partConfig(i)
	runs, err := plannedRuns(cfg, p.runOptions())
	if err != nil {
		return nil, err
	}
	tr := cfg.Targets[0].Transport
	out := make([]partCheck, 0, len(runs))
	for _, r := range runs {
		out = append(out, partCheck{id: r.id, cost: float64(r.n) * checkCost(r.id, tr)})
	}
	return out, nil
}

// sliceCounts says into how many slices each part is dealt: 1 for a part
// that may not be sliced; else the count sliceRunsEnv forces, or the one
// of the bound on a slice's cost whose simulated schedule ends first.
func (p *Plan) sliceCounts(checks [][]partCheck, jobs int) []int {
	counts := func(bound float64) []int {
		k := make([]int, len(checks))
		for i, cs := range checks {
			k[i] = 1
			if !p.sliceable(i) || len(cs) < 2 {
				continue
			}
			if n := forcedSliceRuns(); n > 0 {
				k[i] = max(1, len(cs)/n)
				continue
			}
			k[i] = min(len(cs), max(1, int(math.Ceil(sumCost(cs)/bound))))
		}
		return k
	}
	if forcedSliceRuns() > 0 {
		return counts(0)
	}
	total, dearest, n := 0.0, 0.0, 0
	for _, cs := range checks {
		total += sumCost(cs)
		n += len(cs)
		for _, c := range cs {
			dearest = max(dearest, c.cost)
		}
	}
	best := counts(math.Inf(1))
	bestEnd, bestPieces := simulate(checks, best, jobs)
	// Bounds from the whole run on one slot down to a share of 4×jobs
	// slices (never below the dearest check: it is not cut).
	for m := 2; m <= min(n, 4*jobs); m++ {
		k := counts(max(total/float64(m), dearest))
		end, pcs := simulate(checks, k, jobs)
		if end < bestEnd || end == bestEnd && pcs < bestPieces {
			best, bestEnd, bestPieces = k, end, pcs
		}
	}
	return best
}

// simulate deals each part i into k[i] slices and schedules the pieces on
// jobs slots, costliest first, each to the slot that frees first: when the
// last one ends, plus the CPU every child's start takes from the others
// (pieceCPUMs over the cores), and how many pieces there are.
func simulate(checks [][]partCheck, k []int, jobs int) (float64, int) {
	var costs []float64
	for i, cs := range checks {
		for _, sl := range dealByCost(cs, k[i]) {
			if len(sl) > 0 || k[i] == 1 {
				costs = append(costs, sumCost(sl)+pieceOverheadMs)
			}
		}
	}
	slices.SortFunc(costs, func(a, b float64) int { return cmp.Compare(b, a) })
	slots := make([]float64, max(1, jobs))
	for _, c := range costs {
		slots[slices.Index(slots, slices.Min(slots))] += c
	}
	return slices.Max(slots) + float64(len(costs))*pieceCPUMs/float64(runtime.NumCPU()), len(costs)
}

// dealByCost deals checks into k slices: costliest first, each to the
// slice with the least cost so far (ties: the lower index; equal costs:
// catalog order). Each slice keeps catalog order.
func dealByCost(checks []partCheck, k int) [][]partCheck {
	k = max(1, k)
	idx := make([]int, len(checks))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(checks[b].cost, checks[a].cost) })
	load := make([]float64, k)
	owner := make([]int, len(checks))
	for _, i := range idx {
		j := slices.Index(load, slices.Min(load))
		load[j] += checks[i].cost
		owner[i] = j
	}
	out := make([][]partCheck, k)
	for i, c := range checks {
		out[owner[i]] = append(out[owner[i]], c)
	}
	return out
}

// sumCost adds up the checks' costs.
func sumCost(checks []partCheck) float64 {
	s := 0.0
	for _, c := range checks {
		s += c.cost
	}
	return s
}

// passiveIDs are the passive checks every slice keeps (SCHEMA-VALID,
// HTTP-RESPONSE-CONTENT-TYPE): the catalog's checks marked Passive.
func passiveIDs() []string {
	var ids []string
	for _, c := range suites.Catalog() {
		if c.Passive {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

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
	pcs, err := p.pieces(p.jobs())
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

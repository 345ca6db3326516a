package runner

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"

	"github.com/mcp-conform/mcp-conform/reports"
)

// costs.json holds what one run of each check took against the built-in
// reference, in milliseconds, by check id and transport (the mean over
// the versions it ran in). A split run deals its checks by it (pieces.go):
// most of a check's time is waiting on the server's steps, and the same
// checks wait long against any server (the slow role's calls, a session
// left to expire, a silent stream). Regenerate it from a JSON report of
// the full reference run:
//
//	mcp-conform run -q --repeat 3 --json /tmp/full.json
//	go test ./internal/runner -run TestCheckCosts -update-costs /tmp/full.json
//
//go:embed costs.json
var costsJSON []byte

// checkCosts is costs.json: check id ─▶ transport ─▶ ms.
type checkCosts map[string]map[string]float64

var (
	costsOnce sync.Once
	costs     checkCosts
	// defaultCost is the cost of a check the table does not know (one
	// newer than it): the mean of the table's runs.
	defaultCost float64
)

// loadCosts reads the embedded table once.
func loadCosts() {
	costsOnce.Do(func() {
		if err := json.Unmarshal(costsJSON, &costs); err != nil {
			panic(fmt.Sprintf("runner: costs.json: %v", err))
		}
		sum, n := 0.0, 0
		for _, byTransport := range costs {
			for _, ms := range byTransport {
				sum += ms
				n++
			}
		}
		defaultCost = 100
		if n > 0 {
			defaultCost = sum / float64(n)
		}
	})
}

// checkCost is the expected milliseconds of one run of check id on
// transport: the table's, its dearest transport's when the table does not
// have this one (WebSocket), or defaultCost for a check it does not know.
func checkCost(id, transport string) float64 {
	loadCosts()
	byTransport, ok := costs[id]
	if !ok {
		return defaultCost
	}
	if ms, ok := byTransport[transport]; ok {
		return ms
	}
	return slices.Max(slices.Collect(maps.Values(byTransport)))
}

// costsFromReport builds the table from a report's check runs: the mean
// duration of each check id on each transport (over every run of a report
// of --repeat N), whole milliseconds (at least 1). SKIPped checks
// (nothing waited) are left out.
func costsFromReport(rep *reports.Report) checkCosts {
	type acc struct {
		sum float64
		n   int
	}
	sums := map[string]map[string]*acc{}
	for _, c := range rep.Checks {
		if c.Status == reports.Skip {
			continue
		}
		if sums[c.ID] == nil {
			sums[c.ID] = map[string]*acc{}
		}
		a := sums[c.ID][c.Transport]
		if a == nil {
			a = &acc{}
			sums[c.ID][c.Transport] = a
		}
		if len(c.Runs) == 0 {
			a.sum += c.DurationMs
			a.n++
		}
		// A report of --repeat N: every run's time.
		for _, r := range c.Runs {
			a.sum += r.DurationMs
			a.n++
		}
	}
	out := checkCosts{}
	for id, byTransport := range sums {
		out[id] = map[string]float64{}
		for tr, a := range byTransport {
			out[id][tr] = max(1, math.Round(a.sum/float64(a.n)))
		}
	}
	return out
}

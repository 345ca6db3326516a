package runner

import (
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/mcp-conform/mcp-conform/suites"
)

var updateCosts = flag.String("update-costs", "", "rewrite costs.json from this JSON report of the full reference run")

// TestCheckCosts: the embedded cost table reads, every cost is positive,
// and checks of the catalog it does not know yet (dealt at defaultCost)
// are named in the log. With -update-costs REPORT it is rewritten from a
// report of the full reference run.
func TestCheckCosts(t *testing.T) {
	if *updateCosts != "" {
		rep, err := ReadReport(*updateCosts)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.MarshalIndent(costsFromReport(rep), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("costs.json", append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("costs.json rewritten from %s (%d check runs): rebuild to use it", *updateCosts, len(rep.Checks))
		return
	}
	loadCosts()
	if len(costs) == 0 {
		t.Fatal("costs.json is empty")
	}
	for id, byTransport := range costs {
		for tr, ms := range byTransport {
			if ms <= 0 {
				t.Errorf("%s on %s costs %v ms, want > 0", id, tr, ms)
			}
		}
	}
	for _, c := range suites.Catalog() {
		if _, ok := costs[c.ID]; !ok && !c.Passive {
			t.Logf("%s is not in costs.json: dealt at %.0f ms a run (regenerate the table: see costs.go)", c.ID, defaultCost)
		}
	}
}

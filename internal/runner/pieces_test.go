package runner

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/suites"
)

// TestPieces: a plan's parts are sliced only where the server is started
// per check (a command, on stdio or on a {port} of its own), and only when
// that ends the simulated schedule sooner (never with one job; with two,
// as the catalog's costs decide); every
// slice keeps SCHEMA-VALID; the slices of a part hold each of its checks
// once; a fixed URL is one piece per part; the pieces come costliest
// first, and no piece costs more than the dearest part would alone.
func TestPieces(t *testing.T) {
	ref := suites.ExpandVersions(suites.ReferenceTargets(""), suites.AllVersions)
	fixed, err := suites.URLManifest("http://127.0.0.1:1/mcp")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		targets []*suites.Manifest
		jobs    int
		// sliced says whether some part must be sliced; either, that the
		// simulated schedule decides (the costs of the catalog of the
		// day), which the property below checks instead.
		sliced, either bool
	}{
		{"reference, every version, 6 jobs", ref, 6, true, false},
		{"reference, every version, 16 jobs", ref, 16, true, false},
		{"reference, every version, 2 jobs", ref, 2, false, true},
		{"reference, newest version, 2 jobs", suites.ReferenceTargets(""), 2, true, false},
		{"reference, every version, 1 job", ref, 1, false, false},
		{"a fixed URL, every version", suites.ExpandVersions([]*suites.Manifest{fixed}, suites.AllVersions), 6, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Plan{o: Options{Config: &suites.Config{Targets: tc.targets}}}
			for i := range tc.targets {
				p.parts = append(p.parts, part{base: i})
			}
			p.cfg = p.config()
			pcs, err := p.pieces(tc.jobs)
			if err != nil {
				t.Fatal(err)
			}
			for _, pc := range pcs {
				t.Logf("part %d slice %d/%d: %d runs, %.0f ms", pc.part, pc.slice, pc.slices, pc.runs, pc.cost)
			}
			if len(pcs) < len(p.parts) {
				t.Fatalf("%d pieces for %d parts", len(pcs), len(p.parts))
			}
			sliced := false
			for i, pc := range pcs {
				if i > 0 && pc.cost > pcs[i-1].cost {
					t.Errorf("piece %d costs %.0f ms after one of %.0f: not costliest first", i, pc.cost, pcs[i-1].cost)
				}
				if pc.slices == 1 {
					continue
				}
				sliced = true
				if !p.sliceable(pc.part) {
					t.Errorf("part %d (%s) sliced though its server is not started per check", pc.part, p.cfg.Targets[pc.part].URL)
				}
				if !strings.Contains(pc.filter, "id:SCHEMA-VALID") {
					t.Errorf("slice %d/%d of part %d leaves SCHEMA-VALID out: %s", pc.slice, pc.slices, pc.part, pc.filter)
				}
			}
			if sliced != tc.sliced && !tc.either {
				t.Errorf("sliced %v, want %v", sliced, tc.sliced)
			}
			// Slicing only where it ends the simulated schedule sooner
			// than one piece per part.
			if sliced {
				checks := make([][]partCheck, len(p.parts))
				ones := make([]int, len(p.parts))
				for i := range p.parts {
					if checks[i], err = p.partChecks(i); err != nil {
						t.Fatal(err)
					}
					ones[i] = 1
				}
				whole, _ := simulate(checks, ones, tc.jobs)
				chosen, _ := simulate(checks, p.sliceCounts(checks, tc.jobs), tc.jobs)
				if chosen >= whole {
					t.Errorf("sliced, but its simulated end %.0f ms is not before one piece per part's %.0f ms", chosen, whole)
				}
			}
			// Every check of a sliced part is in exactly one of its slices.
			for i := range p.parts {
				var ids []string
				for _, pc := range pcs {
					if pc.part != i || pc.slices == 1 {
						continue
					}
					for _, alt := range strings.Split(pc.filter, " || ") {
						if id, ok := strings.CutPrefix(alt, "id:"); ok && !slices.Contains(passiveIDs(), id) {
							ids = append(ids, id)
						}
					}
				}
				if ids == nil {
					continue
				}
				n, err := suites.Planned(p.partConfig(i), p.runOptions())
				if err != nil {
					t.Fatal(err)
				}
				sorted := slices.Clone(ids)
				slices.Sort(sorted)
				if len(slices.Compact(sorted)) != len(ids) || len(ids) != n {
					t.Errorf("part %d: its slices hold %d checks (%d distinct), the part plans %d runs", i, len(ids), len(slices.Compact(sorted)), n)
				}
			}
		})
	}
}

// TestDefaultJobs: --jobs 0 is ReferenceJobs when every target is the
// built-in one (its checks mostly wait), DefaultJobs when any is not; a
// --jobs given is kept.
func TestDefaultJobs(t *testing.T) {
	fixed, err := suites.URLManifest("http://127.0.0.1:1/mcp")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		targets []*suites.Manifest
		jobs    int
		want    int
	}{
		{"built-in", suites.ReferenceTargets(""), 0, ReferenceJobs},
		{"built-in mutant, websocket too", append(suites.ReferenceTargets("respond-after-cancel"), suites.ReferenceWSManifest("respond-after-cancel")), 0, ReferenceJobs},
		{"built-in, --jobs 2", suites.ReferenceTargets(""), 2, 2},
		{"a URL", []*suites.Manifest{fixed}, 0, DefaultJobs},
	} {
		p := &Plan{o: Options{Config: &suites.Config{Targets: tc.targets}, Jobs: tc.jobs}}
		if got := p.jobs(); got != tc.want {
			t.Errorf("%s: %d jobs, want %d", tc.name, got, tc.want)
		}
	}
	if ReferenceJobs < DefaultJobs || ReferenceJobs > 16 {
		t.Errorf("ReferenceJobs %d: want DefaultJobs (%d) to 16", ReferenceJobs, DefaultJobs)
	}
}

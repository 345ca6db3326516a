package runner

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/suites"
)

// TestPieces: a plan's parts are sliced only where the server is started
// per check (a command, on stdio or on a {port} of its own), into slices
// of at least minSliceRuns check runs; every slice keeps SCHEMA-VALID; the
// slices of a part hold each of its checks once; a fixed URL is one piece
// per part; the pieces come longest first.
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
		// sliced says whether some part must be sliced.
		sliced bool
	}{
		{"reference, every version, 6 jobs", ref, 6, true},
		{"reference, every version, 1 job", ref, 1, false},
		{"a fixed URL, every version", suites.ExpandVersions([]*suites.Manifest{fixed}, suites.AllVersions), 6, false},
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
			if len(pcs) < len(p.parts) {
				t.Fatalf("%d pieces for %d parts", len(pcs), len(p.parts))
			}
			sliced := false
			for i, pc := range pcs {
				if i > 0 && pc.runs > pcs[i-1].runs {
					t.Errorf("piece %d has %d runs after one of %d: not longest first", i, pc.runs, pcs[i-1].runs)
				}
				if pc.slices == 1 {
					continue
				}
				sliced = true
				if !p.sliceable(pc.part) {
					t.Errorf("part %d (%s) sliced though its server is not started per check", pc.part, p.cfg.Targets[pc.part].URL)
				}
				if pc.runs < minSliceRuns {
					t.Errorf("a slice of %d check runs (fewest %d)", pc.runs, minSliceRuns)
				}
				if !strings.Contains(pc.filter, "id:SCHEMA-VALID") {
					t.Errorf("slice %d/%d of part %d leaves SCHEMA-VALID out: %s", pc.slice, pc.slices, pc.part, pc.filter)
				}
			}
			if sliced != tc.sliced {
				t.Errorf("sliced %v, want %v", sliced, tc.sliced)
			}
			// Every check of a sliced part is in exactly one of its slices.
			for i := range p.parts {
				var ids []string
				for _, pc := range pcs {
					if pc.part != i || pc.slices == 1 {
						continue
					}
					for _, alt := range strings.Split(pc.filter, " || ") {
						if id, ok := strings.CutPrefix(alt, "id:"); ok && id != "SCHEMA-VALID" {
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

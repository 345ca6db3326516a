package runner

import (
	"slices"
	"testing"

	"github.com/mcp-conform/mcp-conform/suites"
)

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Shard
		ok   bool
	}{
		{"1/1", Shard{1, 1}, true},
		{"2/4", Shard{2, 4}, true},
		{"4/4", Shard{4, 4}, true},
		{"0/4", Shard{}, false},
		{"5/4", Shard{}, false},
		{"1/0", Shard{}, false},
		{"2", Shard{}, false},
		{"a/b", Shard{}, false},
		{"-1/2", Shard{}, false},
	} {
		got, err := ParseShard(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v (ok %v)", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// TestShardsPartitionTheRun: for every COUNT, the COUNT slices of a plan are
// disjoint, together hold every check the whole run plans, are the same on
// every call, and are balanced to within the heaviest check's runs.
func TestShardsPartitionTheRun(t *testing.T) {
	perVersion := &suites.Config{Targets: suites.ExpandVersions(suites.ReferenceTargets(""), suites.AllVersions)}
	lone := &suites.Config{Targets: []*suites.Manifest{suites.ReferenceManifest("")}}
	for _, tc := range []struct {
		name string
		cfg  *suites.Config
		ro   suites.RunOptions
	}{
		{"reference, every version", perVersion, suites.RunOptions{}},
		{"one stdio target", lone, suites.RunOptions{}},
		{"filtered", perVersion, suites.RunOptions{LabelFilter: "area:cancel || area:session"}},
		{"focused", perVersion, suites.RunOptions{Focus: []string{"PROGRESS"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			whole, err := suites.Selected(tc.ro)
			if err != nil {
				t.Fatal(err)
			}
			total, err := suites.Planned(tc.cfg, tc.ro)
			if err != nil || total == 0 {
				t.Fatalf("planned %d, %v", total, err)
			}
			heaviest := 0 // the most runs one check plans: the bound of a greedy deal
			for _, c := range whole {
				o := tc.ro
				o.LabelFilter = and(tc.ro.LabelFilter, "id:"+c.ID)
				n, err := suites.Planned(tc.cfg, o)
				if err != nil {
					t.Fatal(err)
				}
				heaviest = max(heaviest, n)
			}
			var want []string
			for _, c := range whole {
				want = append(want, c.ID)
			}
			for _, n := range []int{1, 2, 3, 7} {
				var got []string
				runs := make([]int, n)
				for i := 1; i <= n; i++ {
					s := Shard{i, n}
					ids, err := s.Checks(tc.cfg, tc.ro)
					if err != nil {
						t.Fatal(err)
					}
					if n == 3 {
						if again, _ := s.Checks(tc.cfg, tc.ro); !slices.Equal(ids, again) {
							t.Fatalf("shard %s not deterministic: %v then %v", s, ids, again)
						}
					}
					got = append(got, ids...)
					f, empty, err := s.filter(tc.cfg, tc.ro)
					if err != nil || empty != (len(ids) == 0) {
						t.Fatalf("shard %s filter %q empty %v err %v", s, f, empty, err)
					}
					if !empty {
						ro := tc.ro
						ro.LabelFilter = f
						if runs[i-1], err = suites.Planned(tc.cfg, ro); err != nil {
							t.Fatal(err)
						}
					}
				}
				slices.Sort(got)
				w := slices.Clone(want)
				slices.Sort(w)
				if !slices.Equal(got, w) {
					t.Fatalf("%d shards hold %d checks %v, want the %d of the run", n, len(got), got, len(w))
				}
				sum := 0
				for _, r := range runs {
					sum += r
				}
				if sum != total {
					t.Errorf("%d shards plan %d check runs, the whole run %d", n, sum, total)
				}
				if n > 1 && slices.Max(runs)-slices.Min(runs) > heaviest {
					t.Errorf("%d shards unbalanced: %v check runs (the heaviest check plans %d)", n, runs, heaviest)
				}
			}
		})
	}
}

package clientsuite

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/clients/reliable"
	"github.com/mcp-conform/mcp-conform/internal/clauses"
	"github.com/mcp-conform/mcp-conform/reports"
)

// TestCatalogCitesItsClauses: every rule cites a clause — a spec sentence
// whose ids exist in docs/CLAUSES.md among the clauses that bind clients,
// in that version, at the level the sentence's word gives; or the seeds,
// labelled, with no id.
func TestCatalogCitesItsClauses(t *testing.T) {
	set, err := clauses.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(Catalog()) < 20 {
		t.Fatalf("%d checks", len(Catalog()))
	}
	for _, c := range Catalog() {
		if c.Title == "" || c.How == "" || len(c.Rules) == 0 || len(c.Transports) == 0 || c.judge == nil {
			t.Errorf("%s: incomplete", c.ID)
		}
		if c.Scenario != "" {
			if _, ok := LookupScenario(c.Scenario); !ok {
				t.Errorf("%s: unknown scenario %q", c.ID, c.Scenario)
			}
		}
		for v, r := range c.Rules {
			if !slices.Contains(Versions, v) {
				t.Errorf("%s: version %q", c.ID, v)
			}
			if r.Level != levelOf(r.Word) {
				t.Errorf("%s %s: level %s for the word %q", c.ID, v, r.Level, r.Word)
			}
			if r.Clause == "" || r.Spec == "" {
				t.Errorf("%s %s: no clause or page", c.ID, v)
			}
			if strings.Contains(r.Spec, "VERSION") {
				t.Errorf("%s %s: page %q", c.ID, v, r.Spec)
			}
			switch r.Source {
			case SourceSeed:
				if len(r.Clauses) > 0 || !strings.Contains(r.Clause, "seeds' reading") || !strings.HasPrefix(r.Spec, "seeds/") {
					t.Errorf("%s %s: a seed rule is labelled, cites the seed and no clause id: %+v", c.ID, v, r)
				}
			case SourceSpec:
				if len(r.Clauses) == 0 {
					t.Errorf("%s %s: a spec rule without a clause id", c.ID, v)
				}
				if !strings.HasPrefix(r.Spec, "specification/"+v+"/") {
					t.Errorf("%s %s: page %q is not of %s", c.ID, v, r.Spec, v)
				}
				word := ""
				for _, id := range r.Clauses {
					cl, ok := set.Lookup(id)
					switch {
					case !ok:
						t.Errorf("%s %s: %s is not in docs/CLAUSES.md", c.ID, v, id)
						continue
					case cl.Binds != clauses.Client:
						t.Errorf("%s %s: %s binds servers", c.ID, v, id)
					case !slices.Contains(cl.Versions, v):
						t.Errorf("%s %s: %s is not a clause of %s (%v)", c.ID, v, id, v, cl.Versions)
					}
					if word == "" {
						word = cl.Level
					}
				}
				if word != r.Word {
					t.Errorf("%s %s: word %q, the first clause %s says %q", c.ID, v, r.Word, r.Clauses[0], word)
				}
			default:
				t.Errorf("%s %s: source %q", c.ID, v, r.Source)
			}
			for _, tr := range r.Transports {
				if !slices.Contains(c.Transports, tr) {
					t.Errorf("%s %s: rule transport %s not among the check's", c.ID, v, tr)
				}
			}
		}
	}
}

// TestEveryCheckHasAMutant: each check is broken by a defect of the
// reliable client, and every defect names a check.
func TestEveryCheckHasAMutant(t *testing.T) {
	broken := map[string]bool{}
	for _, d := range reliable.Defects() {
		if _, ok := Lookup(d.Breaks); !ok {
			t.Errorf("defect %s breaks %q, not a CLIENT check", d.Name, d.Breaks)
		}
		broken[d.Breaks] = true
	}
	for _, c := range Catalog() {
		if !broken[c.ID] {
			t.Errorf("%s: no defect of the reliable client breaks it", c.ID)
		}
	}
}

// TestScenariosRun: every scenario applies somewhere, has its checks, and
// builds its parameters and rules for every run.
func TestScenariosRun(t *testing.T) {
	for _, sc := range Scenarios() {
		runs := 0
		for _, v := range Versions {
			for _, tr := range []string{Stdio, HTTP} {
				ok, why := sc.Applies(v, tr)
				if !ok {
					if why == "" {
						t.Errorf("%s %s %s: not applicable without a reason", sc.Name, v, tr)
					}
					continue
				}
				runs++
				p := sc.Params(v, tr, 1, 0)
				if p.Scenario != sc.Name || p.ProtocolVersion != v || p.Transport != tr || p.ClientID == "" || p.DeadlineMs <= 0 || p.Tool == "" {
					t.Errorf("%s %s %s: params %+v", sc.Name, v, tr, p)
				}
				rs := sc.Rules(v, tr, 1)
				for _, r := range rs {
					if r.Name == "" || r.Fault == nil {
						t.Errorf("%s: rule %+v", sc.Name, r)
					}
				}
			}
		}
		if runs == 0 {
			t.Errorf("%s runs nowhere", sc.Name)
		}
		if len(ScenarioChecks(sc.Name)) == 0 {
			t.Errorf("%s judges no check", sc.Name)
		}
	}
	if p := scHerd.Params(V20260728, HTTP, 1, 3); p.ClientID != "herd-3" || p.Arguments["tag"] != "herd-3" {
		t.Errorf("herd client 3: %+v", p)
	}
	if p := scRetryKeyed.Params(V20260728, HTTP, 1, 0); p.Arguments["operation_key"] == scRetryKeyed.Params(V20260728, HTTP, 1, 0).Arguments["operation_key"] {
		t.Error("a keyed scenario reuses its key across runs")
	}
	if got := scTimeoutCancel.Params(V20250618, Stdio, 2, 0).TimeoutMs; got != 600 {
		t.Errorf("scale 2: timeout %d ms", got)
	}
}

func TestStatus(t *testing.T) {
	for _, tc := range []struct {
		f     Finding
		level reports.Level
		want  reports.Status
	}{
		{Held, reports.Must, reports.Pass},
		{Broken, reports.Must, reports.Fail},
		{Broken, reports.Should, reports.Warn},
		{NotApplicable, reports.Must, reports.Skip},
		{Unjudgeable, reports.Should, reports.Error},
	} {
		if got := Status(tc.f, tc.level); got != tc.want {
			t.Errorf("Status(%v, %s) = %s, want %s", tc.f, tc.level, got, tc.want)
		}
	}
}

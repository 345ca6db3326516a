package clauses

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRealClauseMap parses the embedded docs/CLAUSES.md: every row parses
// (Parse fails otherwise), ids are unique and of a known prefix, every
// clause of a prefix with a page has that page in each of its versions.
func TestRealClauseMap(t *testing.T) {
	set, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if set.Commit != "b0f60ba5409db7a6582440a7b473cc0398890f15" {
		t.Errorf("commit %q", set.Commit)
	}
	// Count the table rows independently of the parser: every line that
	// starts with "| prefix#n |" is a clause.
	rows := 0
	for _, line := range strings.Split(string(mustRead(t)), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "|" && strings.Contains(f[1], "#") {
			rows++
		}
	}
	if len(set.Clauses) != rows || rows < 200 {
		t.Errorf("parsed %d clauses, the file has %d clause rows", len(set.Clauses), rows)
	}
	seen := map[string]bool{}
	sides := map[Side]int{}
	for _, c := range set.Clauses {
		if seen[c.ID] {
			t.Errorf("duplicate %s", c.ID)
		}
		seen[c.ID] = true
		sides[c.Binds]++
		if _, ok := set.Pages[c.Prefix]; !ok {
			t.Errorf("%s: unknown prefix", c.ID)
		}
		if len(c.Versions) == 0 {
			t.Errorf("%s: no versions", c.ID)
		}
		if c.Binds == Server && c.Status == "" {
			t.Errorf("%s: no status", c.ID)
		}
		for _, v := range c.Versions {
			if p, ok := set.Pages[c.Prefix].Paths[v]; ok && c.Pages[v] != p {
				t.Errorf("%s %s: page %q, want %q", c.ID, v, c.Pages[v], p)
			}
		}
		if got, ok := set.Lookup(c.ID); !ok || got.ID != c.ID {
			t.Errorf("Lookup(%s) = %v, %v", c.ID, got.ID, ok)
		}
	}
	if sides[Client] == 0 || sides[Server] == 0 {
		t.Errorf("sides %v", sides)
	}
	t.Logf("%d clauses (%d server, %d client), %d pages", len(set.Clauses), sides[Server], sides[Client], len(set.Pages))

	for _, tc := range []struct {
		id, level, versions string
		proposed            bool
		page2026            string
		status              string
		binds               Side
	}{
		{"basic#2", "MUST", "2025-06-18,2025-11-25", false, "", "covered", Server},
		{"basic#1", "MUST", "2025-06-18,2025-11-25,2026-07-28", false, "specification/2026-07-28/basic/index.mdx", "covered", Server},
		{"tr#29", "MUST", "2025-06-18,2025-11-25", false, "", "covered", Server},
		{"h#15", "MUST", "2026-07-28", false, "specification/2026-07-28/basic/transports/streamable-http.mdx", "covered", Server},
		{"log#5", "SHOULD", "2025-11-25", true, "", "covered", Server},
		{"log#7", "MUST NOT", "2026-07-28", false, "specification/2026-07-28/server/utilities/logging.mdx", "covered", Server},
		{"cl-h#5", "REQUIRED", "2026-07-28", false, "specification/2026-07-28/basic/transports/streamable-http.mdx", "", Client},
		{"cl-tr#3", "MUST", "2025-06-18,2025-11-25", false, "", "", Client},
	} {
		c, ok := set.Lookup(tc.id)
		if !ok {
			t.Errorf("%s missing", tc.id)
			continue
		}
		if c.Level != tc.level || strings.Join(c.Versions, ",") != tc.versions || c.Proposed != tc.proposed ||
			c.Pages["2026-07-28"] != tc.page2026 || c.Status != tc.status || c.Binds != tc.binds {
			t.Errorf("%s = level %q versions %v proposed %v page2026 %q status %q binds %s", tc.id, c.Level, c.Versions, c.Proposed, c.Pages["2026-07-28"], c.Status, c.Binds)
		}
	}
	if p := set.Pages["cl-tr"]; p.Paths["2025-11-25"] != "specification/2025-11-25/basic/transports.mdx" {
		t.Errorf("cl-tr page %v", p.Paths)
	}
	if p := set.Pages["st"]; p.Paths["2025-06-18"] != "" || p.Notes["2025-06-18"] != "(in `tr`)" {
		t.Errorf("st page %v %v", p.Paths, p.Notes)
	}
}

// loadReal loads the real clause map and not-testable list.
func loadReal(t *testing.T) (*Set, NotTestable) {
	t.Helper()
	set, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	nt, err := LoadNotTestable()
	if err != nil {
		t.Fatal(err)
	}
	return set, nt
}

func mustRead(t *testing.T) []byte {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "CLAUSES.md"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRealNotTestableList parses docs/clauses-not-testable.yaml and checks
// it against the clause map.
func TestRealNotTestableList(t *testing.T) {
	set, nt := loadReal(t)
	if len(nt) == 0 {
		t.Fatal("empty not-testable list")
	}
	for _, err := range Validate(set, nil, nt) {
		if !strings.Contains(err.Error(), "marked covered") {
			t.Error(err)
		}
	}
}

func TestParseErrors(t *testing.T) {
	head := "commit `b0f60ba5409db7a6582440a7b473cc0398890f15`\n\n| prefix | page | 2025-06-18 | 2025-11-25 | 2026-07-28 |\n|---|---|---|---|---|\n" +
		"| `basic` | base protocol | `specification/2025-06-18/basic/index.mdx` | `specification/2025-11-25/basic/index.mdx` | none |\n\n" +
		"### `basic` — Base protocol\n\n| id | level | versions | clause | status | covered by |\n|---|---|---|---|---|---|\n"
	ok := head + "| basic#1 | MUST | all | All messages MUST follow JSON-RPC | partial | X-Y |\n"
	set, err := Parse([]byte(ok))
	if err != nil {
		t.Fatalf("valid map: %v", err)
	}
	c, _ := set.Lookup("basic#1")
	if len(c.Pages) != 2 || c.Pages["2026-07-28"] != "" {
		t.Errorf("pages %v: the 2026 cell names no page", c.Pages)
	}
	for _, tc := range []struct{ name, row, want string }{
		{"duplicate", "| basic#1 | MUST | all | a | none | none |\n| basic#1 | MUST | all | b | none | none |\n", "duplicate id basic#1"},
		{"bad id", "| basic-1 | MUST | all | a | none | none |\n", "not prefix#n"},
		{"bad level", "| basic#1 | OUGHT | all | a | none | none |\n", "not an RFC 2119"},
		{"bad versions", "| basic#1 | MUST | 2024 | a | none | none |\n", "unknown version code"},
		{"pipe in text", "| basic#1 | MUST | all | a | b | none | none |\n", "cells"},
		{"wrong table", "| tr#1 | MUST | all | a | none | none |\n", "table of `basic`"},
		{"no status", "| basic#1 | MUST | all | a |  | none |\n", "no status"},
	} {
		_, err := Parse([]byte(head + tc.row))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.want)
		}
	}
	unknown := ok + "\n### `zz` — Unknown\n\n| id | level | versions | clause | status | covered by |\n|---|---|---|---|---|---|\n| zz#1 | MUST | all | a | none | none |\n"
	if _, err := Parse([]byte(unknown)); err == nil || !strings.Contains(err.Error(), "not in the prefix table") {
		t.Errorf("unknown prefix: %v", err)
	}
}

func TestParseNotTestable(t *testing.T) {
	nt, err := ParseNotTestable([]byte("- id: tr#7\n  reason: no bound\n"))
	if err != nil || nt["tr#7"] != "no bound" {
		t.Errorf("got %v, %v", nt, err)
	}
	for _, bad := range []string{"- id: tr#7\n", "- reason: x\n", "- id: a#1\n  reason: x\n- id: a#1\n  reason: y\n", "id: x"} {
		if _, err := ParseNotTestable([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// fakeMap is a small clause map in the layout of CLAUSES.md.
const fakeMap = "Quotes from commit `b0f60ba5409db7a6582440a7b473cc0398890f15`.\n\n" +
	"## Prefixes and pages\n\n| prefix | page | 2025-06-18 | 2025-11-25 | 2026-07-28 |\n|---|---|---|---|---|\n" +
	"| `tr` | transports | `specification/2025-06-18/basic/transports.mdx` | `specification/2025-11-25/basic/transports.mdx` | none (split) |\n" +
	"| `h` | Streamable HTTP | (in `tr`) | (in `tr`) | `specification/2026-07-28/basic/transports/streamable-http.mdx` |\n\n" +
	"## Server clauses\n\n### `tr` — Transports\n\nPage: ...\n\n| id | level | versions | clause | status | covered by |\n|---|---|---|---|---|---|\n" +
	"| tr#1 | MUST | 618,1125 | validate Origin | covered | SECURITY-ORIGIN |\n" +
	"| tr#2 | SHOULD | 618,1125 | proper authentication | none | none |\n" +
	"| tr#3 | MUST | 618,1125 | 404 on terminated session | partial | SESSION-EXPIRED-404 |\n" +
	"| tr#4 | MUST | 1125 | 403 on bad Origin | none | none |\n" +
	"| tr#5 | SHOULD | 1125 (proposed) | proposed text | none | none |\n\n" +
	"### `h` — Streamable HTTP\n\n| id | level | versions | clause | status | covered by |\n|---|---|---|---|---|---|\n" +
	"| h#1 | MUST | 2026 | validate Origin | covered | SECURITY-ORIGIN |\n" +
	"| h#2 | SHOULD | 2026 | 405 on GET | none | none |\n\n" +
	"## Clauses that bind clients\n\n### `cl-tr` — Transports\n\n| id | level | versions | clause |\n|---|---|---|---|\n" +
	"| cl-tr#1 | MUST | 618,1125 | Accept header |\n"

var fakeCatalog = []Check{
	{ID: "SECURITY-ORIGIN", Clauses: []string{"tr#1", "h#1", "tr#4"}, Limits: map[string]string{"tr#4": "POST only"},
		Versions: []string{"2025-06-18", "2025-11-25", "2026-07-28"}, Mutants: []string{"no-origin-check"}},
	{ID: "SESSION-EXPIRED-404", Clauses: []string{"tr#3"}, Versions: []string{"2025-11-25"}, Mutants: []string{"session-no-expiry"}},
	{ID: "SESSION-OLD", Clauses: []string{"tr#3"}, Versions: []string{"2025-06-18"}},
}

func TestComputeFake(t *testing.T) {
	set, err := Parse([]byte(fakeMap))
	if err != nil {
		t.Fatal(err)
	}
	nt := NotTestable{"tr#2": "no bound"}
	r := Compute(set, fakeCatalog, nt)
	want := map[string]struct {
		status    string
		byVersion map[string]string
		checks    string
		mutants   string
	}{
		"tr#1":    {Covered, map[string]string{"2025-06-18": Covered, "2025-11-25": Covered}, "SECURITY-ORIGIN", "no-origin-check"},
		"tr#2":    {"not testable: no bound", map[string]string{"2025-06-18": "not testable: no bound", "2025-11-25": "not testable: no bound"}, "", ""},
		"tr#3":    {Partial, map[string]string{"2025-06-18": Partial, "2025-11-25": Covered}, "SESSION-EXPIRED-404,SESSION-OLD", "session-no-expiry"},
		"tr#4":    {Partial, map[string]string{"2025-11-25": Partial}, "SECURITY-ORIGIN", "no-origin-check"},
		"tr#5":    {None, map[string]string{"2025-11-25": None}, "", ""},
		"h#1":     {Covered, map[string]string{"2026-07-28": Covered}, "SECURITY-ORIGIN", "no-origin-check"},
		"h#2":     {None, map[string]string{"2026-07-28": None}, "", ""},
		"cl-tr#1": {None, map[string]string{"2025-06-18": None, "2025-11-25": None}, "", ""},
	}
	if len(r.Clauses) != len(want) {
		t.Fatalf("%d clauses, want %d", len(r.Clauses), len(want))
	}
	for _, cc := range r.Clauses {
		w := want[cc.ID]
		if cc.Status != w.status || strings.Join(cc.Checks, ",") != w.checks || strings.Join(cc.Mutants, ",") != w.mutants {
			t.Errorf("%s: status %q checks %v mutants %v, want %q %q %q", cc.ID, cc.Status, cc.Checks, cc.Mutants, w.status, w.checks, w.mutants)
		}
		if len(cc.ByVersion) != len(w.byVersion) {
			t.Errorf("%s: by version %v, want %v", cc.ID, cc.ByVersion, w.byVersion)
		}
		for v, s := range w.byVersion {
			if cc.ByVersion[v] != s {
				t.Errorf("%s %s: %q, want %q", cc.ID, v, cc.ByVersion[v], s)
			}
		}
	}
	tr4 := r.Clauses[3]
	if !slices.Equal(tr4.Limits, []string{"SECURITY-ORIGIN (POST only)"}) {
		t.Errorf("tr#4 limits %v", tr4.Limits)
	}
	// Server, 2025-11-25: tr#1 covered, tr#2 not testable, tr#3 covered,
	// tr#4 partial, tr#5 proposed → 3 testable, 2 covered.
	c := r.Summary.Versions[Server]["2025-11-25"]
	if c.Clauses != 5 || c.Testable != 3 || c.Covered != 2 || c.Partial != 1 || c.NotTestable != 1 || c.Proposed != 1 || c.CoveredPct != 66.7 {
		t.Errorf("server 2025-11-25 counts %+v", *c)
	}
	c = r.Summary.Versions[Server]["2025-06-18"]
	if c.Testable != 2 || c.Covered != 1 || c.Partial != 1 || c.CoveredPct != 50 {
		t.Errorf("server 2025-06-18 counts %+v", *c)
	}
	c = r.Summary.Versions[Server]["2026-07-28"]
	if c.Testable != 2 || c.Covered != 1 || c.None != 1 || c.CoveredPct != 50 {
		t.Errorf("server 2026-07-28 counts %+v", *c)
	}
	if c := r.Summary.Versions[Client]["2025-06-18"]; c.Clauses != 1 || c.None != 1 || c.CoveredPct != 0 {
		t.Errorf("client counts %+v", *c)
	}
	if r.Summary.ByStatus[Covered] != 2 || r.Summary.ByStatus[Partial] != 2 || r.Summary.ByStatus["not testable"] != 1 || r.Summary.ByStatus["proposed"] != 1 || r.Summary.ByStatus[None] != 2 {
		t.Errorf("by status %v", r.Summary.ByStatus)
	}
	if !slices.Equal(r.Summary.Unproven, []string{"SESSION-OLD"}) {
		t.Errorf("unproven %v", r.Summary.Unproven)
	}
	var pages []string
	for _, p := range r.Summary.Pages {
		pages = append(pages, p.Page+"@"+p.Version)
	}
	if got := strings.Join(pages, " "); got != "tr@2025-06-18 tr@2025-11-25 h@2026-07-28 cl-tr@2025-06-18 cl-tr@2025-11-25" {
		t.Errorf("pages %s", got)
	}

	f := r.Filter("h")
	if len(f.Clauses) != 2 || f.Summary.Versions[Server]["2026-07-28"].Covered != 1 || len(f.Summary.Versions[Server]) != 1 {
		t.Errorf("filter h: %d clauses, %v", len(f.Clauses), f.Summary.Versions[Server])
	}
}

func TestJSONShape(t *testing.T) {
	set, err := Parse([]byte(fakeMap))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Compute(set, fakeCatalog, NotTestable{"tr#2": "no bound"}).WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Clauses []map[string]any `json:"clauses"`
		Summary map[string]any   `json:"summary"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"id", "level", "versions", "status", "checks", "mutants"} {
		if _, ok := doc.Clauses[0][key]; !ok {
			t.Errorf("clause has no %q: %v", key, doc.Clauses[0])
		}
	}
	if doc.Clauses[1]["status"] != "not testable: no bound" {
		t.Errorf("tr#2 status %v", doc.Clauses[1]["status"])
	}
	if cs, ok := doc.Clauses[4]["checks"].([]any); !ok || len(cs) != 0 {
		t.Errorf("a clause with no check lists checks as [], got %v", doc.Clauses[4]["checks"])
	}
	for _, key := range []string{"clauses", "byStatus", "versions", "pages"} {
		if _, ok := doc.Summary[key]; !ok {
			t.Errorf("summary has no %q", key)
		}
	}
}

func TestWriteTextFake(t *testing.T) {
	set, err := Parse([]byte(fakeMap))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Compute(set, fakeCatalog, NotTestable{"tr#2": "no bound"}).WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	got := buf.String()
	golden := filepath.Join("testdata", "coverage.txt")
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("text table differs from %s (UPDATE_GOLDEN=1 to refresh):\n%s", golden, got)
	}
}

func TestValidateFake(t *testing.T) {
	set, err := Parse([]byte(fakeMap))
	if err != nil {
		t.Fatal(err)
	}
	if errs := Validate(set, fakeCatalog, NotTestable{"tr#2": "no bound"}); len(errs) != 0 {
		t.Errorf("valid catalog: %v", errs)
	}
	bad := []Check{
		{ID: "SECURITY-ORIGIN", Clauses: []string{"tr#1", "tr#99"}, Versions: []string{"2025-11-25"}, Mutants: []string{"m"},
			Limits: map[string]string{"h#2": "x"}},
		{ID: "AUTH", Clauses: []string{"tr#2"}, Versions: []string{"2025-11-25"}},
		{ID: "HTTP-2026", Clauses: []string{"tr#3"}, Versions: []string{"2026-07-28"}, Mutants: []string{"m2"}},
	}
	errs := Validate(set, bad, NotTestable{"tr#2": "no bound", "zz#1": "x"})
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	for _, want := range []string{
		"check SECURITY-ORIGIN cites tr#99, which CLAUSES.md lacks",
		"check SECURITY-ORIGIN limits h#2, which it does not declare",
		"check HTTP-2026 declares tr#3 but runs in none of its versions (618,1125)",
		"h#1 is marked covered in CLAUSES.md (by SECURITY-ORIGIN) but no check with a mutant declares it",
		"clauses-not-testable.yaml lists zz#1, which CLAUSES.md lacks",
		"tr#2 is listed as not testable, yet AUTH declare(s) it",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("missing error %q in:\n%s", want, strings.Join(got, "\n"))
		}
	}
	if len(got) != 6 {
		t.Errorf("%d errors, want 6:\n%s", len(got), strings.Join(got, "\n"))
	}
}

// TestRealCoverageWithoutCatalog computes the coverage of the real map by
// an empty catalog: every testable clause is none, the not-testable ones
// carry their reason, and the text and JSON writers handle the whole map.
func TestRealCoverageWithoutCatalog(t *testing.T) {
	set, nt := loadReal(t)
	r := Compute(set, nil, nt)
	for _, cc := range r.Clauses {
		_, untestable := nt[cc.ID]
		if untestable != IsNotTestable(cc.Status) || (!untestable && cc.Status != None) {
			t.Errorf("%s: %q", cc.ID, cc.Status)
		}
	}
	var text, js bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"basic#1", "cl-ver#2", "sec#12"} {
		if !strings.Contains(text.String(), id) {
			t.Errorf("text has no %s", id)
		}
	}
	t.Logf("text %d bytes, JSON %d bytes", text.Len(), js.Len())
}

// TestSharedIDsKept checks, when ../shared/CLAUSES.md is beside the
// repository, that the vendored copy keeps every one of its ids with the
// same level and versions (the copy may add ids, never drop or renumber).
func TestSharedIDsKept(t *testing.T) {
	var shared string
	dir, _ := os.Getwd()
	for d := dir; filepath.Dir(d) != d; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "shared", "CLAUSES.md")); err == nil {
			shared = filepath.Join(d, "shared", "CLAUSES.md")
			break
		}
	}
	if shared == "" {
		t.Skip("no shared/CLAUSES.md beside the repository")
	}
	raw, err := os.ReadFile(shared)
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := Parse(raw)
	if err != nil {
		t.Fatalf("%s: %v", shared, err)
	}
	ours, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range theirs.Clauses {
		o, ok := ours.Lookup(c.ID)
		if !ok {
			t.Errorf("%s (%s) is in %s but not in docs/CLAUSES.md", c.ID, c.Text, shared)
			continue
		}
		if o.Level != c.Level || o.VersionsText != c.VersionsText {
			t.Errorf("%s: level %q versions %q here, %q %q in %s", c.ID, o.Level, o.VersionsText, c.Level, c.VersionsText, shared)
		}
	}
}

// TestRewriteDrifts: Rewrite sets the last two cells of a drifted row and
// leaves every other line as it was, pipes of the clause text included.
func TestRewriteDrifts(t *testing.T) {
	md := "| id | level | versions | clause | status | covered by |\n" +
		"|---|---|---|---|---|---|\n" +
		"| a#1 | MUST | all | one | none | none |\n" +
		"| a#2 | MUST | all | two `x | y` | none | none |\n" +
		"| a#3 | SHOULD | all | three | covered | C-3 |\n"
	got := string(Rewrite([]byte(md), []Drift{
		{ID: "a#1", Computed: Covered, CoveredBy: "C-1 (POST only)"},
		{ID: "a#2", Computed: Partial, CoveredBy: "C-2"},
	}))
	want := "| id | level | versions | clause | status | covered by |\n" +
		"|---|---|---|---|---|---|\n" +
		"| a#1 | MUST | all | one | covered | C-1 (POST only) |\n" +
		"| a#2 | MUST | all | two `x | y` | partial | C-2 |\n" +
		"| a#3 | SHOULD | all | three | covered | C-3 |\n"
	if got != want {
		t.Errorf("Rewrite:\n%s\nwant:\n%s", got, want)
	}
}

package suites

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/reports"
)

// TestCatalogLevelsHaveASource holds every rule of the catalog to the
// check author's rule (docs/CHECKS.md): a level is the word of its
// sentence, and only a sentence of the specification or a contract the
// target declares may FAIL a server.
func TestCatalogLevelsHaveASource(t *testing.T) {
	for _, c := range Catalog() {
		if len(c.AllRules()) == 0 {
			t.Errorf("%s: runs nowhere", c.ID)
		}
		for _, tr := range c.AllRules() {
			where := c.ID + " [" + tr.Transport + " " + tr.Version + "]"
			src := tr.SourceOf()
			switch src {
			case reports.SourceSpec, reports.SourceManifest, reports.SourceReading:
			default:
				t.Errorf("%s: unknown source %q", where, src)
			}
			switch tr.Level {
			case reports.Must:
				if src == reports.SourceReading {
					t.Errorf("%s: a MUST from mcp-conform's own reading: only a spec MUST or a declared contract may FAIL", where)
				}
			case reports.Should:
			default:
				t.Errorf("%s: level %q", where, tr.Level)
			}
			if tr.Spec == "" || tr.Clause == "" {
				t.Errorf("%s: no spec page or clause", where)
			}
			for _, p := range tr.Pages() {
				if strings.Contains(p, "VERSION") {
					t.Errorf("%s: unexpanded page %s", where, p)
				}
				if v := pageVersion(p); v != "" && v != tr.Version && src == reports.SourceSpec && p == tr.Spec && !(laterPageChecks[c.ID] != "" && v > tr.Version) {
					t.Errorf("%s: cites %s, a page of another version", where, p)
				}
			}
			if src != reports.SourceSpec {
				continue
			}
			kw := map[reports.Level]string{reports.Must: "MUST", reports.Should: "SHOULD"}[tr.Level]
			if !strings.Contains(tr.Clause, kw) {
				t.Errorf("%s: level %s, but its clause has no %s: %q", where, tr.Level, kw, tr.Clause)
			}
			if tr.Transport == "websocket" && (tr.Spec == stdioModern || strings.HasSuffix(tr.Spec, "/transports.mdx") && strings.Contains(tr.Clause, "stdio")) {
				t.Errorf("%s: a WebSocket rule cites the stdio page as its own (%s)", where, tr.Spec)
			}
		}
	}
}

// TestCatalogQuotesTheSpec: every fragment of a spec clause that carries an
// RFC 2119 keyword is, word for word, on one of the pages the rule cites.
// The pages are the copies in ../shared/spec (MCP_CONFORM_SPEC_DIR names
// another directory); without them the test is skipped.
// laterPageChecks are the checks that judge, in a run of an older version,
// a sentence of a later version's page that binds a server supporting that
// later version too, with the reason the older run is where they can judge
// it.
var laterPageChecks = map[string]string{
	// A 2026-07-28 run is negotiated with server/discover: a server without
	// it is only reachable in a 2025 run, where its own
	// UnsupportedProtocolVersionError says it supports 2026-07-28.
	"VERSION-DISCOVER": "2026-07-28 runs are negotiated with server/discover",
}

func TestCatalogQuotesTheSpec(t *testing.T) {
	dir := specDir()
	if dir == "" {
		t.Skip("no copy of the specification pages (set MCP_CONFORM_SPEC_DIR to the spec/ directory of the shared notes)")
	}
	pages := map[string]string{}
	page := func(p string) string {
		if s, ok := pages[p]; ok {
			return s
		}
		b, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil {
			t.Errorf("cited page %s: %v", p, err)
		}
		pages[p] = normalizeSpecText(string(b))
		return pages[p]
	}
	for _, c := range Catalog() {
		for _, tr := range c.AllRules() {
			if tr.SourceOf() != reports.SourceSpec {
				continue
			}
			where := c.ID + " [" + tr.Transport + " " + tr.Version + "]"
			var texts []string
			for _, p := range tr.Pages() {
				texts = append(texts, page(p))
			}
			for _, f := range keywordFragments(tr.Clause) {
				found := false
				for _, text := range texts {
					found = found || strings.Contains(text, f)
				}
				if !found {
					t.Errorf("%s: %q is on none of %s", where, f, strings.Join(tr.Pages(), ", "))
				}
			}
		}
	}
}

var (
	mdLink     = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	mdRefLink  = regexp.MustCompile(`\[([^\]]*)\]\[[^\]]*\]`)
	listMarker = regexp.MustCompile(`(?m)^\s*(?:[-*]|\d+\.)\s+`)
	spaces     = regexp.MustCompile(`\s+`)
	keyword    = regexp.MustCompile(`\b(MUST|SHOULD|REQUIRED|SHALL)\b`)
	// bracketed context and elisions split a clause into quoted parts.
	clauseCut = regexp.MustCompile(`\[[^\]]*\]|\([^)]*\)|[;—"“”]|: |\. `)
)

// normalizeSpecText drops the markup of a page so that its sentences can
// be matched: links keep their text, emphasis and code marks go, list
// markers go, whitespace collapses, case folds.
func normalizeSpecText(s string) string {
	s = mdLink.ReplaceAllString(s, "$1")
	s = mdRefLink.ReplaceAllString(s, "$1")
	s = listMarker.ReplaceAllString(s, " ")
	s = strings.NewReplacer("**", "", "`", "", "_", "", "\\", "", "\"", "", "“", "", "”", "").Replace(s)
	return strings.ToLower(spaces.ReplaceAllString(s, " "))
}

// keywordFragments returns the parts of a clause that quote a sentence
// with an RFC 2119 keyword: the clause cut at brackets, parentheses,
// semicolons, dashes and quotes, each part trimmed and normalised.
func keywordFragments(clause string) []string {
	var out []string
	for _, part := range clauseCut.Split(clause, -1) {
		if !keyword.MatchString(part) {
			continue
		}
		f := strings.Trim(strings.TrimSpace(part), ".,:;")
		if len(strings.Fields(f)) < 3 {
			continue
		}
		out = append(out, normalizeSpecText(f))
	}
	return out
}

// pageVersion is the protocol version in a spec page's path, or "".
func pageVersion(p string) string {
	for _, v := range allVersions {
		if strings.Contains(p, "/"+v+"/") {
			return v
		}
	}
	return ""
}

// specDir finds the shared copy of the specification pages.
func specDir() string {
	if d := os.Getenv("MCP_CONFORM_SPEC_DIR"); d != "" {
		return d
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	for d := wd; ; d = filepath.Dir(d) {
		cand := filepath.Join(d, "shared", "spec")
		if _, err := os.Stat(filepath.Join(cand, "README.md")); err == nil {
			return cand
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// Package clauses reads the clause map, docs/CLAUSES.md (every normative
// sentence of the MCP specification that binds a server or a client and that
// a black box can observe, each with a stable id such as "tr#29"), and
// computes which of them the check catalog covers: per clause and version,
// covered (a check declares the clause and a mutant proves that check can
// fail), partial, not testable (with the reason given in
// docs/clauses-not-testable.yaml), or none.
package clauses

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/mcp-conform/mcp-conform/docs"
	"go.yaml.in/yaml/v3"
)

// Protocol versions, oldest first, as the clause tables abbreviate them.
var versionCodes = []struct{ code, version string }{
	{"618", "2025-06-18"},
	{"1125", "2025-11-25"},
	{"2026", "2026-07-28"},
}

// Versions are the protocol versions clauses apply to, oldest first.
func Versions() []string {
	out := make([]string, len(versionCodes))
	for i, vc := range versionCodes {
		out[i] = vc.version
	}
	return out
}

// Side says whom a clause binds.
type Side string

// The sides.
const (
	Server Side = "server"
	Client Side = "client"
)

// Clause is one row of a clause table.
type Clause struct {
	// ID is "prefix#n", stable.
	ID string
	// Prefix is the part before '#' ("basic", "cl-tr"); Number the part
	// after it.
	Prefix string
	Number int
	// Level is the RFC 2119 keyword as written ("MUST NOT", "REQUIRED").
	Level string
	// Versions are the protocol versions the clause applies to, oldest
	// first; VersionsText is the cell as written ("618,1125", "all").
	Versions     []string
	VersionsText string
	// Proposed marks text that is in no page at the pinned commit
	// ("(proposed)"): no check should fail a server on it.
	Proposed bool
	// Text is the short quote of the clause column.
	Text string
	// Pages are the specification pages the clause comes from, by version
	// (only versions with a page in the prefix table).
	Pages map[string]string
	// Status and CoveredBy are the status and covered-by columns as
	// written (server tables only; the client tables have none).
	Status    string
	CoveredBy string
	// Binds is whom the clause binds: Server, or Client for the cl-*
	// tables.
	Binds Side
	// Section is the heading of the clause's table ("Base protocol").
	Section string
}

// Page is one row of the prefix table.
type Page struct {
	// Prefix is the clause prefix ("basic"); for a client prefix ("cl-tr")
	// the page is that of the server prefix it extends.
	Prefix string
	// Title is the page column ("base protocol").
	Title string
	// Paths are the page's path per version (relative to spec/); a version
	// whose cell names no path ("none (removed)", "(in `tr`)") is absent,
	// its cell kept in Notes.
	Paths map[string]string
	Notes map[string]string
}

// Set is the parsed clause map.
type Set struct {
	// Commit is the specification commit the quotes come from.
	Commit string
	// Clauses in document order.
	Clauses []Clause
	// Pages by prefix, client prefixes included; Prefixes in document
	// order (server prefixes of the prefix table, then the client ones).
	Pages    map[string]Page
	Prefixes []string

	byID map[string]int
}

// Lookup returns the clause with an id.
func (s *Set) Lookup(id string) (Clause, bool) {
	i, ok := s.byID[id]
	if !ok {
		return Clause{}, false
	}
	return s.Clauses[i], true
}

// Load parses the embedded docs/CLAUSES.md.
func Load() (*Set, error) { return Parse(docs.Clauses) }

var (
	commitRe  = regexp.MustCompile("commit\\s+`([0-9a-f]{40})`")
	headingRe = regexp.MustCompile("^### `([a-z0-9-]+)` — (.+)$")
	idRe      = regexp.MustCompile(`^([a-z][a-z0-9-]*)#([1-9][0-9]*)$`)
	pathRe    = regexp.MustCompile("`([^`]+/[^`]+)`")
	levels    = []string{"MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "REQUIRED", "SHALL", "SHALL NOT", "RECOMMENDED", "MAY", "OPTIONAL"}
)

// Parse reads a clause map in the layout of CLAUSES.md: a header naming the
// specification commit, the prefix table (prefix, page, one column per
// version), and one table per prefix under a "### `prefix` — title"
// heading, with the columns id, level, versions, clause[, status, covered
// by]. It fails on a row it cannot read, a duplicate id, or an id whose
// prefix the prefix table lacks.
func Parse(md []byte) (*Set, error) {
	s := &Set{Pages: map[string]Page{}, byID: map[string]int{}}
	if m := commitRe.FindSubmatch(md); m != nil {
		s.Commit = string(m[1])
	}
	sc := bufio.NewScanner(bytes.NewReader(md))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var (
		lineNo   int
		section  string
		secPref  string
		header   []string // columns of the current table
		inPrefix bool     // in the prefix table
		side     = Server
	)
	for sc.Scan() {
		lineNo++
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "## "):
			if strings.Contains(line, "bind clients") {
				side = Client
			}
			header, inPrefix = nil, false
			continue
		case strings.HasPrefix(line, "### "):
			m := headingRe.FindStringSubmatch(line)
			if m == nil {
				return nil, fmt.Errorf("CLAUSES.md:%d: heading %q is not \"### `prefix` — title\"", lineNo, line)
			}
			secPref, section, header, inPrefix = m[1], m[2], nil, false
			continue
		case !strings.HasPrefix(line, "|"):
			if line != "" {
				header = nil
			}
			continue
		}
		cells := splitRow(line)
		if isRule(cells) {
			continue
		}
		if header == nil {
			header = lower(cells)
			inPrefix = len(header) > 0 && header[0] == "prefix"
			continue
		}
		if inPrefix {
			if err := s.addPage(cells, header); err != nil {
				return nil, fmt.Errorf("CLAUSES.md:%d: %w", lineNo, err)
			}
			continue
		}
		if len(header) == 0 || header[0] != "id" {
			continue
		}
		c, err := readClause(cells, header, side)
		if err != nil {
			return nil, fmt.Errorf("CLAUSES.md:%d: %w", lineNo, err)
		}
		if c.Prefix != secPref {
			return nil, fmt.Errorf("CLAUSES.md:%d: %s is in the table of `%s`", lineNo, c.ID, secPref)
		}
		c.Section = section
		if _, dup := s.byID[c.ID]; dup {
			return nil, fmt.Errorf("CLAUSES.md:%d: duplicate id %s", lineNo, c.ID)
		}
		s.byID[c.ID] = len(s.Clauses)
		s.Clauses = append(s.Clauses, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("CLAUSES.md: %w", err)
	}
	if len(s.Pages) == 0 {
		return nil, fmt.Errorf("CLAUSES.md: no prefix table")
	}
	for i := range s.Clauses {
		c := &s.Clauses[i]
		page, ok := s.Pages[c.Prefix]
		if !ok {
			server := strings.TrimPrefix(c.Prefix, "cl-")
			sp, known := s.Pages[server]
			if c.Binds != Client || !known {
				return nil, fmt.Errorf("CLAUSES.md: %s: prefix %q is not in the prefix table", c.ID, c.Prefix)
			}
			page = Page{Prefix: c.Prefix, Title: sp.Title + " (client)", Paths: sp.Paths, Notes: sp.Notes}
			s.Pages[c.Prefix] = page
			s.Prefixes = append(s.Prefixes, c.Prefix)
		}
		c.Pages = map[string]string{}
		for _, v := range c.Versions {
			if p, ok := page.Paths[v]; ok {
				c.Pages[v] = p
			}
		}
	}
	return s, nil
}

func (s *Set) addPage(cells, header []string) error {
	if len(cells) != len(header) {
		return fmt.Errorf("prefix row has %d cells, the header %d", len(cells), len(header))
	}
	p := Page{Prefix: strings.Trim(cells[0], "`"), Title: cells[1], Paths: map[string]string{}, Notes: map[string]string{}}
	if !regexp.MustCompile(`^[a-z0-9]+$`).MatchString(p.Prefix) {
		return fmt.Errorf("prefix %q", cells[0])
	}
	for i := 2; i < len(cells); i++ {
		version := header[i]
		if !slices.Contains(Versions(), version) {
			return fmt.Errorf("prefix table column %q is not a protocol version", version)
		}
		if m := pathRe.FindStringSubmatch(cells[i]); m != nil {
			p.Paths[version] = m[1]
		} else {
			p.Notes[version] = cells[i]
		}
	}
	if _, dup := s.Pages[p.Prefix]; dup {
		return fmt.Errorf("prefix %s listed twice", p.Prefix)
	}
	s.Pages[p.Prefix] = p
	s.Prefixes = append(s.Prefixes, p.Prefix)
	return nil
}

func readClause(cells, header []string, side Side) (Clause, error) {
	if len(cells) != len(header) {
		return Clause{}, fmt.Errorf("row has %d cells, the header %d (a '|' in the text?)", len(cells), len(header))
	}
	col := func(name string) string {
		if i := slices.Index(header, name); i >= 0 {
			return cells[i]
		}
		return ""
	}
	c := Clause{ID: cells[0], Level: col("level"), Text: col("clause"), Status: col("status"), CoveredBy: col("covered by"), Binds: side}
	m := idRe.FindStringSubmatch(c.ID)
	if m == nil {
		return c, fmt.Errorf("id %q is not prefix#n", c.ID)
	}
	c.Prefix = m[1]
	c.Number, _ = strconv.Atoi(m[2])
	if (side == Client) != strings.HasPrefix(c.Prefix, "cl-") {
		return c, fmt.Errorf("%s: client clauses, and only they, have a cl- prefix", c.ID)
	}
	if !slices.Contains(levels, c.Level) {
		return c, fmt.Errorf("%s: level %q is not an RFC 2119 keyword", c.ID, c.Level)
	}
	var err error
	c.VersionsText = col("versions")
	if c.Versions, c.Proposed, err = expandVersions(c.VersionsText); err != nil {
		return c, fmt.Errorf("%s: %w", c.ID, err)
	}
	if c.Text == "" {
		return c, fmt.Errorf("%s: no clause text", c.ID)
	}
	if side == Server && c.Status == "" {
		return c, fmt.Errorf("%s: no status", c.ID)
	}
	return c, nil
}

// expandVersions reads a versions cell: "all", or comma-separated codes
// (618, 1125, 2026), optionally followed by "(proposed)".
func expandVersions(cell string) (versions []string, proposed bool, err error) {
	cell = strings.TrimSpace(cell)
	if rest, ok := strings.CutSuffix(cell, "(proposed)"); ok {
		proposed, cell = true, strings.TrimSpace(rest)
	}
	if cell == "all" {
		return Versions(), proposed, nil
	}
	seen := map[string]bool{}
	for _, code := range strings.Split(cell, ",") {
		code = strings.TrimSpace(code)
		found := false
		for _, vc := range versionCodes {
			if vc.code == code {
				seen[vc.version], found = true, true
			}
		}
		if !found {
			return nil, false, fmt.Errorf("versions %q: unknown version code %q", cell, code)
		}
	}
	for _, v := range Versions() {
		if seen[v] {
			versions = append(versions, v)
		}
	}
	return versions, proposed, nil
}

func splitRow(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	line = strings.TrimSuffix(line, "|")
	parts := strings.Split(line, "|")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

func isRule(cells []string) bool {
	for _, c := range cells {
		if strings.Trim(c, "-: ") != "" {
			return false
		}
	}
	return true
}

func lower(cells []string) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = strings.ToLower(c)
	}
	return out
}

// NotTestable maps a clause id to the reason a black-box harness cannot
// test it.
type NotTestable map[string]string

// LoadNotTestable parses the embedded docs/clauses-not-testable.yaml.
func LoadNotTestable() (NotTestable, error) { return ParseNotTestable(docs.NotTestable) }

// ParseNotTestable reads a YAML list of {id, reason}; every entry needs
// both, and an id appears once.
func ParseNotTestable(raw []byte) (NotTestable, error) {
	var entries []struct {
		ID     string `yaml:"id"`
		Reason string `yaml:"reason"`
	}
	if err := yaml.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf("clauses-not-testable.yaml: %w", err)
	}
	out := NotTestable{}
	for i, e := range entries {
		if e.ID == "" || strings.TrimSpace(e.Reason) == "" {
			return nil, fmt.Errorf("clauses-not-testable.yaml: entry %d needs an id and a reason", i+1)
		}
		if _, dup := out[e.ID]; dup {
			return nil, fmt.Errorf("clauses-not-testable.yaml: %s listed twice", e.ID)
		}
		out[e.ID] = strings.TrimSpace(e.Reason)
	}
	return out, nil
}

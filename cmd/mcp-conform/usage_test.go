package main

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/clientsuite"
	"github.com/mcp-conform/mcp-conform/fixtures"
	"github.com/mcp-conform/mcp-conform/suites"
)

// runPlain runs the binary without the --json that runCLI adds (the other
// subcommands have no such flag) and bounds it by limit.
func runPlain(t *testing.T, limit time.Duration, args ...string) result {
	t.Helper()
	return mustRunBin(t, binary, limit, nil, args...)
}

// TestStdioQuotedArguments: --stdio splits its command line by the shell's
// quoting rules, so a quoted argument with spaces reaches the server as one
// argument (here sh -c 'exec BINARY fixture', which strings.Fields broke).
func TestStdioQuotedArguments(t *testing.T) {
	limitParallel(t)
	line := "sh -c 'exec \"$0\" fixture' " + fastBinary
	r := runCLI(t, 60*time.Second, "run", "-q", "--stdio", line, "--focus", "^LIFECYCLE-PING-EMPTY$", "--spec", "2025-11-25")
	if r.code != 0 || r.report == nil || len(r.report.Checks) != 1 || r.report.Checks[0].Status != "PASS" {
		t.Fatalf("--stdio %q: exit %d\n%s%s", line, r.code, r.stdout, r.stderr)
	}
}

// TestUsageErrors: a bad command line exits 2 at once, says why on stderr,
// starts nothing and writes no report.
func TestUsageErrors(t *testing.T) {
	manifest := testdataFile(t, "hostile-crash.yaml")
	cases := []struct {
		name string
		args []string
		want string // on stderr
	}{
		{"two-targets", []string{"run", "--stdio", "x", "--manifest", manifest}, "at most one of --stdio, --url and --manifest"},
		{"mutant-with-target", []string{"run", "--stdio", "x", "--mutant", "progress-regress"}, "--mutant applies to the built-in target only"},
		{"unknown-mutant", []string{"run", "--mutant", "nope"}, `unknown mutant "nope"`},
		{"unknown-spec", []string{"run", "--spec", "1999-01-01"}, `--spec "1999-01-01"`},
		{"bad-label-filter", []string{"run", "--label-filter", "area:("}, "--label-filter: Syntax Error Parsing Label Filter"},
		{"bad-label-filter-operator", []string{"run", "--label-filter", "area:cancel &&"}, "--label-filter"},
		{"bad-focus-regexp", []string{"run", "--focus", "("}, `--focus "("`},
		{"nothing-selected", []string{"run", "--focus", "NO-SUCH-CHECK"}, "no check matches"},
		{"stdio-unterminated-quote", []string{"run", "--stdio", `node -e "console.log(1)`}, "--stdio: command line"},
		{"stdio-shell-expansion", []string{"run", "--stdio", `server $HOME`}, "parameter expansion ($NAME) would need a shell"},
		{"init-stdio-unterminated-quote", []string{"init", "--stdio", `server 'a b`}, "unterminated quote"},
		{"missing-manifest", []string{"run", "--manifest", filepath.Join(t.TempDir(), "none.yaml")}, "read manifest"},
		{"unknown-flag", []string{"run", "--no-such-flag"}, "unknown flag"},
		{"run-with-argument", []string{"run", "extra"}, "unknown command"},
		{"unknown-command", []string{"nope"}, "unknown command"},
		{"explain-unknown-check", []string{"explain", "NOPE"}, `no check "NOPE"`},
		{"explain-no-argument", []string{"explain"}, "accepts 1 arg"},
		{"fixture-unknown-mutant", []string{"fixture", "--mutant", "nope"}, `unknown mutant "nope"`},
		{"proxy-no-command", []string{"proxy"}, "give a server command"},
		{"proxy-missing-faults", []string{"proxy", "--faults", filepath.Join(t.TempDir(), "none.yaml"), "--", "cat"}, "--faults"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			limitParallel(t)
			jsonPath := filepath.Join(t.TempDir(), "report.json")
			args := tc.args
			if args[0] == "run" {
				args = append(args[:len(args):len(args)], "--json", jsonPath)
			}
			r := runPlain(t, 10*time.Second, args...)
			if r.code != 2 {
				t.Errorf("exit %d, want 2\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("stderr %q lacks %q", r.stderr, tc.want)
			}
			if strings.Contains(r.stderr, "\x1b[") {
				t.Errorf("stderr has terminal escapes: %q", r.stderr)
			}
			if strings.Contains(r.stderr, "panic") || strings.Contains(r.stderr, "goroutine ") {
				t.Errorf("the CLI crashed: %s", r.stderr)
			}
			if _, err := os.Stat(jsonPath); err == nil {
				t.Errorf("a report was written for a bad command line")
			}
			if r.elapsed > 5*time.Second {
				t.Errorf("a usage error took %s", r.elapsed)
			}
		})
	}
}

// TestUsageHelp: --help of the root and of each subcommand exits 0 and
// documents the exit codes.
func TestUsageHelp(t *testing.T) {
	limitParallel(t)
	for _, args := range [][]string{{"--help"}, {"run", "--help"}, {"proxy", "--help"}, {"list", "--help"}, {"explain", "--help"}, {"fixture", "--help"}} {
		r := runPlain(t, 10*time.Second, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "Usage:") {
			t.Errorf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	if r := runPlain(t, 10*time.Second, "run", "--help"); !strings.Contains(r.stdout, "2 the harness could not run") {
		t.Errorf("run --help does not document the exit codes:\n%s", r.stdout)
	}
}

// TestUsageList: list prints every check of the catalog, once.
func TestUsageList(t *testing.T) {
	limitParallel(t)
	r := runPlain(t, 10*time.Second, "list")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	seen := map[string]int{}
	for _, line := range strings.Split(r.stdout, "\n")[1:] {
		if f := strings.Fields(line); len(f) > 0 {
			seen[f[0]]++
		}
	}
	for _, c := range suites.Catalog() {
		if seen[c.ID] != 1 {
			t.Errorf("%s listed %d times", c.ID, seen[c.ID])
		}
		delete(seen, c.ID)
	}
	for _, c := range clientsuite.Catalog() { // the CLIENT checks of `mcp-conform client`
		if seen[c.ID] != 1 {
			t.Errorf("%s listed %d times", c.ID, seen[c.ID])
		}
		delete(seen, c.ID)
	}
	if len(seen) > 0 {
		t.Errorf("list shows rows that are not checks: %v", seen)
	}
}

// TestUsageExplain: explain gives the clause, its spec pages and the mutant
// that breaks it; ids are case-insensitive.
func TestUsageExplain(t *testing.T) {
	limitParallel(t)
	for _, id := range []string{"CANCEL-STDIO-SUPPRESS", "cancel-stdio-suppress"} {
		r := runPlain(t, 10*time.Second, "explain", id)
		if r.code != 0 {
			t.Fatalf("explain %s: exit %d: %s", id, r.code, r.stderr)
		}
		for _, want := range []string{
			"CANCEL-STDIO-SUPPRESS",
			"specification/2026-07-28/basic/transports/stdio.mdx",
			"specification/2025-11-25/basic/utilities/cancellation.mdx",
			"MUST NOT send any further messages",
			"Mutant that breaks it: respond-after-cancel",
			"mcp-conform run --mutant respond-after-cancel --focus CANCEL-STDIO-SUPPRESS",
		} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("explain %s lacks %q:\n%s", id, want, r.stdout)
			}
		}
	}
}

// TestUsageFixtureList: fixture --list names every mutant and what it breaks.
func TestUsageFixtureList(t *testing.T) {
	limitParallel(t)
	r := runPlain(t, 10*time.Second, "fixture", "--list")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, m := range fixtures.Mutants() {
		found := false
		for _, line := range strings.Split(r.stdout, "\n") {
			f := strings.Fields(line)
			found = found || (len(f) >= 2 && f[0] == m.Name && (m.Breaks == "" || f[1] == m.Breaks))
		}
		if !found {
			t.Errorf("mutant %s (breaks %s) not listed:\n%s", m.Name, m.Breaks, r.stdout)
		}
	}
	for _, v := range fixtures.Variants() {
		if !strings.Contains(r.stdout, v.Name+" ") {
			t.Errorf("variant %s not listed:\n%s", v.Name, r.stdout)
		}
	}
}

// junitXML is the part of the JUnit format CI systems read.
type junitXML struct {
	XMLName xml.Name `xml:"testsuites"`
	Tests   int      `xml:"tests,attr"`
	Suites  []struct {
		Name  string `xml:"name,attr"`
		Tests int    `xml:"tests,attr"`
		Cases []struct {
			Name      string    `xml:"name,attr"`
			ClassName string    `xml:"classname,attr"`
			Failure   *struct{} `xml:"failure"`
			Skipped   *struct{} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// TestUsageFocusWritesJUnit: --focus runs only the named check (an
// unanchored part of the id, or the id anchored), and --junit writes
// parseable JUnit XML that agrees with the JSON report.
func TestUsageFocusWritesJUnit(t *testing.T) {
	for _, tc := range []struct {
		name, mutant, focus string
		code                int
		failures            int
	}{
		{name: "pass", focus: "CANCEL-STDIO-SUPPRESS", code: 0},
		{name: "fail", focus: "CANCEL-STDIO-SUPPRESS", mutant: "respond-after-cancel", code: 1, failures: 1},
		{name: "anchored", focus: "^CANCEL-STDIO-SUPPRESS$", code: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			limitParallel(t)
			junit := filepath.Join(t.TempDir(), "junit.xml")
			// One version: one check run, one JUnit test case.
			args := []string{"run", "-q", "--focus", tc.focus, "--spec", "2026-07-28", "--junit", junit}
			if tc.mutant != "" {
				args = append(args, "--mutant", tc.mutant)
			}
			r := runCLI(t, 60*time.Second, args...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", r.code, tc.code, r.stdout, r.stderr)
			}
			if len(r.report.Checks) != 1 || r.report.Checks[0].ID != "CANCEL-STDIO-SUPPRESS" {
				t.Fatalf("--focus ran %d checks: %+v", len(r.report.Checks), r.report.Summary)
			}
			data, err := os.ReadFile(junit)
			if err != nil {
				t.Fatal(err)
			}
			var j junitXML
			if err := xml.Unmarshal(data, &j); err != nil {
				t.Fatalf("JUnit XML does not parse: %v\n%s", err, data)
			}
			if j.Tests != 1 || len(j.Suites) != 1 || len(j.Suites[0].Cases) != 1 {
				t.Fatalf("JUnit: %d tests in %d suites:\n%s", j.Tests, len(j.Suites), data)
			}
			tcase := j.Suites[0].Cases[0]
			if !strings.HasPrefix(tcase.Name, "CANCEL-STDIO-SUPPRESS") {
				t.Errorf("JUnit test case %q", tcase.Name)
			}
			if got := tcase.Failure != nil; got != (tc.failures == 1) {
				t.Errorf("JUnit failure element present: %v, want %v\n%s", got, tc.failures == 1, data)
			}
		})
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/mcp-conform/mcp-conform/reports"
)

var updateExpected = flag.Bool("update", false, "TestRealTargets: rewrite fixtures/targets/*.expected.yaml from this run's verdicts")

// realTargets are the real servers installed by scripts/install-targets.sh,
// each with the manifest in fixtures/targets/ (NAME.yaml) and its expected
// verdicts (NAME.expected.yaml), and a file that exists once installed.
var realTargets = []struct{ name, needs string }{
	{"server-everything", ".targets/node_modules/@modelcontextprotocol/server-everything/dist/index.js"},
	{"server-everything-http", ".targets/node_modules/@modelcontextprotocol/server-everything/dist/index.js"},
	{"gosdk-stdio", ".targets/bin/gosdk-server"},
	{"gosdk-http", ".targets/bin/gosdk-server"},
	{"gosdk-http-stateless", ".targets/bin/gosdk-server"},
	{"ts-stdio", ".targets/ts-server/server.mjs"},
	{"ts-http", ".targets/ts-server/server.mjs"},
}

// realVersions are the protocol versions each real target is tried in.
var realVersions = []string{"2026-07-28", "2025-11-25", "2025-06-18"}

// realTargetRuns bounds the real-target runs going at once: they spend most
// of their time in the servers' timers, but their timing-sensitive checks
// must not starve.
var realTargetRuns = 2 * max(1, runtime.NumCPU())

// realCallTimeout bounds one role call in these runs: the longest real call
// (a task of 4 s) is far below it, and ROBUST-DUPLICATE-ID on a server that
// never answers the first call waits this long.
const realCallTimeout = "10s"

// TestRealTargets runs the suites against every real target, in every
// protocol version, and compares each verdict (status per check, transport
// and version; a version the server refuses is one "refused" entry) with the
// target's committed fixtures/targets/NAME.expected.yaml: any difference —
// a changed status, a row missing from the run or from the file, a version
// newly refused or accepted — fails, with a diff. With -update the files
// are rewritten from the run instead (a row whose status did not change
// keeps its committed reason); a commit that changes a real target's
// verdict updates the file with it, saying why in its message.
func TestRealTargets(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	type job struct {
		target, version string
		args            []string
	}
	var probes []job
	for _, rt := range realTargets {
		if _, err := os.Stat(filepath.Join(root, rt.needs)); err != nil {
			if os.Getenv("MCP_CONFORM_REQUIRE_TARGETS") != "" {
				t.Fatalf("%s is not installed (run scripts/install-targets.sh): %v", rt.needs, err)
			}
			t.Skip(rt.needs + " is not installed; scripts/install-targets.sh installs it (scripts/test.sh does)")
		}
		manifest := filepath.Join(root, "fixtures/targets", rt.name+".yaml")
		for _, v := range realVersions {
			// One cheap check that needs no role first: a version the
			// server refuses ends there, as "refused".
			probes = append(probes, job{rt.name, v, []string{"run", "-q", "--manifest", manifest, "--spec", v, "--focus", "ROBUST-UNKNOWN-METHOD", "--call-timeout", realCallTimeout}})
		}
	}
	start := time.Now()
	probeOut := runRealJobs(t, len(probes), func(i int) []string { return probes[i].args })
	refused := map[string]map[string]string{} // target -> version -> why
	var full []job
	for i, p := range probes {
		if why, ok := refusal(probeOut[i]); ok {
			if refused[p.target] == nil {
				refused[p.target] = map[string]string{}
			}
			refused[p.target][p.version] = why
			continue
		}
		full = append(full, job{p.target, p.version, []string{"run", "-q", "--manifest", filepath.Join(root, "fixtures/targets", p.target+".yaml"), "--spec", p.version, "--call-timeout", realCallTimeout}})
	}
	out := runRealJobs(t, len(full), func(i int) []string { return full[i].args })
	t.Logf("%d version probes and %d runs of %d real targets in %s", len(probes), len(full), len(realTargets), time.Since(start).Round(time.Second))

	for _, rt := range realTargets {
		t.Run(rt.name, func(t *testing.T) {
			got := expectedFile{Manifest: rt.name + ".yaml"}
			for _, v := range realVersions {
				if why, ok := refused[rt.name][v]; ok {
					got.Refused = append(got.Refused, refusedVersion{Version: v, Reason: why})
				}
			}
			for i, j := range full {
				if j.target != rt.name {
					continue
				}
				r := out[i]
				// A probe that failed for another reason (a slow start)
				// leaves the refusal to the full run to show.
				if why, ok := refusedRun(r); ok {
					got.Refused = append(got.Refused, refusedVersion{Version: j.version, Reason: why})
					continue
				}
				if r.report == nil {
					t.Errorf("%s in %s: no report (exit %d)\nstdout:\n%s\nstderr:\n%s", rt.name, j.version, r.code, r.stdout, r.stderr)
					continue
				}
				t.Logf("%s in %s: %+v in %s (exit %d)", rt.name, j.version, r.report.Summary, r.elapsed.Round(time.Millisecond), r.code)
				for _, c := range r.report.Checks {
					if (c.Status == reports.Fail || c.Status == reports.Warn) && len(c.Transcript) == 0 {
						t.Errorf("%s %s in %s: %s without a transcript", rt.name, c.ID, j.version, c.Status)
					}
					transport := c.Transport
					if transport == "" {
						transport = r.report.Target.Transport
					}
					got.Checks = append(got.Checks, verdictRow{ID: c.ID, Transport: transport, Version: j.version, Status: string(c.Status), Reason: oneLine(c.Reason)})
				}
			}
			slices.SortFunc(got.Refused, func(a, b refusedVersion) int {
				return slices.Index(realVersions, a.Version) - slices.Index(realVersions, b.Version)
			})
			path := filepath.Join(root, "fixtures/targets", rt.name+".expected.yaml")
			want, err := readExpected(path)
			if err != nil && !(*updateExpected && os.IsNotExist(err)) {
				t.Fatalf("%v (create it with: go test -run TestRealTargets ./cmd/mcp-conform/ -update)", err)
			}
			if *updateExpected {
				keepReasons(&got, want)
				if err := writeExpected(path, got); err != nil {
					t.Fatal(err)
				}
				t.Logf("wrote %s: %d rows, %d refused versions", path, len(got.Checks), len(got.Refused))
				return
			}
			if d := diffExpected(want, got); len(d) > 0 {
				t.Errorf("%s differs from this run (%d difference(s)); if the change is right, regenerate with\n  go test -run TestRealTargets ./cmd/mcp-conform/ -update\nand commit the file with the evidence:\n  %s",
					filepath.Join("fixtures/targets", rt.name+".expected.yaml"), len(d), strings.Join(d, "\n  "))
			}
		})
	}
}

// runRealJobs runs n argument lists of the binary built without the race
// detector (these runs are about the servers' verdicts), at most
// realTargetRuns at once, outside go test's -parallel, and returns every
// result.
func runRealJobs(t *testing.T, n int, args func(int) []string) []result {
	t.Helper()
	out := make([]result, n)
	errs := make([]error, n)
	slots := make(chan struct{}, realTargetRuns)
	var wg sync.WaitGroup
	for i := range n {
		dir := t.TempDir()
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			out[i], errs[i] = execCLI(fastBinary, dir, 6*time.Minute, args(i)...)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("run %v: %v", args(i), err)
		}
	}
	return out
}

// refusedRE recognises a run that could not negotiate the version forced.
var refusedRE = regexp.MustCompile(`(?i)negotiat|refuse|not accept|does not (speak|support)`)

// refusal reports whether a version probe found the version refused, and
// the harness's words for it.
func refusal(r result) (string, bool) {
	if r.report == nil {
		if r.code == 2 && refusedRE.MatchString(r.stderr) {
			return oneLine(lastLine(r.stderr)), true
		}
		return "", false
	}
	for _, c := range r.report.Checks {
		if (c.Status == reports.Error || c.Status == reports.Skip) && refusedRE.MatchString(c.Reason) {
			return oneLine(c.Reason), true
		}
	}
	return "", false
}

// refusedRun reports whether a full run found the version refused: no check
// could negotiate it (every check ERROR or SKIP, one of them saying why).
func refusedRun(r result) (string, bool) {
	if r.report == nil {
		return refusal(r)
	}
	why := ""
	for _, c := range r.report.Checks {
		switch {
		case c.Status == reports.Error && refusedRE.MatchString(c.Reason):
			if why == "" {
				why = oneLine(c.Reason)
			}
		case c.Status != reports.Skip:
			return "", false
		}
	}
	return why, why != ""
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// expectedFile is a real target's committed verdicts.
type expectedFile struct {
	Manifest string           `yaml:"manifest"`
	Refused  []refusedVersion `yaml:"refused"`
	Checks   []verdictRow     `yaml:"checks"`
}

type refusedVersion struct {
	Version string `yaml:"version"`
	Reason  string `yaml:"reason"`
}

// verdictRow is one check's verdict on a transport in a version; the reason
// explains it and is not compared. A committed status may list
// alternatives ("PASS|WARN") for a verdict that hangs on a race the harness
// does not control; the reason then says which race, and -update keeps the
// row while the run's status is one of them.
type verdictRow struct {
	ID        string `yaml:"id"`
	Transport string `yaml:"transport"`
	Version   string `yaml:"version"`
	Status    string `yaml:"status"`
	Reason    string `yaml:"reason"`
}

func (r verdictRow) key() string { return r.ID + " " + r.Transport + " " + r.Version }

// admits reports whether the committed status (or one of its alternatives)
// is status.
func (r verdictRow) admits(status string) bool {
	return slices.Contains(strings.Split(r.Status, "|"), status)
}

func readExpected(path string) (expectedFile, error) {
	var f expectedFile
	b, err := os.ReadFile(path)
	if err != nil {
		return f, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return f, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// writeExpected writes one row per line, strings as JSON (valid YAML).
func writeExpected(path string, f expectedFile) error {
	q := func(s string) string {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(s)
		return strings.TrimSpace(b.String())
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Expected verdicts of fixtures/targets/%s: one row per check, transport and protocol\n", f.Manifest)
	b.WriteString("# version (the status is compared; the reason, from the run, explains it). Checked by\n")
	b.WriteString("# TestRealTargets (cmd/mcp-conform); regenerate with\n")
	b.WriteString("#   go test -run TestRealTargets ./cmd/mcp-conform/ -update\n")
	b.WriteString("# and commit a changed verdict with its evidence (fixtures/targets/README.md).\n")
	fmt.Fprintf(&b, "manifest: %s\n", f.Manifest)
	if len(f.Refused) == 0 {
		b.WriteString("refused: []\n")
	} else {
		b.WriteString("refused:\n")
		for _, r := range f.Refused {
			fmt.Fprintf(&b, "  - {version: %s, reason: %s}\n", r.Version, q(r.Reason))
		}
	}
	b.WriteString("checks:\n")
	for _, r := range f.Checks {
		fmt.Fprintf(&b, "  - {id: %s, transport: %s, version: %s, status: %s, reason: %s}\n", r.ID, r.Transport, r.Version, r.Status, q(r.Reason))
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// keepReasons keeps the committed row (its reason, its alternatives) where
// it admits the run's status, so that a regeneration shows only the
// verdicts that moved.
func keepReasons(got *expectedFile, old expectedFile) {
	was := map[string]verdictRow{}
	for _, r := range old.Checks {
		was[r.key()] = r
	}
	for i, r := range got.Checks {
		if o, ok := was[r.key()]; ok && o.admits(r.Status) && (o.Reason != "" || o.Status != r.Status) {
			got.Checks[i] = o
		}
	}
	wasRefused := map[string]string{}
	for _, r := range old.Refused {
		wasRefused[r.Version] = r.Reason
	}
	for i, r := range got.Refused {
		if o, ok := wasRefused[r.Version]; ok && o != "" {
			got.Refused[i].Reason = o
		}
	}
}

// diffExpected lists every difference between the committed verdicts and
// the run's, one readable line each.
func diffExpected(want, got expectedFile) []string {
	var d []string
	refusedIn := func(f expectedFile) map[string]string {
		m := map[string]string{}
		for _, r := range f.Refused {
			m[r.Version] = r.Reason
		}
		return m
	}
	wr, gr := refusedIn(want), refusedIn(got)
	for _, v := range realVersions {
		w, wok := wr[v]
		g, gok := gr[v]
		switch {
		case wok && !gok:
			d = append(d, fmt.Sprintf("version %s: expected refused (%s), now accepted", v, w))
		case !wok && gok:
			d = append(d, fmt.Sprintf("version %s: now refused (%s)", v, g))
		}
	}
	wm := map[string]verdictRow{}
	for _, r := range want.Checks {
		wm[r.key()] = r
	}
	gm := map[string]verdictRow{}
	for _, r := range got.Checks {
		gm[r.key()] = r
	}
	for _, r := range got.Checks {
		w, ok := wm[r.key()]
		switch {
		case !ok:
			d = append(d, fmt.Sprintf("+ %s: %s %q (not in the file)", r.key(), r.Status, clipReason(r.Reason)))
		case !w.admits(r.Status):
			d = append(d, fmt.Sprintf("~ %s: expected %s %q, got %s %q", r.key(), w.Status, clipReason(w.Reason), r.Status, clipReason(r.Reason)))
		}
	}
	for _, r := range want.Checks {
		if _, ok := gm[r.key()]; !ok {
			d = append(d, fmt.Sprintf("- %s: expected %s %q, not in the run", r.key(), r.Status, clipReason(r.Reason)))
		}
	}
	return d
}

func clipReason(s string) string {
	if r := []rune(s); len(r) > 200 {
		return string(r[:200]) + "…"
	}
	return s
}

// Parts of a reason that change from run to run.
var (
	reKey     = regexp.MustCompile(`\b(mcpc-[a-z]+)-[0-9a-f]{24}\b`)
	reUUID    = regexp.MustCompile(`\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	reTime    = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z\b`)
	rePort    = regexp.MustCompile(`\b127\.0\.0\.1:\d+\b`)
	reSpace   = regexp.MustCompile(`\s+`)
	reTokenID = regexp.MustCompile(`\b[A-Z2-7]{26}\b`) // go-sdk session and stream ids
)

// oneLine is a reason fit for a row: one line, without the run's random
// keys, ids, times and ports, at most 240 characters.
func oneLine(s string) string {
	s = reKey.ReplaceAllString(s, "$1-…")
	s = reUUID.ReplaceAllString(s, "<uuid>")
	s = reTime.ReplaceAllString(s, "<time>")
	s = rePort.ReplaceAllString(s, "127.0.0.1:<port>")
	s = reTokenID.ReplaceAllString(s, "<id>")
	s = strings.TrimSpace(reSpace.ReplaceAllString(s, " "))
	if r := []rune(s); len(r) > 240 {
		s = string(r[:240]) + "…"
	}
	return s
}

// TestDiffExpected: every kind of difference between a target's committed
// verdicts and a run is reported — a changed status, a row only in the run,
// a row only in the file, a version newly refused or accepted — and a
// changed reason alone is not.
func TestDiffExpected(t *testing.T) {
	row := func(id, v, st, why string) verdictRow {
		return verdictRow{ID: id, Transport: "stdio", Version: v, Status: st, Reason: why}
	}
	want := expectedFile{
		Refused: []refusedVersion{{Version: "2026-07-28", Reason: "no server/discover"}},
		Checks: []verdictRow{row("A", "2025-11-25", "PASS", "ok"), row("B", "2025-11-25", "FAIL", "bad"),
			row("C", "2025-11-25", "PASS", "gone"), row("D", "2025-06-18", "WARN", "w")},
	}
	for _, tc := range []struct {
		name string
		got  expectedFile
		want []string
	}{
		{"same, reasons differ", expectedFile{Refused: want.Refused, Checks: []verdictRow{row("A", "2025-11-25", "PASS", "other words"),
			row("B", "2025-11-25", "FAIL", "x"), row("C", "2025-11-25", "PASS", ""), row("D", "2025-06-18", "WARN", "")}}, nil},
		{"status, extra, missing", expectedFile{Refused: want.Refused, Checks: []verdictRow{row("A", "2025-11-25", "FAIL", "now broken"),
			row("B", "2025-11-25", "FAIL", "x"), row("D", "2025-06-18", "WARN", ""), row("E", "2025-06-18", "PASS", "new")}},
			[]string{`~ A stdio 2025-11-25: expected PASS "ok", got FAIL "now broken"`, `+ E stdio 2025-06-18: PASS "new" (not in the file)`,
				`- C stdio 2025-11-25: expected PASS "gone", not in the run`}},
		{"alternatives", expectedFile{Refused: want.Refused, Checks: []verdictRow{row("A", "2025-11-25", "PASS", ""),
			row("B", "2025-11-25", "FAIL", ""), row("C", "2025-11-25", "PASS", ""), row("D", "2025-06-18", "PASS", "raced")}},
			[]string{`~ D stdio 2025-06-18: expected WARN "w", got PASS "raced"`}},
		{"versions", expectedFile{Refused: []refusedVersion{{Version: "2025-06-18", Reason: "nope"}}, Checks: want.Checks[:3]},
			[]string{"version 2026-07-28: expected refused (no server/discover), now accepted", "version 2025-06-18: now refused (nope)",
				`- D stdio 2025-06-18: expected WARN "w", not in the run`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := diffExpected(want, tc.got); !slices.Equal(got, tc.want) {
				t.Errorf("diff:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
	raced := expectedFile{Checks: []verdictRow{row("R", "2025-11-25", "PASS|WARN", "resume races the server noticing the close")}}
	for st, n := range map[string]int{"PASS": 0, "WARN": 0, "FAIL": 1} {
		if d := diffExpected(raced, expectedFile{Checks: []verdictRow{row("R", "2025-11-25", st, "")}}); len(d) != n {
			t.Errorf("PASS|WARN committed, %s run: %d differences %q, want %d", st, len(d), d, n)
		}
	}
}

// TestRefusedRun: a run in which no check could negotiate the version is a
// refusal; one check that ran is not.
func TestRefusedRun(t *testing.T) {
	neg := reports.Check{ID: "A", Status: reports.Error, Reason: "could not start and negotiate with the target: negotiate (2026-07-28): …"}
	skip := reports.Check{ID: "B", Status: reports.Skip, Reason: "not on the http transport"}
	ran := reports.Check{ID: "C", Status: reports.Fail, Reason: "negotiated, then failed"}
	for _, tc := range []struct {
		name   string
		r      result
		refuse bool
	}{
		{"all unnegotiated", result{report: &reports.Report{Checks: []reports.Check{neg, skip, neg}}}, true},
		{"one ran", result{report: &reports.Report{Checks: []reports.Check{neg, ran}}}, false},
		{"only skips", result{report: &reports.Report{Checks: []reports.Check{skip}}}, false},
		{"role validation", result{code: 2, stderr: "mcp-conform: manifest x: start the target to validate its roles: negotiate (2026-07-28): …"}, true},
		{"other usage error", result{code: 2, stderr: "mcp-conform: no check matches --focus"}, false},
	} {
		if _, got := refusedRun(tc.r); got != tc.refuse {
			t.Errorf("%s: refused %v, want %v", tc.name, got, tc.refuse)
		}
	}
}

// TestKeepReasons: -update keeps a committed row (annotated reason,
// alternatives) while it admits the run's status, and takes the run's row
// when the status moved.
func TestKeepReasons(t *testing.T) {
	old := expectedFile{Checks: []verdictRow{
		{ID: "A", Version: "v", Status: "FAIL", Reason: "SDK defect: …"},
		{ID: "B", Version: "v", Status: "PASS|WARN", Reason: "raced"},
		{ID: "C", Version: "v", Status: "PASS", Reason: "was fine"},
	}}
	got := expectedFile{Checks: []verdictRow{
		{ID: "A", Version: "v", Status: "FAIL", Reason: "run words"},
		{ID: "B", Version: "v", Status: "WARN", Reason: "0 events"},
		{ID: "C", Version: "v", Status: "FAIL", Reason: "now broken"},
	}}
	keepReasons(&got, old)
	want := []verdictRow{old.Checks[0], old.Checks[1], {ID: "C", Version: "v", Status: "FAIL", Reason: "now broken"}}
	if !slices.Equal(got.Checks, want) {
		t.Errorf("kept %+v, want %+v", got.Checks, want)
	}
}

// TestExpectedFileRoundTrip: a written file reads back as written, and a
// row's reason loses the run's random keys, ids, times and ports.
func TestExpectedFileRoundTrip(t *testing.T) {
	f := expectedFile{Manifest: "x.yaml", Refused: []refusedVersion{{Version: "2026-07-28", Reason: `quote " and: colon`}},
		Checks: []verdictRow{{ID: "A", Transport: "http", Version: "2025-11-25", Status: "FAIL",
			Reason: oneLine("key mcpc-lost-0123456789abcdef01234567 at 2026-12-01T09:35:57.064Z\n on 127.0.0.1:4242 <b>&")}}}
	if got := f.Checks[0].Reason; got != "key mcpc-lost-… at <time> on 127.0.0.1:<port> <b>&" {
		t.Errorf("oneLine: %q", got)
	}
	path := filepath.Join(t.TempDir(), "x.expected.yaml")
	if err := writeExpected(path, f); err != nil {
		t.Fatal(err)
	}
	back, err := readExpected(path)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(back) != fmt.Sprint(f) {
		t.Errorf("read back %+v, wrote %+v", back, f)
	}
}

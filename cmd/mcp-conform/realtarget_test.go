package main

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/reports"
)

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
	// The same servers with mcp-conform's drop-in test tools switched on
	// (testtools/gosdk, testtools/ts): every role a conform_* tool.
	{"gosdk-testtools", ".targets/bin/gosdk-server"},
	{"gosdk-testtools-http", ".targets/bin/gosdk-server"},
	{"ts-testtools", ".targets/node_modules/@mcp-conform/testtools/index.js"},
	{"ts-testtools-http", ".targets/node_modules/@mcp-conform/testtools/index.js"},
}

// realVersions are the protocol versions each real target is tried in.
var realVersions = []string{"2026-07-28", "2025-11-25", "2025-06-18"}

// realTargetRuns bounds the real-target check runs going at once: they
// spend most of their time in the servers' timers, but their timing-
// sensitive checks must not starve (at three times this, ts-http's node
// server once failed ROBUST-OVERSIZE's ping with a 502). A full run is
// dealt into slices of --jobs realRunJobs, so realTargetRuns/realRunJobs
// full runs go at once.
var realTargetRuns = 2 * max(1, runtime.NumCPU())

const realRunJobs = 2

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
	probeOut := runRealJobs(t, len(probes), realTargetRuns, func(i int) []string { return probes[i].args })
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
		full = append(full, job{p.target, p.version, []string{"run", "-q", "--manifest", filepath.Join(root, "fixtures/targets", p.target+".yaml"), "--spec", p.version, "--call-timeout", realCallTimeout, "--jobs", strconv.Itoa(realRunJobs)}})
	}
	out := runRealJobs(t, len(full), realTargetRuns/realRunJobs, func(i int) []string { return full[i].args })
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
			matchExpected(t, root, filepath.Join("fixtures/targets", rt.name+".expected.yaml"), "TestRealTargets", got, nil)
		})
	}
}

// runRealJobs runs n argument lists of the binary built without the race
// detector (these runs are about the servers' verdicts), at most
// atOnce at a time, outside go test's -parallel, and returns every
// result.
func runRealJobs(t *testing.T, n, atOnce int, args func(int) []string) []result {
	t.Helper()
	out := make([]result, n)
	errs := make([]error, n)
	slots := make(chan struct{}, max(1, atOnce))
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

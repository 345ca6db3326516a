package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/clientsuite"
	"github.com/mcp-conform/mcp-conform/reports"
)

// realClients are the real MCP clients installed by
// scripts/install-targets.sh, each driven by its driver in fixtures/clients/
// (docs/CLIENT-DRIVERS.md) and with its expected verdicts
// (fixtures/clients/NAME.expected.yaml): needs is the file that exists once
// installed, command the driver's command line ({root}: the repository),
// scale the grader's --time-scale for it.
//
// The TypeScript SDK's driver runs at --time-scale 2, as the contract advises
// for a client that cannot meet the scenarios' bounds on a slow machine: node
// takes ~0.4 s of CPU to load the SDK and its first fetch loads its HTTP stack
// (190-316 ms at load average 13 on a 2-core machine), against 300 ms bounds.
var realClients = []struct {
	name, needs, command string
	scale                float64
}{
	{"ts-client", ".targets/ts-client/driver.mjs", "node {root}/.targets/ts-client/driver.mjs", 2},
	{"gosdk-client", ".targets/bin/gosdk-client", "{root}/.targets/bin/gosdk-client", 1},
}

// realClientJobs is the --jobs of each grader run (one client and version,
// every scenario but the crowds); those runs go one after the other, and
// then the crowd scenarios (the herd: eight client processes, judged on how
// their reconnections spread), each alone. Every run of a real client starts
// at least one process (node, for the TypeScript SDK: ~0.4 s of CPU to load
// the SDK, and its first fetch loads the HTTP stack) and its clocks are a
// few hundred milliseconds: with a second grader run beside it (six scenario
// runs at once), the TS client's first request missed its 600 ms initialize
// timeout in 1 of 3 runs at load 10; alone, 0 of 3.
const realClientJobs = 3

// realClientLimit bounds one grader run (every scenario of one version; the
// longest scenario run, the herd, is bounded by 40 s, 80 s at --time-scale 2;
// one client at a time, it took 25-47 s for the TS SDK at load 20-40).
const realClientLimit = 4 * time.Minute

// unsupportedRE recognises the SKIP reasons of a run in a version the client
// does not speak: its driver said so (exit 2), or it negotiated another.
var unsupportedRE = regexp.MustCompile(`the driver does not support \S+ \(exit 2\)(: (.*))?|the client negotiated (\S+), not`)

// TestRealClients runs `mcp-conform client` against every real client on
// stdio and Streamable HTTP in every protocol version, and compares each
// verdict (status per check, transport and version; a version the client
// does not speak is one "refused" entry) with the client's committed
// fixtures/clients/NAME.expected.yaml: any difference fails, with a diff and
// the moved rows' evidence (reason and transcript). With -update the files
// are rewritten from the run instead (a row whose status did not change
// keeps its committed reason). First one cheap run per client and version
// (tools-call, both transports) finds the versions a client does not speak;
// then every scenario but the herd of each version it speaks, the clients
// and versions one after the other, realClientJobs scenario runs each; then
// each herd alone. The two reports of a version are merged.
func TestRealClients(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	type job struct {
		client, version string
		args            []string
	}
	command := map[string]string{}
	scale := map[string]string{}
	var probes []job
	for _, rc := range realClients {
		if _, err := os.Stat(filepath.Join(root, rc.needs)); err != nil {
			if os.Getenv("MCP_CONFORM_REQUIRE_TARGETS") != "" {
				t.Fatalf("%s is not installed (run scripts/install-targets.sh): %v", rc.needs, err)
			}
			t.Skip(rc.needs + " is not installed; scripts/install-targets.sh installs it (scripts/test.sh does)")
		}
		command[rc.name] = strings.ReplaceAll(rc.command, "{root}", shellQuote(root))
		scale[rc.name] = fmt.Sprint(rc.scale)
		for _, v := range realVersions {
			probes = append(probes, job{rc.name, v, []string{"client", "-q", "--command", command[rc.name], "--spec", v,
				"--scenario", "tools-call", "--jobs", "2", "--time-scale", scale[rc.name]}})
		}
	}
	start := time.Now()
	probeOut := runRealClientJobs(t, len(probes), len(probes), func(i int) []string { return probes[i].args })
	refused := map[string]map[string]string{} // client -> version -> why
	var full []job
	for i, p := range probes {
		if probeOut[i].report == nil {
			t.Fatalf("%s in %s: no report from the version probe (exit %d)\nstderr:\n%s", p.client, p.version, probeOut[i].code, probeOut[i].stderr)
		}
		if why, ok := clientRefused(probeOut[i].report); ok {
			if refused[p.client] == nil {
				refused[p.client] = map[string]string{}
			}
			refused[p.client][p.version] = why
			continue
		}
		full = append(full, job{p.client, p.version, []string{"client", "-q", "--command", command[p.client], "--spec", p.version,
			"--jobs", fmt.Sprint(realClientJobs), "--time-scale", scale[p.client]}})
	}
	probeTime := time.Since(start)
	// Every scenario but the crowds, one client and version at a time; then
	// each crowd scenario alone.
	var single, crowd []string
	for _, name := range clientsuite.ScenarioNames() {
		if sc, _ := clientsuite.LookupScenario(name); sc.NumClients() > 1 {
			crowd = append(crowd, name)
		} else {
			single = append(single, name)
		}
	}
	scenarioArgs := func(names []string) []string {
		var a []string
		for _, n := range names {
			a = append(a, "--scenario", n)
		}
		return a
	}
	out := runRealClientJobs(t, len(full), 1, func(i int) []string {
		return append(slices.Clone(full[i].args), scenarioArgs(single)...)
	})
	crowdOut := runRealClientJobs(t, len(full), 1, func(i int) []string {
		return append(slices.Clone(full[i].args), scenarioArgs(crowd)...)
	})
	t.Logf("%d version probes in %s, %d × 2 runs of %d real clients in %s", len(probes), probeTime.Round(time.Second), len(full),
		len(realClients), (time.Since(start) - probeTime).Round(time.Second))

	for _, rc := range realClients {
		t.Run(rc.name, func(t *testing.T) {
			got := expectedFile{Client: rc.name}
			for _, v := range realVersions {
				if why, ok := refused[rc.name][v]; ok {
					got.Refused = append(got.Refused, refusedVersion{Version: v, Reason: why})
				}
			}
			checks := map[string]reports.Check{}
			for i, j := range full {
				if j.client != rc.name {
					continue
				}
				var reps []*reports.Report
				for _, r := range []result{out[i], crowdOut[i]} {
					if r.report == nil {
						t.Errorf("%s in %s: no report (exit %d)\nstdout:\n%s\nstderr:\n%s", rc.name, j.version, r.code, r.stdout, r.stderr)
						continue
					}
					t.Logf("%s in %s: %+v in %s (exit %d)", rc.name, j.version, r.report.Summary, r.elapsed.Round(time.Millisecond), r.code)
					reps = append(reps, r.report)
				}
				rep, err := mergeClientReports(reps...)
				if err != nil {
					t.Errorf("%s in %s: %v", rc.name, j.version, err)
					continue
				}
				if why, ok := clientRefused(rep); ok {
					got.Refused = append(got.Refused, refusedVersion{Version: j.version, Reason: why})
					continue
				}
				for _, c := range rep.Checks {
					if (c.Status == reports.Fail || c.Status == reports.Warn) && len(c.Transcript) == 0 {
						t.Errorf("%s %s [%s %s]: %s without a transcript", rc.name, c.ID, c.Transport, j.version, c.Status)
					}
					row := verdictRow{ID: c.ID, Transport: c.Transport, Version: j.version, Status: string(c.Status), Reason: oneLine(c.Reason)}
					got.Checks = append(got.Checks, row)
					checks[row.key()] = c
				}
			}
			slices.SortFunc(got.Refused, func(a, b refusedVersion) int {
				return slices.Index(realVersions, a.Version) - slices.Index(realVersions, b.Version)
			})
			matchExpected(t, root, filepath.Join("fixtures/clients", rc.name+".expected.yaml"), "TestRealClients", got,
				func(row verdictRow) string { return evidenceOf(checks[row.key()]) })
		})
	}
}

// runRealClientJobs runs n argument lists of the binary built without the
// race detector (the runs are about the clients' verdicts), at most atOnce
// at a time, and returns every result.
func runRealClientJobs(t *testing.T, n, atOnce int, args func(int) []string) []result {
	t.Helper()
	out := make([]result, n)
	errs := make([]error, n)
	slots := make(chan struct{}, atOnce)
	var wg sync.WaitGroup
	for i := range n {
		dir := t.TempDir()
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			out[i], errs[i] = execCLI(fastBinary, dir, realClientLimit, args(i)...)
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

// mergeClientReports joins the reports of one client and version made by
// separate grader runs over disjoint sets of scenarios: a check in both is a
// hygiene check, judged on the runs of every scenario but the crowds', so
// that at most one of them judged it (the other SKIP: "not judged on the
// herd"); the judged one stays. Two judged verdicts of one check would need
// the grader's aggregation, and are an error.
func mergeClientReports(reps ...*reports.Report) (*reports.Report, error) {
	if len(reps) == 0 {
		return nil, fmt.Errorf("no report")
	}
	out := &reports.Report{}
	at := map[string]int{}
	for _, rep := range reps {
		for _, c := range rep.Checks {
			k := c.ID + " " + c.Transport + " " + c.ProtocolVersion
			i, ok := at[k]
			switch {
			case !ok:
				at[k] = len(out.Checks)
				out.Checks = append(out.Checks, c)
			case c.Status == reports.Skip:
			case out.Checks[i].Status == reports.Skip:
				out.Checks[i] = c
			default:
				return nil, fmt.Errorf("%s judged by two runs (%s and %s): the reports cannot be merged without the grader", k, out.Checks[i].Status, c.Status)
			}
		}
	}
	out.Summary = reports.Summarize(out.Checks)
	return out, nil
}

// clientRefused reports whether a client run found the version unspoken:
// every check SKIP for the reason unsupportedRE recognises (the driver's
// own words, or the version it negotiated instead).
func clientRefused(rep *reports.Report) (string, bool) {
	why := ""
	for _, c := range rep.Checks {
		if c.Status != reports.Skip {
			return "", false
		}
		m := unsupportedRE.FindStringSubmatch(c.Reason)
		if m == nil {
			return "", false
		}
		if why == "" {
			switch {
			case m[2] != "":
				why = oneLine(m[2])
			case m[3] != "":
				why = "the client negotiated " + m[3]
			default:
				why = "the driver does not support the version (exit 2)"
			}
		}
	}
	return why, why != ""
}

// evidenceOf is a check's reason and transcript, for a verdict that moved.
func evidenceOf(c reports.Check) string {
	if c.ID == "" {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "    reason: %s\n", c.Reason)
	var tr strings.Builder
	reports.FormatTranscript(&tr, c.Transcript)
	lines := strings.Split(strings.TrimRight(tr.String(), "\n"), "\n")
	const most = 80
	if len(lines) > most {
		lines = append(lines[:most:most], fmt.Sprintf("… (%d more transcript lines)", len(lines)-most))
	}
	for _, l := range lines {
		b.WriteString("    " + l + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// shellQuote quotes s for /bin/sh when it needs it.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// TestClientRefused: a version in which every check was skipped because the
// driver does not support it (or the client negotiated another) is refused,
// with the driver's words; one check that ran is not.
func TestClientRefused(t *testing.T) {
	unsup := reports.Check{ID: "A", Status: reports.Skip, Reason: "tools-call: the driver does not support tools-call (exit 2): ts-client: no option to ask for 2025-06-18"}
	neg := reports.Check{ID: "B", Status: reports.Skip, Reason: "tools-call: the client negotiated 2025-11-25, not 2025-06-18 (does it speak 2025-06-18?)"}
	ran := reports.Check{ID: "C", Status: reports.Pass, Reason: "ok"}
	other := reports.Check{ID: "D", Status: reports.Skip, Reason: "the client sent no notifications/cancelled"}
	for _, tc := range []struct {
		name   string
		checks []reports.Check
		why    string
		refuse bool
	}{
		{"driver said", []reports.Check{unsup, unsup}, "ts-client: no option to ask for 2025-06-18", true},
		{"negotiated", []reports.Check{neg}, "the client negotiated 2025-11-25", true},
		{"one ran", []reports.Check{unsup, ran}, "", false},
		{"other skip", []reports.Check{unsup, other}, "", false},
		{"nothing", nil, "", false},
	} {
		why, ok := clientRefused(&reports.Report{Checks: tc.checks})
		if ok != tc.refuse || why != tc.why {
			t.Errorf("%s: refused %v %q, want %v %q", tc.name, ok, why, tc.refuse, tc.why)
		}
	}
}

// TestMergeClientReports: the scenario checks of both runs are kept, a
// hygiene check judged by one run keeps that verdict over the other's SKIP,
// and one judged by both is an error.
func TestMergeClientReports(t *testing.T) {
	chk := func(id string, st reports.Status) reports.Check {
		return reports.Check{ID: id, Transport: "http", ProtocolVersion: "2025-11-25", Status: st}
	}
	main := &reports.Report{Checks: []reports.Check{chk("CLIENT-PING-ANSWERED", reports.Pass), chk("CLIENT-ID-UNIQUE", reports.Fail)}}
	herd := &reports.Report{Checks: []reports.Check{chk("CLIENT-HERD-JITTER", reports.Warn), chk("CLIENT-ID-UNIQUE", reports.Skip)}}
	got, err := mergeClientReports(main, herd)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range got.Checks {
		ids = append(ids, c.ID+"="+string(c.Status))
	}
	if want := []string{"CLIENT-PING-ANSWERED=PASS", "CLIENT-ID-UNIQUE=FAIL", "CLIENT-HERD-JITTER=WARN"}; !slices.Equal(ids, want) {
		t.Errorf("merged %v, want %v", ids, want)
	}
	if got.Summary.Fail != 1 || got.Summary.Warn != 1 || got.Summary.Pass != 1 {
		t.Errorf("summary %+v", got.Summary)
	}
	// The other order: the herd's SKIP first, the judged verdict replaces it.
	if got, err := mergeClientReports(herd, main); err != nil || got.Checks[1].Status != reports.Fail {
		t.Errorf("herd first: %+v, %v", got, err)
	}
	twice := &reports.Report{Checks: []reports.Check{chk("CLIENT-ID-UNIQUE", reports.Pass)}}
	if _, err := mergeClientReports(main, twice); err == nil {
		t.Error("a check judged by both runs merged without an error")
	}
}

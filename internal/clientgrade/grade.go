// Package clientgrade runs a real MCP client program against the
// scenarios of package clientsuite and grades what it sent: for each
// scenario × transport × protocol version it starts the scenario's server
// behaviour (the reference server of fixtures/, behind the fault proxy with
// the scenario's rules), runs the client's driver command once (several
// times at once for the herd) as docs/CLIENT-DRIVERS.md says, and judges
// every CLIENT check on the proxy's transcript. The result is a
// reports.Report, written like `mcp-conform run`'s.
//
// Streamable HTTP runs keep the server and the proxy in this process; stdio
// runs hand the client a command line of mcp-conform itself
// (serve-scenario, ServeScenario) that serves the scenario on the client's
// pipes and streams the transcript back over a loopback socket.
package clientgrade

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcp-conform/mcp-conform/clientsuite"
	"github.com/mcp-conform/mcp-conform/reports"
)

// Options configures Grade.
type Options struct {
	// Command is the client's driver command line (run with /bin/sh -c).
	Command string
	// Transports, Versions and Scenarios select the runs (nil: all).
	Transports []string
	Versions   []string
	Scenarios  []string
	// Jobs bounds the runs at once (0: 4).
	Jobs int
	// Scale multiplies every duration of the scenarios and the judges'
	// tolerances (0: 1), for slow machines.
	Scale float64
	// Exe is the mcp-conform executable (stdio runs: the server command).
	Exe string
	// Env is added to every client's environment.
	Env []string
	// ToolVersion names the harness in the report.
	ToolVersion string
	// OnRun, when set, is called as each run ends (progress).
	OnRun func(done, total int, r *clientsuite.Run, elapsed time.Duration)
}

// Planned is one run to make.
type Planned struct {
	Scenario  *clientsuite.Scenario
	Transport string
	Version   string
}

// Plan lists the runs the options select.
func Plan(o Options) ([]Planned, error) {
	for _, name := range o.Scenarios {
		if _, ok := clientsuite.LookupScenario(name); !ok {
			return nil, fmt.Errorf("unknown scenario %q (known: %s)", name, strings.Join(clientsuite.ScenarioNames(), ", "))
		}
	}
	var out []Planned
	for _, sc := range clientsuite.Scenarios() {
		if len(o.Scenarios) > 0 && !slices.Contains(o.Scenarios, sc.Name) {
			continue
		}
		for _, tr := range []string{clientsuite.Stdio, clientsuite.HTTP} {
			if len(o.Transports) > 0 && !slices.Contains(o.Transports, tr) {
				continue
			}
			for _, v := range clientsuite.Versions {
				if len(o.Versions) > 0 && !slices.Contains(o.Versions, v) {
					continue
				}
				if ok, _ := sc.Applies(v, tr); ok {
					out = append(out, Planned{Scenario: sc, Transport: tr, Version: v})
				}
			}
		}
	}
	return out, nil
}

// Grade makes the runs and judges them.
func Grade(ctx context.Context, o Options) (*reports.Report, error) {
	if strings.TrimSpace(o.Command) == "" {
		return nil, errors.New("no client command")
	}
	if o.Scale <= 0 {
		o.Scale = 1
	}
	if o.Jobs <= 0 {
		o.Jobs = 4
	}
	plan, err := Plan(o)
	if err != nil {
		return nil, err
	}
	if len(plan) == 0 {
		return nil, errors.New("no scenario runs in the selected transports and versions")
	}
	start := time.Now()
	runs := make([]*clientsuite.Run, len(plan))
	sem := make(chan struct{}, o.Jobs)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		done int
	)
	for i, pl := range plan {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				runs[i] = &clientsuite.Run{Scenario: pl.Scenario, Transport: pl.Transport, Version: pl.Version, HarnessErr: ctx.Err()}
				return
			}
			defer func() { <-sem }()
			t0 := time.Now()
			var r *clientsuite.Run
			if pl.Transport == clientsuite.HTTP {
				r = runHTTP(ctx, &o, pl.Scenario, pl.Version)
			} else {
				r = runStdio(ctx, &o, pl.Scenario, pl.Version)
			}
			if r.HarnessErr == nil && ctx.Err() != nil {
				r.HarnessErr = fmt.Errorf("interrupted: %w", ctx.Err())
			}
			runs[i] = r
			if o.OnRun != nil {
				mu.Lock()
				done++
				o.OnRun(done, len(plan), r, time.Since(t0))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	rep := assemble(o, plan, runs)
	rep.StartedAt = start
	rep.Duration = float64(time.Since(start).Microseconds()) / 1000
	return rep, nil
}

// assemble judges every check on the runs of each transport and version.
func assemble(o Options, plan []Planned, runs []*clientsuite.Run) *reports.Report {
	byTV := map[string][]*clientsuite.Run{}
	var trs, vs []string
	for i, pl := range plan {
		k := pl.Transport + " " + pl.Version
		byTV[k] = append(byTV[k], runs[i])
		if !slices.Contains(trs, pl.Transport) {
			trs = append(trs, pl.Transport)
		}
		if !slices.Contains(vs, pl.Version) {
			vs = append(vs, pl.Version)
		}
	}
	slices.Sort(trs)
	slices.Sort(vs)
	slices.Reverse(vs)
	rep := &reports.Report{
		Schema: reports.SchemaV1,
		Tool:   reports.Tool{Name: "mcp-conform", Version: o.ToolVersion},
		Target: reports.Target{Name: "client: " + o.Command, Transport: strings.Join(trs, ","), ProtocolVersion: strings.Join(vs, ","),
			Command: o.Command, UnderTest: reports.UnderTestClient},
	}
	for _, c := range clientsuite.Catalog() {
		for _, tr := range trs {
			for _, v := range vs {
				rule, ok := c.Applies(v, tr)
				if !ok {
					continue
				}
				rc, ran := judge(c, rule, tr, v, byTV[tr+" "+v], o)
				if !ran {
					continue
				}
				rep.Checks = append(rep.Checks, rc)
			}
		}
	}
	rep.Summary = reports.Summarize(rep.Checks)
	return rep
}

// judge decides check c in (tr, v) from that target's runs. ran is false
// when the check's scenario was not selected there (--scenario).
func judge(c *clientsuite.Check, rule clientsuite.Rule, tr, v string, runs []*clientsuite.Run, o Options) (reports.Check, bool) {
	rc := reports.Check{ID: c.ID, Title: c.Title, Level: rule.Level, Spec: []string{rule.Spec}, Clause: rule.Clause,
		Transport: tr, ProtocolVersion: v, Clauses: c.Clauses()}
	var mine []*clientsuite.Run
	for _, r := range runs {
		if c.Hygiene() || r.Scenario.Name == c.Scenario {
			mine = append(mine, r)
		}
	}
	if len(mine) == 0 {
		if c.Hygiene() {
			return rc, false
		}
		sc, ok := clientsuite.LookupScenario(c.Scenario)
		if !ok {
			return rc, false
		}
		if applies, why := sc.Applies(v, tr); !applies {
			rc.Status, rc.Reason = reports.Skip, "scenario "+sc.Name+": "+why
			return rc, true
		}
		if len(o.Scenarios) > 0 && !slices.Contains(o.Scenarios, sc.Name) {
			return rc, false
		}
		rc.Status, rc.Reason = reports.Skip, "scenario "+sc.Name+" did not run"
		return rc, true
	}
	type verdict struct {
		f      clientsuite.Finding
		reason string
		run    *clientsuite.Run
	}
	var worst *verdict
	var skips []string
	held := 0
	rank := map[clientsuite.Finding]int{clientsuite.Broken: 3, clientsuite.Unjudgeable: 2, clientsuite.Held: 1, clientsuite.NotApplicable: 0}
	for _, r := range mine {
		f, reason := c.Judge(r)
		if c.Hygiene() {
			reason = r.Scenario.Name + ": " + reason
			if f == clientsuite.Unjudgeable {
				f = clientsuite.NotApplicable // a run that went wrong is its scenario's checks' ERROR, not hygiene's
			}
		}
		switch f {
		case clientsuite.NotApplicable:
			skips = append(skips, reason)
			continue
		case clientsuite.Held:
			held++
		}
		if worst == nil || rank[f] > rank[worst.f] {
			worst = &verdict{f, reason, r}
		}
	}
	if worst == nil {
		rc.Status = reports.Skip
		rc.Reason = strings.Join(firstN(skips, 3), "; ")
		if len(mine) == 1 {
			rc.Transcript = transcript(mine[0])
		}
		return rc, true
	}
	rc.Status = clientsuite.Status(worst.f, rule.Level)
	rc.Reason = worst.reason
	if c.Hygiene() && worst.f == clientsuite.Held {
		rc.Reason = fmt.Sprintf("held in %d run(s)", held)
	}
	rc.Transcript = transcript(worst.run)
	rc.DurationMs = runMs(worst.run)
	return rc, true
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], fmt.Sprintf("(and %d more)", len(s)-n))
	}
	return s
}

func runMs(r *clientsuite.Run) float64 {
	if len(r.Entries) == 0 {
		return 0
	}
	return float64(r.Entries[len(r.Entries)-1].At.Microseconds()) / 1000
}

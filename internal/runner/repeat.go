package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mcp-conform/mcp-conform/reports"
)

// runRepeated runs the whole plan Options.Repeat times, one run after
// another, each in child processes (a process runs the suites once), with
// the same seed, and joins the runs' reports with Repeated. Progress counts
// every check run of every repetition.
func (p *Plan) runRepeated(ctx context.Context, onResult func(done, total int, c reports.Check)) (*reports.Report, error) {
	n := p.o.Repeat
	var (
		reps []*reports.Report
		done int
	)
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		rep, err := p.runChildren(ctx, func(_, _ int, c reports.Check) {
			done++
			if onResult != nil {
				onResult(done, p.total*n, c)
			}
		})
		if err != nil {
			if len(reps) == 0 {
				return nil, err
			}
			// Report the runs that ended, and say why the rest is missing.
			return Repeated(reps), fmt.Errorf("run %d of %d: %w", i+1, n, err)
		}
		reps = append(reps, rep)
	}
	if len(reps) == 0 {
		return nil, errors.New("interrupted before the first run ended")
	}
	return Repeated(reps), nil
}

// Repeated joins the reports of repeated runs of one plan into one report:
// each check run (target, check, transport, version) once, with Runs
// holding its verdict in every run, in order. Its Status, Reason and
// Transcript are those of its worst run (ERROR, FAIL, WARN, SKIP, PASS,
// worst first: a flaky check gates CI as its worst verdict does); when the
// runs did not all give the same verdict it is Flaky, and its reason says
// so and which run it quotes. The rest (target, versions, retry classes,
// seed) is the first run's; Repeat is the number of runs.
func Repeated(runs []*reports.Report) *reports.Report {
	if len(runs) == 0 {
		return nil
	}
	out := *runs[0]
	out.Repeat = len(runs)
	type slot struct {
		idx   int
		worst int // run index of the worst verdict
	}
	var checks []reports.Check
	slots := map[string]*slot{}
	var keys []string
	for ri, rep := range runs {
		seen := map[string]int{}
		for _, c := range rep.Checks {
			base := strings.Join([]string{c.Target, c.ID, c.Transport, c.ProtocolVersion}, "\x00")
			k := fmt.Sprintf("%s\x00%d", base, seen[base])
			seen[base]++
			run := reports.CheckRun{Status: c.Status, Reason: c.Reason, DurationMs: c.DurationMs}
			s, ok := slots[k]
			if !ok {
				c.Runs = nil
				checks = append(checks, c)
				s = &slot{idx: len(checks) - 1, worst: ri}
				slots[k] = s
				keys = append(keys, k)
			} else {
				m := &checks[s.idx]
				m.DurationMs += c.DurationMs
				if reports.Worse(c.Status, m.Status) {
					m.Status, m.Reason, m.Transcript, m.Expected = c.Status, c.Reason, c.Transcript, c.Expected
					s.worst = ri
				}
			}
			checks[s.idx].Runs = append(checks[s.idx].Runs, run)
		}
	}
	for _, k := range keys {
		s := slots[k]
		c := &checks[s.idx]
		for _, r := range c.Runs[1:] {
			if r.Status != c.Runs[0].Status {
				c.Flaky = true
			}
		}
		if c.Flaky {
			var vs []string
			for _, r := range c.Runs {
				vs = append(vs, string(r.Status))
			}
			c.Reason = fmt.Sprintf("flaky: %s in %d runs; run %d: %s", strings.Join(vs, ", "), len(c.Runs), s.worst+1, c.Reason)
		}
	}
	out.Checks = checks
	out.Summary = reports.Summarize(checks)
	return &out
}

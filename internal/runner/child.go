package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcp-conform/mcp-conform/reports"
	"github.com/mcp-conform/mcp-conform/suites"
)

// partEnv marks a child run of a plan of several targets. Its value is
// "INDEX@VERSION": the index of the child's target in the configuration
// both processes build from the same command line, and the version it is
// forced to (empty: none). The child keeps only that target (checks that do
// not apply to it are left out, as in the whole run), reports each result
// on stderr as a progress line (progressMarker) for its parent, and skips
// what the parent already did (role validation, version probes, slicing).
// "INDEX@VERSION@alone" is a slice of a plan of that one part: the child
// runs as the whole run would, the checks of other transports and versions
// included (they SKIP with the reason).
const partEnv = "MCP_CONFORM_PART"

// stateEnv names the file a child of a split target writes its
// suites.PartState to (JSON), for its parent to join the target's parts.
const stateEnv = "MCP_CONFORM_PART_STATE"

// progressMarker starts a child's progress line: the marker, then the
// check's result as JSON.
const progressMarker = "\x1emcp-conform-progress "

// planChild plans the one target of a child run, when this process is one.
func (p *Plan) planChild() error {
	v, ok := os.LookupEnv(partEnv)
	if !ok {
		return nil
	}
	idx, spec, _ := strings.Cut(v, "@")
	spec, alone := strings.CutSuffix(spec, "@alone")
	i, err := strconv.Atoi(idx)
	if err != nil || i < 0 || i >= len(p.o.Config.Targets) {
		return fmt.Errorf("%s=%q: no such target (the run has %d)", partEnv, v, len(p.o.Config.Targets))
	}
	p.child = true
	childGC()
	p.parts = []part{{base: i, spec: spec}}
	p.cfg = p.config()
	p.cfg.Part = !alone
	p.total, err = suites.Planned(p.cfg, p.runOptions())
	return err
}

// progressWriter is the OnResult of a child run: one marker line per result.
func progressWriter(w io.Writer) func(done, total int, c reports.Check) {
	var mu sync.Mutex
	return func(_, _ int, c reports.Check) {
		c.Transcript = nil
		b, err := json.Marshal(c)
		if err != nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "%s%s\n", progressMarker, b)
	}
}

// runChildren runs each of the plan's targets in its own child process
// (a target whose server is started per check may be split over several:
// pieces), at most Jobs at a time, relays their progress as one count, and
// merges their reports. SIGINT and SIGTERM are passed on to the children,
// which end their runs and write what they have.
func (p *Plan) runChildren(ctx context.Context, onResult func(done, total int, c reports.Check)) (*reports.Report, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("split the run by target: %w", err)
	}
	dir, err := os.MkdirTemp("", "mcp-conform-parts-*")
	if err != nil {
		return nil, fmt.Errorf("split the run by target: %w", err)
	}
	defer os.RemoveAll(dir)
	jobs := p.jobs()
	pcs, err := p.pieces(jobs)
	if err != nil {
		return nil, fmt.Errorf("split the run by target: %w", err)
	}
	n := len(pcs)
	jobs = min(jobs, n)
	budget := p.o.Run.Budget
	if budget <= 0 {
		budget = 15 * time.Minute
	}
	// A child that outlives the budget (plus its grace to write a report)
	// is killed.
	ctx, cancel := context.WithTimeout(ctx, budget+30*time.Second)
	defer cancel()

	var (
		mu     sync.Mutex
		done   int
		procs  []*os.Process
		errs   = make([]error, n)
		paths  = make([]string, n)
		stderr = p.o.Stderr
	)
	if stderr == nil {
		stderr = io.Discard
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	finished := make(chan struct{})
	defer close(finished)
	go func() {
		for {
			select {
			case s := <-sigs:
				mu.Lock()
				for _, pr := range procs {
					_ = pr.Signal(s)
				}
				mu.Unlock()
			case <-finished:
				return
			}
		}
	}()

	sem := make(chan struct{}, jobs)
	var wg sync.WaitGroup
	for i, pc := range pcs {
		pt := p.parts[pc.part]
		t := p.cfg.Targets[pc.part]
		label := strings.TrimSpace(t.Transport + " " + t.Spec)
		if pc.slices > 1 {
			label += fmt.Sprintf(" %d/%d", pc.slice, pc.slices)
		}
		paths[i] = filepath.Join(dir, fmt.Sprintf("part-%d.json", i))
		args := append(append([]string(nil), p.o.ChildArgs...), "--json="+paths[i])
		if pc.filter != p.o.Run.LabelFilter {
			args = append(args, "--label-filter="+pc.filter)
		}
		c := exec.CommandContext(ctx, exe, args...)
		part := strconv.Itoa(pt.base) + "@" + pt.spec
		if len(p.parts) == 1 {
			part += "@alone"
		}
		c.Env = append(os.Environ(), partEnv+"="+part)
		if pc.slices > 1 {
			c.Env = append(c.Env, stateEnv+"="+paths[i]+".state")
		}
		c.Stdout = io.Discard
		c.WaitDelay = 5 * time.Second
		pipe, err := c.StderrPipe()
		if err != nil {
			return nil, fmt.Errorf("run for %s: %w", label, err)
		}
		// The slot is taken here, in order, so that the children start
		// longest first.
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			mu.Lock()
			if err := c.Start(); err != nil {
				mu.Unlock()
				errs[i] = fmt.Errorf("start the run for %s: %w", label, err)
				return
			}
			procs = append(procs, c.Process)
			mu.Unlock()
			sc := bufio.NewScanner(pipe)
			sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
			for sc.Scan() {
				line := sc.Text()
				if rest, ok := strings.CutPrefix(line, progressMarker); ok {
					var res reports.Check
					if json.Unmarshal([]byte(rest), &res) == nil {
						mu.Lock()
						done++
						if onResult != nil {
							onResult(done, p.total, res)
						}
						mu.Unlock()
						continue
					}
				}
				mu.Lock()
				fmt.Fprintf(stderr, "[%s] %s\n", label, line)
				mu.Unlock()
			}
			errs[i] = c.Wait()
		}()
	}
	wg.Wait()

	var parts []*reports.Report
	for i, pc := range pcs {
		rep, err := ReadReport(paths[i])
		if err != nil {
			// No report: the child could not run at all (its stderr,
			// relayed above, says why).
			return nil, fmt.Errorf("the run for target %d (%s) wrote no report (%v; %v)", pc.part, p.cfg.Targets[pc.part].Transport, errs[i], err)
		}
		parts = append(parts, rep)
	}
	if parts, err = p.joinSlices(pcs, parts, paths); err != nil {
		return nil, err
	}
	return Merge(parts)
}

// childGC makes a child's garbage collector run less often than the
// default (GOGC 400, under a 512 MiB soft limit) unless GOGC or
// GOMEMLIMIT says otherwise: a child lives for a few seconds of checks
// whose messages it parses, validates and keeps in transcripts, and the
// collections of its heap of tens of MiB took CPU that the children beside
// it lack on a machine of few cores (the full reference run: 0.91 of the
// CPU, its largest process 102 MiB instead of 78).
func childGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(400)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(512 << 20)
	}
}

package main

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
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcp-conform/mcp-conform/reports"
	"github.com/mcp-conform/mcp-conform/suites"
)

// shardEnv marks a child run of a run split by target (a transport in a
// protocol version); its value is the index of the child's target in the
// configuration both build from the same flags. The child keeps only that
// target (checks that do not apply to it are left out, as in the whole
// run), reports each result on stderr as a progress line (see
// progressMarker) for its parent, and skips what the parent already did.
const shardEnv = "MCP_CONFORM_SHARD"

// progressMarker starts a child's progress line: the marker, then the
// check's result as JSON.
const progressMarker = "\x1emcp-conform-progress "

// maxAutoJobs bounds the child processes of a split run when --jobs is 0.
const maxAutoJobs = 4

// isShard reports whether this process is a child of a split run.
func isShard() bool { return os.Getenv(shardEnv) != "" }

// shardCount returns how many child processes the run is split into (one
// per target), or 0 when it stays in this process: a lone target, --jobs 1,
// or a child itself.
func shardCount(f runFlags, cfg *suites.Config) int {
	if isShard() || f.jobs == 1 || len(cfg.Targets) < 2 {
		return 0
	}
	return len(cfg.Targets)
}

// shardTargets keeps, in a child run, the target of its index.
func shardTargets(cfg *suites.Config) error {
	v := os.Getenv(shardEnv)
	if v == "" {
		return nil
	}
	i, err := strconv.Atoi(v)
	if err != nil || i < 0 || i >= len(cfg.Targets) {
		return fmt.Errorf("%s=%q: no such target (the run has %d)", shardEnv, v, len(cfg.Targets))
	}
	cfg.Targets = []*suites.Manifest{cfg.Targets[i]}
	cfg.Part = true
	return nil
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

// shardSkipFlags are the flags a child run does not inherit: the parent
// writes the reports, applies the baseline, prints progress and the
// summary.
var shardSkipFlags = map[string]bool{
	"json": true, "junit": true, "html": true, "spec-base": true,
	"baseline": true, "strict-baseline": true, "quiet": true, "jobs": true, "color": true,
}

// childArgs rebuilds the run's command line for a child: every flag the
// user set, except those the parent keeps for itself.
func childArgs(cmd *cobra.Command) []string {
	args := []string{"run"}
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		if shardSkipFlags[fl.Name] {
			return
		}
		if sv, ok := fl.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				args = append(args, "--"+fl.Name+"="+v)
			}
			return
		}
		args = append(args, "--"+fl.Name+"="+fl.Value.String())
	})
	return args
}

// runSharded runs each of the run's n targets in its own child process, at
// most --jobs at a time, relays their progress as one count, and merges
// their reports. SIGINT and SIGTERM are passed on to the children, which
// end their runs and write what they have.
func runSharded(ctx context.Context, cmd *cobra.Command, f runFlags, cfg *suites.Config, n, total int, onResult func(done, total int, c reports.Check)) (*reports.Report, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("split the run by version: %w", err)
	}
	dir, err := os.MkdirTemp("", "mcp-conform-shards-*")
	if err != nil {
		return nil, fmt.Errorf("split the run by version: %w", err)
	}
	defer os.RemoveAll(dir)
	jobs := f.jobs
	if jobs <= 0 {
		jobs = maxAutoJobs
	}
	jobs = min(jobs, n)
	started := time.Now()
	// A child that outlives the budget (plus its grace to write a report)
	// is killed.
	ctx, cancel := context.WithTimeout(ctx, f.budget+30*time.Second)
	defer cancel()

	var (
		mu     sync.Mutex
		done   int
		procs  []*os.Process
		errs   = make([]error, n)
		paths  = make([]string, n)
		stderr = cmd.ErrOrStderr()
	)
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
				for _, p := range procs {
					_ = p.Signal(s)
				}
				mu.Unlock()
			case <-finished:
				return
			}
		}
	}()

	sem := make(chan struct{}, jobs)
	var wg sync.WaitGroup
	for i := range n {
		t := cfg.Targets[i]
		v := t.Transport
		if t.Spec != "" {
			v += " " + t.Spec
		}
		paths[i] = filepath.Join(dir, fmt.Sprintf("part-%d.json", i))
		args := append(childArgs(cmd), "--json="+paths[i])
		c := exec.CommandContext(ctx, exe, args...)
		c.Env = append(os.Environ(), shardEnv+"="+strconv.Itoa(i))
		c.Stdout = io.Discard
		c.WaitDelay = 5 * time.Second
		pipe, err := c.StderrPipe()
		if err != nil {
			return nil, fmt.Errorf("run for %s: %w", v, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			mu.Lock()
			if err := c.Start(); err != nil {
				mu.Unlock()
				errs[i] = fmt.Errorf("start the run for %s: %w", v, err)
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
							onResult(done, total, res)
						}
						mu.Unlock()
						continue
					}
				}
				mu.Lock()
				fmt.Fprintf(stderr, "[%s] %s\n", v, line)
				mu.Unlock()
			}
			errs[i] = c.Wait()
		}()
	}
	wg.Wait()

	var parts []*reports.Report
	for i := range n {
		fh, err := os.Open(paths[i])
		if err != nil {
			// No report: the child could not run at all (its stderr,
			// relayed above, says why).
			return nil, fmt.Errorf("the run for target %d (%s) wrote no report (%v)", i, cfg.Targets[i].Transport, errs[i])
		}
		rep, err := reports.ReadJSON(fh)
		_ = fh.Close()
		if err != nil {
			return nil, fmt.Errorf("report of the run for target %d: %w", i, err)
		}
		parts = append(parts, rep)
	}
	return suites.MergeReports(cfg, version, started, parts), nil
}

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
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcp-conform/mcp-conform/reports"
	"github.com/mcp-conform/mcp-conform/suites"
)

// shardEnv marks a child run of a --spec all run split by protocol version;
// its value is the child's version. The child keeps only the targets of
// that version (so a check outside it is not planned, as in the whole
// run), reports each result on stderr as a progress line (see
// progressMarker) for its parent, and skips what the parent already did.
const shardEnv = "MCP_CONFORM_SHARD"

// progressMarker starts a child's progress line: the marker, then the
// check's result as JSON.
const progressMarker = "\x1emcp-conform-progress "

// isShard reports whether this process is a child of a split run.
func isShard() bool { return os.Getenv(shardEnv) != "" }

// shardVersions returns the protocol versions to run in parallel child
// processes, or nil when the run stays in this process: only --spec all
// with more than one version splits, and --jobs 1 keeps it whole.
func shardVersions(f runFlags, cfg *suites.Config) []string {
	if isShard() || f.jobs == 1 || f.spec != suites.AllVersions {
		return nil
	}
	if vs := cfg.Versions(); len(vs) > 1 {
		return vs
	}
	return nil
}

// shardTargets keeps, in a child run, the targets of its version.
func shardTargets(cfg *suites.Config) {
	v := os.Getenv(shardEnv)
	if v == "" || cfg.Spec != suites.AllVersions {
		return
	}
	var keep []*suites.Manifest
	for _, t := range cfg.Targets {
		if t.Spec == v {
			keep = append(keep, t)
		}
	}
	cfg.Targets = keep
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
// summary, and gives each child its own version.
var shardSkipFlags = map[string]bool{
	"json": true, "junit": true, "html": true, "spec-base": true, "spec": true,
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

// runSharded runs each protocol version of a --spec all run in its own child
// process, at most jobs at a time, relays their progress as one count, and
// merges their reports. SIGINT and SIGTERM are passed on to the children,
// which end their runs and write what they have.
func runSharded(ctx context.Context, cmd *cobra.Command, f runFlags, cfg *suites.Config, versions []string, total int, onResult func(done, total int, c reports.Check)) (*reports.Report, error) {
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
	if jobs <= 0 || jobs > len(versions) {
		jobs = len(versions)
	}
	started := time.Now()
	// A child that outlives the budget (plus its grace to write a report)
	// is killed.
	ctx, cancel := context.WithTimeout(ctx, f.budget+30*time.Second)
	defer cancel()

	var (
		mu       sync.Mutex
		done     int
		procs    []*os.Process
		children = make([]*exec.Cmd, len(versions))
		errs     = make([]error, len(versions))
		paths    = make([]string, len(versions))
		stderr   = cmd.ErrOrStderr()
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
	for i, v := range versions {
		paths[i] = filepath.Join(dir, v+".json")
		args := append(childArgs(cmd), "--spec="+suites.AllVersions, "--json="+paths[i])
		c := exec.CommandContext(ctx, exe, args...)
		c.Env = append(os.Environ(), shardEnv+"="+v)
		c.Stdout = io.Discard
		c.WaitDelay = 5 * time.Second
		pipe, err := c.StderrPipe()
		if err != nil {
			return nil, fmt.Errorf("run for %s: %w", v, err)
		}
		children[i] = c
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
	for i, v := range versions {
		fh, err := os.Open(paths[i])
		if err != nil {
			// No report: the child could not run at all (its stderr,
			// relayed above, says why).
			return nil, fmt.Errorf("the run for %s wrote no report (%v)", v, errs[i])
		}
		rep, err := reports.ReadJSON(fh)
		_ = fh.Close()
		if err != nil {
			return nil, fmt.Errorf("report of the run for %s: %w", v, err)
		}
		parts = append(parts, rep)
	}
	return suites.MergeReports(cfg, version, started, parts), nil
}

package main

import (
	"flag"
	"fmt"
	"os"
	"sync"
	"testing"
)

// runSlots is the package's one budget for the subprocess runs its tests
// keep going at once, so that the long tests overlap without swamping the
// machine: the mutant matrix (startRuns), the real targets
// (runRealJobs, sequential: alone on it) and every test in limitParallel
// or limitFast draw on it besides their own bounds. It holds fastRuns units, as many as the
// mutant matrix alone kept going before the tests overlapped: a run of
// the binary built without -race takes one, a test of the race-built
// binary raceRunWeight. So the machine carries at most the load of the
// matrix's phase, which used to run alone, while the race-built tests
// fill the time it left idle.
var runSlots = make(chan struct{}, fastRuns)

// runSlotsTaking lets one taker of runSlots take its units at a time.
var runSlotsTaking sync.Mutex

// raceRunWeight is the share of runSlots a test of the race-built binary
// takes: the race detector costs a run several times the CPU, and such a
// run may check several targets at once.
const raceRunWeight = 2

// takeRunSlots waits for n units of runSlots and returns their release.
// One taker at a time (runSlotsTaking) takes its units, so two takers of
// several cannot each hold a part of the other's and wait forever: every
// holder ends within its limit without waiting for more.
func takeRunSlots(n int) func() {
	runSlotsTaking.Lock()
	for range n {
		runSlots <- struct{}{}
	}
	runSlotsTaking.Unlock()
	return func() {
		for range n {
			<-runSlots
		}
	}
}

// raiseParallel lifts go test's -parallel (GOMAXPROCS by default) for this
// package, unless the command line set it: its parallel tests wait on
// subprocesses, and their own bounds (parallelism, runSlots) keep the
// machine's load, while -parallel 2 would hold a long test (the mutant
// matrix, the hostile targets) and the others to two at a time, one after
// the other. A test that calls t.Parallel here takes limitParallel's or
// limitFast's slot, or bounds its runs by runSlots.
func raiseParallel() {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if set {
		return
	}
	if err := flag.Set("test.parallel", "64"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}

// limitQuiet is limitParallel for a test that times a client to a few
// hundred milliseconds (client mode against the reliable driver): it takes
// the whole of runSlots, so that it runs beside no other run of the
// binary, as it did when the long tests did not overlap (a run of it
// beside the mutant matrix, on a machine at load 40, ERRORed
// CLIENT-RETRY-SAME-KEY: "the proxy did not lose the first call's answer").
func limitQuiet(t *testing.T) {
	t.Parallel()
	parallelism <- struct{}{}
	release := takeRunSlots(cap(runSlots))
	t.Cleanup(func() {
		release()
		<-parallelism
	})
}

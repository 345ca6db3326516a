package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// leakMarkEnv is set, with a value unique to one run, in the environment of
// a CLI run: every process the run starts inherits it, so a process that
// still carries it after the run is one the harness failed to reap.
const leakMarkEnv = "MCP_CONFORM_LEAK_MARK"

// TestRunsReapChildrenAndRemoveTempFiles runs the CLI against the built-in
// targets (stdio and HTTP server processes), against a server that hangs
// forever, one that crashes mid-run, and a built-in server that crashes on
// an 8 MiB message, each with its own TMPDIR and a marker in its environment: after
// each run no process carrying the marker may be alive, and TMPDIR must be
// empty.
func TestRunsReapChildrenAndRemoveTempFiles(t *testing.T) {
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("no /proc (not Linux): cannot look for leftover processes")
	}
	for _, tc := range []struct {
		name string
		args []string
		py   bool
	}{
		{"reference", []string{"run", "-q", "--focus", "CANCEL-STDIO-SUPPRESS|ROBUST-PARSE-ERROR|SSE-HEADERS|SESSION-DELETE", "--spec", "2025-11-25"}, false},
		{"hang", append([]string{"run", "-q", "--focus", "CANCEL-STDIO-SUPPRESS", "--manifest", testdataFile(t, "hostile-hang.yaml")}, hostileTimeouts...), true},
		{"crash", append([]string{"run", "-q", "--focus", "CANCEL-STDIO-SUPPRESS|ROBUST-PARSE-ERROR", "--manifest", testdataFile(t, "hostile-crash.yaml")}, hostileTimeouts...), true},
		{"mutant-crash-http", []string{"run", "-q", "--mutant", "crash-on-oversize", "--focus", "ROBUST-OVERSIZE"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.py {
				needPython(t)
			}
			limitParallel(t)
			tmp := t.TempDir()
			mark := strings.ReplaceAll(t.Name(), "/", "-") + "-" + time.Now().Format("150405.000000000")
			r := mustRunBin(t, binary, runLimit, []string{"TMPDIR=" + tmp, leakMarkEnv + "=" + mark},
				append(tc.args, "--json", filepath.Join(t.TempDir(), "report.json"))...)
			// The run has returned: its children must be gone. Give the
			// kernel a moment to finish tearing down exiting processes.
			deadline := time.Now().Add(3 * time.Second)
			var alive []string
			for {
				alive = processesMarked(mark)
				if len(alive) == 0 || time.Now().After(deadline) {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			if len(alive) > 0 {
				t.Errorf("processes of the run still alive after it returned: %s\n%s%s", strings.Join(alive, "; "), r.stdout, r.stderr)
			}
			entries, err := os.ReadDir(tmp)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				t.Errorf("left in TMPDIR: %s", e.Name())
			}
		})
	}
}

// processesMarked lists "pid cmdline" of the live processes whose
// environment holds leakMarkEnv=mark.
func processesMarked(mark string) []string {
	want := []byte(leakMarkEnv + "=" + mark + "\x00")
	dirs, _ := os.ReadDir("/proc")
	var out []string
	for _, d := range dirs {
		if d.Name()[0] < '0' || d.Name()[0] > '9' {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", d.Name(), "environ"))
		if err != nil || !bytes.Contains(append(env, 0), want) {
			continue
		}
		if st, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat")); err == nil && isZombie(st) {
			continue // exited; its parent (not ours, once we returned) reaps it
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		out = append(out, d.Name()+" "+strings.ReplaceAll(string(bytes.TrimRight(cmdline, "\x00")), "\x00", " "))
	}
	return out
}

// isZombie reads the state field of /proc/PID/stat.
func isZombie(stat []byte) bool {
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

// TestProcessesMarkedSeesALeftover shows the leak detector's teeth: a
// process carrying the marker is found while it lives, and not after.
func TestProcessesMarkedSeesALeftover(t *testing.T) {
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("no /proc")
	}
	mark := "teeth-" + time.Now().Format("150405.000000000")
	cmd := exec.Command("sleep", "30")
	cmd.Env = append(os.Environ(), leakMarkEnv+"="+mark)
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep command: ", err)
	}
	// Between fork and exec the child still shows the test's own
	// environment and command line: wait (bounded) until it is the sleep.
	var found []string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		found = processesMarked(mark)
		if len(found) == 1 && strings.Contains(found[0], "sleep 30") || time.Now().After(deadline) {
			break
		}
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if len(found) != 1 || !strings.Contains(found[0], "sleep 30") {
		t.Errorf("found %q, want the sleep process", found)
	}
	if left := processesMarked(mark); len(left) != 0 {
		t.Errorf("after it was killed and reaped: %q", left)
	}
}

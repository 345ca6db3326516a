//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// proc is a process the comparison started, in its own process group.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
}

// start runs argv in a new process group with stderr to errFile and
// returns it with the first line it printed on stdout (a URL), or an error
// after timeout.
func start(name string, argv []string, env []string, errFile string, timeout time.Duration) (*proc, string, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	ef, err := os.Create(errFile)
	if err != nil {
		return nil, "", err
	}
	cmd.Stderr = ef
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("%s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	lines := make(chan string, 1)
	go func() {
		br := bufio.NewReader(out)
		l, _ := br.ReadString('\n')
		lines <- strings.TrimSpace(l)
		_, _ = io.Copy(io.Discard, br)
		_ = cmd.Wait()
		_ = ef.Close()
		close(p.done)
	}()
	select {
	case l := <-lines:
		return p, l, nil
	case <-time.After(timeout):
		p.stop()
		return nil, "", fmt.Errorf("%s printed nothing within %s (see %s)", name, timeout, errFile)
	}
}

// stop ends the process group: SIGTERM, then SIGKILL after a second.
func (p *proc) stop() {
	if p == nil {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// pid is the process's id (its group's too).
func (p *proc) pid() int { return p.cmd.Process.Pid }

// cpuTime is the CPU time (user + system, every thread) a process has used
// so far: the sum of its threads' run time in /proc/PID/task/*/schedstat
// (nanoseconds), or, where that is missing, utime + stime of
// /proc/PID/stat (clock ticks of 10 ms). Process CPU time, unlike wall
// time, hardly moves with the machine's load.
func cpuTime(pid int) (time.Duration, error) {
	if d, err := schedTime(pid); err == nil {
		return d, nil
	}
	return statTime(pid)
}

func schedTime(pid int) (time.Duration, error) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return 0, err
	}
	var sum int64
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
		if err != nil {
			continue // the thread ended meanwhile
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			return 0, errors.New("empty schedstat")
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, err
		}
		sum += ns
	}
	return time.Duration(sum), nil
}

// procStats are counters of a process for the diagnostics (-diag): user
// and system time in clock ticks, context switches of all its threads.
type procStats struct{ utime, stime, vcsw, ivcsw int64 }

func readProcStats(pid int) procStats {
	var ps procStats
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i >= 0 {
			f := strings.Fields(s[i+1:])
			if len(f) >= 13 {
				ps.utime, _ = strconv.ParseInt(f[11], 10, 64)
				ps.stime, _ = strconv.ParseInt(f[12], 10, 64)
			}
		}
	}
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/status", pid, t.Name()))
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			k, v, ok := strings.Cut(l, ":")
			if !ok {
				continue
			}
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			switch k {
			case "voluntary_ctxt_switches":
				ps.vcsw += n
			case "nonvoluntary_ctxt_switches":
				ps.ivcsw += n
			}
		}
	}
	return ps
}

func (a procStats) sub(b procStats) procStats {
	return procStats{a.utime - b.utime, a.stime - b.stime, a.vcsw - b.vcsw, a.ivcsw - b.ivcsw}
}

func statTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, errors.New("unexpected /proc stat format")
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, errors.New("unexpected /proc stat format")
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("unexpected /proc stat format")
	}
	const clkTck = 100 // sysconf(_SC_CLK_TCK) on Linux
	return time.Duration(ut+st) * time.Second / clkTck, nil
}

// freePort returns a loopback port nothing listens on (for toxiproxy's
// API, which takes a port number, not :0).
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// startToxiproxy starts toxiproxy's server with its API on a free loopback
// port and one proxy (no toxics) from 127.0.0.1:0 to upstream, and returns
// the proxy's listen address.
func startToxiproxy(bin, upstream, dir string) (*proc, string, error) {
	port, err := freePort()
	if err != nil {
		return nil, "", err
	}
	cfg := filepath.Join(dir, "toxiproxy.json")
	spec := []map[string]any{{"name": "mcp", "listen": "127.0.0.1:0", "upstream": upstream, "enabled": true}}
	b, _ := json.Marshal(spec)
	if err := os.WriteFile(cfg, b, 0o644); err != nil {
		return nil, "", err
	}
	// Its log goes to stdout (zerolog); warn keeps per-connection lines
	// out of the measurement. It prints no URL: its API tells when it is up.
	p, err := startQuiet("toxiproxy", []string{bin, "-host", "127.0.0.1", "-port", strconv.Itoa(port), "-config", cfg},
		[]string{"LOG_LEVEL=warn"}, filepath.Join(dir, "toxiproxy.log"))
	if err != nil {
		return nil, "", err
	}
	api := fmt.Sprintf("http://127.0.0.1:%d/proxies", port)
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(api)
		if err == nil {
			var got map[string]struct {
				Listen  string `json:"listen"`
				Enabled bool   `json:"enabled"`
			}
			derr := json.NewDecoder(resp.Body).Decode(&got)
			resp.Body.Close()
			if derr == nil && got["mcp"].Enabled && !strings.HasSuffix(got["mcp"].Listen, ":0") {
				return p, got["mcp"].Listen, nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.stop()
	return nil, "", errors.New("toxiproxy's proxy did not come up within 15 s")
}

// startQuiet starts a process that prints nothing on stdout.
func startQuiet(name string, argv []string, env []string, errFile string) (*proc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	ef, err := os.Create(errFile)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = ef, ef
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); _ = ef.Close(); close(p.done) }()
	return p, nil
}

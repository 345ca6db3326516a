package faultproxy

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// ProcessOptions configures a server process started for an HTTP target.
type ProcessOptions struct {
	Command []string
	Env     []string
	Dir     string
	// Transcript receives the process's stdout and stderr lines (as
	// stderr entries: neither carries MCP traffic on HTTP) and its events.
	Transcript *Transcript
	// Tee, when set, also receives those lines.
	Tee io.Writer
}

// Process is a server process in its own process group: signals reach
// every process it started, and Close reaps them all.
type Process struct {
	cmd    *exec.Cmd
	pgid   int
	tr     *Transcript
	exited chan struct{}
	err    error
	lines  chan struct{}
}

// StartProcess starts a server process.
func StartProcess(opts ProcessOptions) (*Process, error) {
	if len(opts.Command) == 0 {
		return nil, errors.New("faultproxy: empty server command")
	}
	tr := opts.Transcript
	if tr == nil {
		tr = NewTranscript(nil)
	}
	cmd := exec.Command(opts.Command[0], opts.Command[1:]...)
	cmd.Env = append(os.Environ(), opts.Env...)
	cmd.Dir = opts.Dir
	setProcessGroup(cmd)
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("faultproxy: output pipe: %w", err)
	}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		_ = r.Close()
		_ = w.Close()
		return nil, fmt.Errorf("faultproxy: start %q: %w", strings.Join(opts.Command, " "), err)
	}
	_ = w.Close()
	p := &Process{cmd: cmd, pgid: cmd.Process.Pid, tr: tr, exited: make(chan struct{}), lines: make(chan struct{})}
	tr.Add(Entry{Kind: EntryProcess, Text: fmt.Sprintf("started pid %d: %s", p.pgid, strings.Join(opts.Command, " "))})
	go func() {
		defer close(p.lines)
		defer r.Close()
		br := bufio.NewReaderSize(r, 64<<10)
		for {
			line, err := br.ReadString('\n')
			if line != "" {
				if opts.Tee != nil {
					_, _ = io.WriteString(opts.Tee, line)
				}
				tr.Add(Entry{Kind: EntryStderr, Text: strings.TrimRight(line, "\r\n")})
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		p.err = cmd.Wait()
		status := "exited with status 0"
		if p.err != nil {
			status = "exited: " + p.err.Error()
		}
		tr.Add(Entry{Kind: EntryProcess, Text: status})
		close(p.exited)
	}()
	return p, nil
}

// Pid is the process (and process group) id.
func (p *Process) Pid() int { return p.pgid }

// Exited is closed when the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// ExitErr is the exit status, valid once Exited is closed.
func (p *Process) ExitErr() error {
	<-p.exited
	return p.err
}

// Signal sends sig to the process group.
func (p *Process) Signal(sig Signal) error {
	return signalGroup(p.cmd.Process, p.pgid, sig)
}

// Close stops the process: SIGTERM, then SIGKILL after grace, and reaps the
// whole group. Bounded by about grace + 5 s.
func (p *Process) Close(grace time.Duration) {
	if grace <= 0 {
		grace = 2 * time.Second
	}
	_ = p.Signal(sigCont)
	_ = p.Signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	select {
	case <-p.exited:
	case <-t.C:
		_ = p.Signal(syscall.SIGKILL)
		select {
		case <-p.exited:
		case <-time.After(5 * time.Second):
		}
	}
	t.Stop()
	_ = p.Signal(syscall.SIGKILL)
	select {
	case <-p.lines:
	case <-time.After(time.Second):
	}
}

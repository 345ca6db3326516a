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

// Signal is a signal sent to the server's process group.
type Signal = syscall.Signal

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
// every process it started, and Close reaps them all. The stdio link runs
// its server as one too, with its stdin and stdout given to the link.
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
	p, _, err := startProcess(opts, false)
	return p, err
}

// stdioEnds are the proxy's ends of a stdio server's stdin and stdout.
type stdioEnds struct {
	stdin  *os.File // the proxy writes here
	stdout *os.File // the proxy reads here
}

// startProcess starts opts.Command in its own process group. Without
// stdio its stdout and stderr share one recorded pipe; with stdio its stdin
// and stdout are pipes whose ends it returns (they carry MCP traffic) and
// only its stderr is recorded.
func startProcess(opts ProcessOptions, stdio bool) (*Process, *stdioEnds, error) {
	if len(opts.Command) == 0 {
		return nil, nil, errors.New("faultproxy: empty server command")
	}
	tr := opts.Transcript
	if tr == nil {
		tr = NewTranscript(nil)
	}
	cmd := exec.Command(opts.Command[0], opts.Command[1:]...)
	cmd.Env = append(os.Environ(), opts.Env...)
	cmd.Dir = opts.Dir
	ownProcessGroup(cmd)

	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			_ = f.Close()
		}
	}
	pipe := func(what string) (*os.File, *os.File, error) {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("faultproxy: %s pipe: %w", what, err)
		}
		files = append(files, r, w)
		return r, w, nil
	}
	var ends *stdioEnds
	var outR *os.File
	var childEnds []*os.File // the child's copies, closed here once it has them
	if stdio {
		inR, inW, err := pipe("stdin")
		if err != nil {
			return nil, nil, err
		}
		stdoutR, stdoutW, err := pipe("stdout")
		if err != nil {
			return nil, nil, err
		}
		errR, errW, err := pipe("stderr")
		if err != nil {
			return nil, nil, err
		}
		cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, stdoutW, errW
		ends, outR, childEnds = &stdioEnds{stdin: inW, stdout: stdoutR}, errR, []*os.File{inR, stdoutW, errW}
	} else {
		r, w, err := pipe("output")
		if err != nil {
			return nil, nil, err
		}
		cmd.Stdout, cmd.Stderr = w, w
		outR, childEnds = r, []*os.File{w}
	}
	if err := cmd.Start(); err != nil {
		closeAll()
		return nil, nil, fmt.Errorf("faultproxy: start %q: %w", strings.Join(opts.Command, " "), err)
	}
	// The child has its copies; ours of its ends must go so EOF propagates.
	for _, f := range childEnds {
		_ = f.Close()
	}
	p := &Process{cmd: cmd, pgid: cmd.Process.Pid, tr: tr, exited: make(chan struct{}), lines: make(chan struct{})}
	tr.Add(Entry{Kind: EntryProcess, Text: fmt.Sprintf("started pid %d: %s", p.pgid, strings.Join(opts.Command, " "))})
	go p.readLines(outR, opts.Tee)
	go p.wait()
	return p, ends, nil
}

// readLines records each line r carries as a stderr entry.
func (p *Process) readLines(r *os.File, tee io.Writer) {
	defer close(p.lines)
	defer r.Close()
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			if tee != nil {
				_, _ = io.WriteString(tee, line)
			}
			p.tr.Add(Entry{Kind: EntryStderr, Text: strings.TrimRight(line, "\r\n")})
		}
		if err != nil {
			return
		}
	}
}

// wait reaps the process and records how it ended.
func (p *Process) wait() {
	p.err = p.cmd.Wait()
	status := "exited with status 0"
	if p.err != nil {
		status = "exited: " + p.err.Error()
	}
	p.tr.Add(Entry{Kind: EntryProcess, Text: status})
	close(p.exited)
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
func (p *Process) Signal(sig Signal) error { return signalGroup(p.cmd.Process, p.pgid, sig) }

// Close stops the process: SIGTERM, then SIGKILL after grace, and reaps the
// whole group. Bounded by about grace + 5 s.
func (p *Process) Close(grace time.Duration) {
	if grace <= 0 {
		grace = 2 * time.Second
	}
	_ = p.Signal(sigCont)
	_ = p.Signal(sigTerm)
	if !p.waitExit(grace) {
		_ = p.Signal(sigKill)
		p.waitExit(5 * time.Second)
	}
	_ = p.Signal(sigKill)
	p.waitLines(time.Second)
}

// waitExit waits up to d for the process to exit and reports whether it did.
func (p *Process) waitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// waitLines waits up to d for the last recorded line.
func (p *Process) waitLines(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.lines:
	case <-t.C:
	}
}

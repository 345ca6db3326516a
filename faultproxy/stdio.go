package faultproxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// StdioOptions configures a proxied stdio server.
type StdioOptions struct {
	Options
	// Command is the server's argv.
	Command []string
	// Env is added to the proxy's own environment for the server.
	Env []string
	// Dir is the server's working directory.
	Dir string
	// Rules is the rule set to start with; nil means none. Install faults
	// here (or with Rules().Set) before the first message.
	Rules *Rules
	// ClientIn and ClientOut, when set, are the client side (for the proxy
	// command: its own stdin and stdout). When nil, Client returns an
	// in-process connection over OS pipes.
	ClientIn  io.Reader
	ClientOut io.WriteCloser
	// StderrTee, when set, also receives the server's stderr lines.
	StderrTee io.Writer
	// Grace is how long Close waits for the server to exit after its stdin
	// closed, before SIGTERM and then SIGKILL. Zero means 2 s.
	Grace time.Duration
}

// Stdio is a server child process behind a link. The process runs in its
// own process group, so crash and pause faults reach every process it
// started, and Close reaps them all.
type Stdio struct {
	*Link
	cmd    *exec.Cmd
	pgid   int
	client *clientConn
	grace  time.Duration

	stderrDone chan struct{}
	exited     chan struct{}
	exitErr    error
	closeOnce  sync.Once
}

// StartStdio starts the server command behind a new link.
func StartStdio(ctx context.Context, opts StdioOptions) (*Stdio, error) {
	if len(opts.Command) == 0 {
		return nil, errors.New("faultproxy: empty server command")
	}
	tr := NewTranscript(opts.TranscriptSink)
	cmd := exec.Command(opts.Command[0], opts.Command[1:]...)
	cmd.Env = append(os.Environ(), opts.Env...)
	cmd.Dir = opts.Dir
	setProcessGroup(cmd)

	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			_ = f.Close()
		}
	}
	pipe := func() (*os.File, *os.File, error) {
		r, w, err := os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	inR, inW, err := pipe()
	if err != nil {
		return nil, fmt.Errorf("faultproxy: stdin pipe: %w", err)
	}
	outR, outW, err := pipe()
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("faultproxy: stdout pipe: %w", err)
	}
	errR, errW, err := pipe()
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("faultproxy: stderr pipe: %w", err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		closeAll()
		return nil, fmt.Errorf("faultproxy: start %q: %w", strings.Join(opts.Command, " "), err)
	}
	// The child has its copies; ours of its ends must go so EOF propagates.
	_ = inR.Close()
	_ = outW.Close()
	_ = errW.Close()
	tr.Add(Entry{Kind: EntryProcess, Text: fmt.Sprintf("started pid %d: %s", cmd.Process.Pid, strings.Join(opts.Command, " "))})

	s := &Stdio{cmd: cmd, pgid: cmd.Process.Pid, grace: opts.Grace, stderrDone: make(chan struct{}), exited: make(chan struct{})}
	if s.grace <= 0 {
		s.grace = 2 * time.Second
	}
	go s.readStderr(tr, errR, opts.StderrTee)
	go s.wait(tr)

	clientIn, clientOut := opts.ClientIn, opts.ClientOut
	if clientIn == nil || clientOut == nil {
		cc, pin, pout, err := newClientConn()
		if err != nil {
			_ = s.signalGroup(syscall.SIGKILL)
			return nil, err
		}
		s.client = cc
		clientIn, clientOut = pin, pout
	}
	s.Link = newLink(ctx, clientIn, inW, outR, clientOut, tr, opts.Rules, opts.Options, s.signalGroup)
	return s, nil
}

// Client returns the in-process client end of the link: what the client
// writes goes to the server through the rules, what the server writes comes
// back through them. Nil when the options named an external client.
func (s *Stdio) Client() io.ReadWriteCloser {
	if s.client == nil {
		return nil
	}
	return s.client
}

// Pid returns the server's process id (also its process group id).
func (s *Stdio) Pid() int { return s.pgid }

// Exited is closed when the server process has exited.
func (s *Stdio) Exited() <-chan struct{} { return s.exited }

// ExitErr is the process's exit status, valid after Exited is closed.
func (s *Stdio) ExitErr() error {
	<-s.exited
	return s.exitErr
}

func (s *Stdio) signalGroup(sig Signal) error {
	return signalGroup(s.cmd.Process, s.pgid, sig)
}

func (s *Stdio) readStderr(tr *Transcript, r *os.File, tee io.Writer) {
	defer close(s.stderrDone)
	defer r.Close()
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			if tee != nil {
				_, _ = io.WriteString(tee, line)
			}
			tr.Add(Entry{Kind: EntryStderr, Text: strings.TrimRight(line, "\r\n")})
		}
		if err != nil {
			return
		}
	}
}

func (s *Stdio) wait(tr *Transcript) {
	err := s.cmd.Wait()
	s.exitErr = err
	status := "exited with status 0"
	if err != nil {
		status = "exited: " + err.Error()
	}
	tr.Add(Entry{Kind: EntryProcess, Text: status})
	close(s.exited)
}

// Close ends the session the way the stdio transport says a client should:
// close the server's stdin, wait for it to exit, then SIGTERM and SIGKILL
// its process group. It then stops every held message and waits for the
// link to drain. It is bounded by about 2×Grace and safe to call twice.
func (s *Stdio) Close() error {
	s.closeOnce.Do(func() {
		if s.client != nil {
			_ = s.client.closeWrite()
		}
		s.Link.out[ClientToServer].close()
		if !s.waitExit(s.grace) {
			_ = s.signalGroup(syscall.SIGTERM)
			if !s.waitExit(s.grace / 2) {
				_ = s.signalGroup(syscall.SIGKILL)
				s.waitExit(5 * time.Second)
			}
		}
		// Reap anything the server left behind in its group.
		_ = s.signalGroup(syscall.SIGKILL)
		s.Link.cancel()
		if s.client != nil {
			_ = s.client.Close()
		}
		s.Link.close(5 * time.Second)
		select {
		case <-s.stderrDone:
		case <-time.After(time.Second):
		}
	})
	return nil
}

func (s *Stdio) waitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.exited:
		return true
	case <-t.C:
		return false
	}
}

// clientConn is the in-process client end: it reads what the proxy sends
// to the client and writes what the client sends to the proxy.
type clientConn struct {
	r *os.File // proxy → client
	w *os.File // client → proxy
}

func newClientConn() (*clientConn, io.Reader, io.WriteCloser, error) {
	c2pR, c2pW, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("faultproxy: client pipe: %w", err)
	}
	p2cR, p2cW, err := os.Pipe()
	if err != nil {
		_ = c2pR.Close()
		_ = c2pW.Close()
		return nil, nil, nil, fmt.Errorf("faultproxy: client pipe: %w", err)
	}
	return &clientConn{r: p2cR, w: c2pW}, c2pR, p2cW, nil
}

func (c *clientConn) Read(p []byte) (int, error)  { return c.r.Read(p) }
func (c *clientConn) Write(p []byte) (int, error) { return c.w.Write(p) }
func (c *clientConn) closeWrite() error           { return c.w.Close() }

// Close closes both of the client's ends.
func (c *clientConn) Close() error {
	err1 := c.w.Close()
	err2 := c.r.Close()
	if err1 != nil && !errors.Is(err1, os.ErrClosed) {
		return err1
	}
	if err2 != nil && !errors.Is(err2, os.ErrClosed) {
		return err2
	}
	return nil
}

package faultproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
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
// own process group (it is a Process), so crash and pause faults reach
// every process it started, and Close reaps them all.
type Stdio struct {
	*Link
	proc      *Process
	client    *clientConn
	grace     time.Duration
	closeOnce sync.Once
}

// StartStdio starts the server command behind a new link.
func StartStdio(ctx context.Context, opts StdioOptions) (*Stdio, error) {
	tr := NewTranscript(opts.TranscriptSink)
	proc, ends, err := startProcess(ProcessOptions{Command: opts.Command, Env: opts.Env, Dir: opts.Dir, Transcript: tr, Tee: opts.StderrTee}, true)
	if err != nil {
		return nil, err
	}
	s := &Stdio{proc: proc, grace: opts.Grace}
	if s.grace <= 0 {
		s.grace = 2 * time.Second
	}
	clientIn, clientOut := opts.ClientIn, opts.ClientOut
	if clientIn == nil || clientOut == nil {
		cc, pin, pout, err := newClientConn()
		if err != nil {
			_ = proc.Signal(sigKill)
			return nil, err
		}
		s.client = cc
		clientIn, clientOut = pin, pout
	}
	s.Link = newLink(ctx, clientIn, ends.stdin, ends.stdout, clientOut, tr, opts.Rules, opts.Options, proc.Signal)
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
func (s *Stdio) Pid() int { return s.proc.Pid() }

// Exited is closed when the server process has exited.
func (s *Stdio) Exited() <-chan struct{} { return s.proc.Exited() }

// ExitErr is the process's exit status, valid after Exited is closed.
func (s *Stdio) ExitErr() error { return s.proc.ExitErr() }

// CloseInput closes the client's end of the link, as a client that ends a
// stdio session does, and returns at once: the link delivers what the
// client wrote before, then closes the server's stdin. It neither waits nor
// signals; Close still ends the process (and must still be called). It
// needs the in-process client end (Client() not nil).
func (s *Stdio) CloseInput() error {
	if s.client == nil {
		return errors.New("faultproxy: CloseInput needs the in-process client end")
	}
	return s.client.closeWrite()
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
		p := s.proc
		if !p.waitExit(s.grace) {
			_ = p.Signal(sigTerm)
			if !p.waitExit(s.grace / 2) {
				_ = p.Signal(sigKill)
				p.waitExit(5 * time.Second)
			}
		}
		// Reap anything the server left behind in its group.
		_ = p.Signal(sigKill)
		s.Link.cancel()
		if s.client != nil {
			_ = s.client.Close()
		}
		s.Link.close(5 * time.Second)
		p.waitLines(time.Second)
	})
	return nil
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

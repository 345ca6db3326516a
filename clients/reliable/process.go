package reliable

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// ServerOptions configures StartServer.
type ServerOptions struct {
	// Env is added to this process's environment for the server.
	Env []string
	// Stderr receives the server's stderr (nil: discarded).
	Stderr io.Writer
	// Grace is how long Close waits for the server to exit after closing
	// its stdin, and again after SIGTERM; zero means 2 s.
	Grace time.Duration
	// Tap, when set, records the requests written to the server.
	Tap *Tap
	// Defect: the server process acts on SigtermFirst.
	Defect Defect
}

// Server is a stdio MCP server the client started: its stdin and stdout
// are the connection (Stream), and Close shuts it down the way the
// specification says a client should (2025-11-25 lifecycle.mdx §Shutdown,
// stdio; 2026-07-28 stdio.mdx §Shutdown): first close its stdin, then wait
// for it to exit, then SIGTERM, then SIGKILL.
type Server struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	grace  time.Duration
	tap    *Tap
	defect Defect

	exited  chan struct{}
	waitErr error

	closeOnce sync.Once
	stdinOnce sync.Once
}

// StartServer starts argv as a stdio MCP server.
func StartServer(argv []string, opts ServerOptions) (*Server, error) {
	if len(argv) == 0 {
		return nil, errors.New("reliable: empty server command")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), opts.Env...)
	cmd.Stderr = opts.Stderr
	// Pipes of our own: exec's would be closed by Wait as soon as the
	// process exits, losing what the client has not read yet.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("reliable: server stdin: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		_, _ = inR.Close(), inW.Close()
		return nil, fmt.Errorf("reliable: server stdout: %w", err)
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	err = cmd.Start()
	_, _ = inR.Close(), outW.Close() // the child has its copies
	if err != nil {
		_, _ = inW.Close(), outR.Close()
		return nil, fmt.Errorf("reliable: start server %q: %w", argv[0], err)
	}
	stdin, stdout := io.WriteCloser(inW), io.ReadCloser(outR)
	s := &Server{cmd: cmd, stdin: stdin, stdout: stdout, grace: opts.Grace, tap: opts.Tap, defect: opts.Defect, exited: make(chan struct{})}
	if s.grace <= 0 {
		s.grace = 2 * time.Second
	}
	go func() {
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	return s, nil
}

// Stream is the connection to the server: reads come from its stdout,
// writes go to its stdin. Closing it closes stdin (the first step of the
// shutdown) and stops reading stdout.
func (s *Server) Stream() io.ReadWriteCloser { return serverStream{s} }

type serverStream struct{ s *Server }

func (st serverStream) Read(p []byte) (int, error) { return st.s.stdout.Read(p) }

func (st serverStream) Write(p []byte) (int, error) {
	if st.s.tap != nil {
		st.s.tap.record(p)
	}
	return st.s.stdin.Write(p)
}

func (st serverStream) Close() error {
	st.s.closeStdin()
	return st.s.stdout.Close()
}

func (s *Server) closeStdin() { s.stdinOnce.Do(func() { _ = s.stdin.Close() }) }

// Exited is closed when the server process has exited.
func (s *Server) Exited() <-chan struct{} { return s.exited }

// Pid is the server's process id.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// Close shuts the server down: closes its stdin, waits up to Grace for it
// to exit, then sends SIGTERM and waits up to Grace again, then SIGKILL. It
// returns the process's exit error (nil for a clean exit 0). Idempotent.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		if s.defect == SigtermFirst {
			// The defect: signal first, close stdin afterwards.
			_ = s.cmd.Process.Signal(syscall.SIGTERM)
			s.waitExit(s.grace)
			s.closeStdin()
		}
		s.closeStdin()
		if s.waitExit(s.grace) {
			return
		}
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		if s.waitExit(s.grace) {
			return
		}
		_ = s.cmd.Process.Kill()
		<-s.exited
	})
	<-s.exited
	return s.waitErr
}

func (s *Server) waitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.exited:
		return true
	case <-t.C:
		return false
	}
}

// Tap records the JSON-RPC requests a client wrote (stdio lines, HTTP POST
// bodies): method and id. It is safe for concurrent use.
type Tap struct {
	mu   sync.Mutex
	reqs []TappedRequest
	buf  []byte // a stdio line not yet complete
	// changed is closed at the next request recorded (made on demand).
	changed chan struct{}
}

// TappedRequest is one request the client sent.
type TappedRequest struct {
	Method string
	ID     jsonrpc.ID
	// Arrived is set once the request is known to have reached the
	// server side: at once on stdio (one ordered pipe), when the response
	// head came back on HTTP.
	Arrived bool
}

// record takes a write of newline-delimited messages (stdio: arrived).
func (t *Tap) record(p []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	for {
		i := bytes.IndexByte(t.buf, '\n')
		if i < 0 {
			return
		}
		t.addLocked(t.buf[:i], true)
		t.buf = t.buf[i+1:]
	}
}

// Body records one message about to be POSTed; it returns the index to
// pass to Arrived once the response head came back (-1: not a request).
func (t *Tap) Body(b []byte) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.addLocked(b, false)
}

// Arrived marks request i (from Body) as having reached the server side.
func (t *Tap) Arrived(i int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if i >= 0 && i < len(t.reqs) {
		t.reqs[i].Arrived = true
		t.wakeLocked()
	}
}

func (t *Tap) addLocked(b []byte, arrived bool) int {
	env := jsonrpc.Parse(b)
	if env.Kind != jsonrpc.Request {
		return -1
	}
	t.reqs = append(t.reqs, TappedRequest{Method: env.Method, ID: env.ID, Arrived: arrived})
	t.wakeLocked()
	return len(t.reqs) - 1
}

func (t *Tap) wakeLocked() {
	if t.changed != nil {
		close(t.changed)
		t.changed = nil
	}
}

// Wait returns once n requests with method have reached the server side
// (Arrived), or ctx ends.
func (t *Tap) Wait(ctx context.Context, method string, n int) error {
	for {
		t.mu.Lock()
		seen := 0
		for _, r := range t.reqs {
			if r.Method == method && r.Arrived {
				seen++
			}
		}
		if seen >= n {
			t.mu.Unlock()
			return nil
		}
		if t.changed == nil {
			t.changed = make(chan struct{})
		}
		ch := t.changed
		t.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Last returns the last request with method the client sent.
func (t *Tap) Last(method string) (TappedRequest, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := len(t.reqs) - 1; i >= 0; i-- {
		if t.reqs[i].Method == method {
			return t.reqs[i], true
		}
	}
	return TappedRequest{}, false
}

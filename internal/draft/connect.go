package draft

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/internal/auth"
	"github.com/mcp-conform/mcp-conform/protocol"
)

// Target says how to reach the server a draft is for.
type Target struct {
	// Command starts a stdio server: the argv to execute (already
	// resolved), in Dir, with Env added to this process's environment.
	Command []string
	Dir     string
	Env     []string
	// URL is the endpoint of a running server: Streamable HTTP (http://,
	// https://) or JSON-RPC over WebSocket (ws://, wss://).
	URL string
	// Header is sent with every HTTP request (and the WebSocket opening
	// handshake).
	Header http.Header
	// Credentials, when set, are added to every HTTP request (and the
	// WebSocket opening handshake): --header, --header-env, --oauth-….
	Credentials *auth.Credentials
	// Stderr, when set, also receives the stdio server's stderr.
	Stderr io.Writer
	// Spec forces a protocol version ("" negotiates the newest).
	Spec string
}

// Transport is the manifest's transport name for t.
func (t Target) Transport() string {
	switch {
	case len(t.Command) > 0:
		return "stdio"
	case strings.HasPrefix(t.URL, "ws://") || strings.HasPrefix(t.URL, "wss://"):
		return "websocket"
	default:
		return "http"
	}
}

// Session is a negotiated connection to the target.
type Session struct {
	// Conn is the wire-level connection.
	Conn clients.Conn
	// Info is what negotiation established.
	Info clients.Session
	// Transport is "stdio", "http" or "websocket".
	Transport string

	proc *process
}

// Connect starts (stdio) or dials (HTTP, WebSocket) the target and
// negotiates a protocol version; ctx bounds both. Close the Session.
func Connect(ctx context.Context, t Target) (*Session, error) {
	s := &Session{Transport: t.Transport()}
	switch s.Transport {
	case string(protocol.TransportStdio):
		p, err := startProcess(t)
		if err != nil {
			return nil, err
		}
		s.proc = p
		s.Conn = clients.NewWire(p, clients.WireOptions{})
	case string(protocol.TransportWebSocket):
		h := t.Header.Clone()
		if h == nil {
			h = http.Header{}
		}
		if err := t.Credentials.Apply(ctx, t.URL, h); err != nil {
			return nil, err
		}
		w, err := clients.DialWebSocket(ctx, t.URL, h, clients.WireOptions{})
		if err != nil {
			return nil, fmt.Errorf("dial %s: %w", t.URL, err)
		}
		s.Conn = w
	default:
		o := clients.HTTPOptions{Header: t.Header}
		if !t.Credentials.Empty() {
			o.Client = clients.NewHTTPClient()
			o.Client.Transport = t.Credentials.Transport(o.Client.Transport)
		}
		s.Conn = clients.NewHTTPWire(t.URL, o)
	}
	info, err := s.Conn.Negotiate(ctx, t.Spec)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("no answer within the start timeout: %w", err)
		}
		hint := s.exitHint() // before Close, which ends the process itself
		_ = s.Close()
		return nil, fmt.Errorf("negotiate with the server: %w%s", err, hint)
	}
	s.Info = info
	return s, nil
}

// Close ends the connection and, for a stdio server, the process: its
// stdin closes, then it is killed if it has not exited within 2 s.
func (s *Session) Close() error {
	err := s.Conn.Close()
	if s.proc != nil {
		s.proc.stop(2 * time.Second)
	}
	return err
}

// exitHint describes how a stdio server ended, with the tail of its
// stderr, when it did.
func (s *Session) exitHint() string {
	if s.proc == nil {
		return ""
	}
	return s.proc.hint()
}

// process is a stdio server: its stdin and stdout joined as the Wire's
// stream. Stopping it kills only the process itself (no process group:
// the draft runs on every OS); a server that leaves children behind is
// asked to stop by the end of its stdin first.
type process struct {
	cmd    *exec.Cmd
	stdin  *os.File
	stdout *os.File
	stderr *tail
	exited chan struct{}
	err    error
	once   sync.Once
}

func startProcess(t Target) (*process, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("stdin pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		_ = inR.Close()
		_ = inW.Close()
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	p := &process{stdin: inW, stdout: outR, stderr: &tail{tee: t.Stderr}, exited: make(chan struct{})}
	p.cmd = exec.Command(t.Command[0], t.Command[1:]...)
	p.cmd.Dir = t.Dir
	p.cmd.Env = append(os.Environ(), t.Env...)
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = inR, outW, p.stderr
	// A grandchild that keeps stderr open must not hold Wait forever.
	p.cmd.WaitDelay = time.Second
	err = p.cmd.Start()
	_ = inR.Close()
	_ = outW.Close()
	if err != nil {
		_ = inW.Close()
		_ = outR.Close()
		return nil, fmt.Errorf("start %q: %w", strings.Join(t.Command, " "), err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// Read reads the server's stdout.
func (p *process) Read(b []byte) (int, error) { return p.stdout.Read(b) }

// Write writes to the server's stdin.
func (p *process) Write(b []byte) (int, error) { return p.stdin.Write(b) }

// Close closes both pipes (the Wire calls it).
func (p *process) Close() error {
	return errors.Join(p.stdin.Close(), p.stdout.Close())
}

// stop closes the pipes and waits up to grace for the process to exit,
// then kills it.
func (p *process) stop(grace time.Duration) {
	p.once.Do(func() {
		_ = p.Close()
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-p.exited:
		case <-t.C:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
}

// hint is ", the server exited: STATUS; stderr: …" once it exited, or its
// stderr tail while it runs.
func (p *process) hint() string {
	var b strings.Builder
	select {
	case <-p.exited:
		status := "status 0"
		if p.err != nil {
			status = p.err.Error()
		}
		fmt.Fprintf(&b, " (the server exited: %s)", status)
	case <-time.After(200 * time.Millisecond):
		b.WriteString(" (the server is still running)")
	}
	if s := p.stderr.String(); s != "" {
		fmt.Fprintf(&b, "; its stderr ends: %s", s)
	}
	return b.String()
}

// tail keeps the last tailMax bytes written to it, and copies everything
// to tee when set.
type tail struct {
	mu  sync.Mutex
	buf []byte
	tee io.Writer
}

const tailMax = 2048

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > tailMax {
		t.buf = t.buf[len(t.buf)-tailMax:]
	}
	if t.tee != nil {
		_, _ = t.tee.Write(b)
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(bytes.ToValidUTF8(t.buf, []byte("?"))))
}

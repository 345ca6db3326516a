package clientgrade

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcp-conform/mcp-conform/clientsuite"
)

// maxOutput bounds what is kept of a client's stdout and of its stderr.
const maxOutput = 64 << 10

// killGrace is how long after SIGTERM a client's process group gets
// SIGKILL.
const killGrace = 2 * time.Second

// boundedBuffer keeps the first maxOutput bytes written to it.
type boundedBuffer struct {
	mu  sync.Mutex
	b   bytes.Buffer
	cut bool
}

func (w *boundedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if room := maxOutput - w.b.Len(); room > 0 {
		w.b.Write(p[:min(len(p), room)])
	}
	if w.b.Len() >= maxOutput {
		w.cut = true
	}
	return len(p), nil
}

func (w *boundedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cut {
		return w.b.String() + "\n[output cut at 64 KiB]"
	}
	return w.b.String()
}

// lineStamper records when each line written to it completed, on the
// transcript's clock (the outcome lines of an HTTP run), and passes the
// bytes on.
type lineStamper struct {
	w   io.Writer
	now func() time.Duration

	mu    sync.Mutex
	part  []byte
	lines []clientsuite.StampedLine
}

func (l *lineStamper) Write(p []byte) (int, error) {
	l.mu.Lock()
	at := l.now()
	for _, b := range p {
		if b == '\n' {
			if len(l.lines) < maxStampedLines {
				l.lines = append(l.lines, clientsuite.StampedLine{Text: string(l.part), At: at})
			}
			l.part = l.part[:0]
			continue
		}
		if len(l.part) < maxOutput {
			l.part = append(l.part, b)
		}
	}
	l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lineStamper) stamped() []clientsuite.StampedLine {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := append([]clientsuite.StampedLine(nil), l.lines...)
	if len(l.part) > 0 {
		out = append(out, clientsuite.StampedLine{Text: string(l.part), At: l.now()})
	}
	return out
}

// maxStampedLines bounds the stdout lines whose times are kept.
const maxStampedLines = 1024

// shellQuote quotes s for /bin/sh when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@%+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellLine quotes argv as one command line.
func shellLine(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

// clientSpec is one client process to start.
type clientSpec struct {
	command string
	params  clientsuite.Params
	url     string   // HTTP
	server  []string // stdio: the server's argv
	env     []string // extra environment
}

// commandLine is the shell command of the client: {url} and {server}
// substituted, or the URL appended (HTTP).
func (c clientSpec) commandLine() string {
	line := c.command
	if c.url != "" {
		if strings.Contains(line, "{url}") {
			line = strings.ReplaceAll(line, "{url}", shellQuote(c.url))
		} else {
			line += " " + shellQuote(c.url)
		}
	}
	if c.server != nil {
		line = strings.ReplaceAll(line, "{server}", shellQuote(shellLine(c.server)))
	}
	return line
}

// environ is the client's environment (docs/CLIENT-DRIVERS.md).
func (c clientSpec) environ() ([]string, error) {
	ctx, err := json.Marshal(c.params)
	if err != nil {
		return nil, err
	}
	env := append(os.Environ(),
		clientsuite.EnvContract+"="+clientsuite.ContractVersion,
		clientsuite.EnvScenario+"="+c.params.Scenario,
		clientsuite.EnvVersion+"="+c.params.ProtocolVersion,
		clientsuite.EnvTransport+"="+c.params.Transport,
		clientsuite.EnvClientID+"="+c.params.ClientID,
		clientsuite.EnvContext+"="+string(ctx),
	)
	if c.url != "" {
		env = append(env, clientsuite.EnvURL+"="+c.url)
	}
	if c.server != nil {
		argv, _ := json.Marshal(c.server)
		env = append(env, clientsuite.EnvServer+"="+shellLine(c.server), clientsuite.EnvServerArg+"="+string(argv))
	}
	return append(env, c.env...), nil
}

// runClient runs one client to its end or its deadline (SIGTERM to its
// process group, SIGKILL killGrace later). now reads the transcript's clock
// (nil: none) for Process.ExitAt. reap SIGKILLs whatever the client left in
// its process group; the caller calls it once the run's server side is
// done (a stdio server the client started may still be writing its last
// transcript entries when the client has exited).
func runClient(ctx context.Context, c clientSpec, deadline time.Duration, now func() time.Duration) (p clientsuite.Process, reap func()) {
	p = clientsuite.Process{ID: c.params.ClientID, ExitCode: -1}
	reap = func() {}
	env, err := c.environ()
	if err != nil {
		p.StartErr = err
		return p, reap
	}
	cmd := shellCommand(c.commandLine())
	cmd.Env = env
	var stdout, stderr boundedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	var stamper *lineStamper
	if now != nil {
		stamper = &lineStamper{w: &stdout, now: now}
		cmd.Stdout = stamper
	}
	cmd.WaitDelay = killGrace
	if err := cmd.Start(); err != nil {
		p.StartErr = fmt.Errorf("start %q: %w", c.commandLine(), err)
		return p, reap
	}
	pgid := cmd.Process.Pid
	reap = func() { _ = signalGroup(pgid, syscall.SIGKILL) }
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(deadline)
	defer timer.Stop()
	var werr error
	select {
	case werr = <-done:
	case <-timer.C:
		p.Killed = true
	case <-ctx.Done():
		p.Killed = true
	}
	if p.Killed {
		_ = signalGroup(cmd.Process.Pid, syscall.SIGTERM)
		select {
		case werr = <-done:
		case <-time.After(killGrace):
			_ = signalGroup(cmd.Process.Pid, syscall.SIGKILL)
			werr = <-done
		}
	}
	if now != nil {
		p.ExitAt = now()
	}
	if cmd.ProcessState != nil {
		p.ExitCode = cmd.ProcessState.ExitCode()
	}
	_ = werr
	p.Stdout, p.Stderr = stdout.String(), stderr.String()
	p.Outcomes = clientsuite.ParseOutcomes(p.Stdout)
	if stamper != nil {
		clientsuite.StampOutcomes(p.Outcomes, stamper.stamped())
	}
	return p, reap
}

package clientgrade

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/mcp-conform/mcp-conform/clientsuite"
	"github.com/mcp-conform/mcp-conform/faultproxy"
)

// ServeCommand is the hidden subcommand of mcp-conform that serves a
// scenario on stdio (the MCP_CONFORM_SERVER of a stdio run).
const ServeCommand = "serve-scenario"

// ServeOptions configures ServeScenario.
type ServeOptions struct {
	Scenario, Version string
	// Report is the grader's transcript socket (host:port) and Token the
	// run's token, sent first.
	Report, Token string
	Scale         float64
	// Exe is the mcp-conform executable (it serves the reference server:
	// "mcp-conform fixture"); empty: this process's own.
	Exe string
	// In and Out are the client's pipes (the process's stdin and stdout).
	In  io.Reader
	Out io.WriteCloser
	// Signals, when set, receives the process's SIGTERM and SIGINT.
	Signals <-chan os.Signal
}

// ServeScenario serves one scenario's server behaviour on In/Out: the
// reference server ("mcp-conform fixture", with the scenario's mutant) as a
// child process behind the fault proxy with the scenario's rules. Every
// transcript entry goes to the grader's socket as a JSON line as it
// happens, with notes when the client closes stdin (NoteStdinClosed), when
// a signal comes first (NoteSignal) and at the end (NoteEnd). It returns
// the process's exit code.
func ServeScenario(ctx context.Context, o ServeOptions) int {
	sc, ok := clientsuite.LookupScenario(o.Scenario)
	if !ok {
		fmt.Fprintf(os.Stderr, "mcp-conform %s: unknown scenario %q\n", ServeCommand, o.Scenario)
		return 2
	}
	if o.Scale <= 0 {
		o.Scale = 1
	}
	if o.Exe == "" {
		exe, err := os.Executable()
		if err != nil {
			fmt.Fprintf(os.Stderr, "mcp-conform %s: locate own executable: %v\n", ServeCommand, err)
			return 2
		}
		o.Exe = exe
	}
	conn, err := net.DialTimeout("tcp", o.Report, 5*time.Second)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mcp-conform %s: transcript socket: %v\n", ServeCommand, err)
		return 2
	}
	defer conn.Close()
	sink := &lockedWriter{w: bufio.NewWriterSize(conn, 64<<10)}
	_, _ = io.WriteString(sink, o.Token+"\n")
	rules := faultproxy.NewRules()
	if err := rules.Set(sc.Rules(o.Version, clientsuite.Stdio, o.Scale)...); err != nil {
		fmt.Fprintf(os.Stderr, "mcp-conform %s: %v\n", ServeCommand, err)
		return 2
	}
	argv := []string{o.Exe, "fixture"}
	if sc.Server.Mutant != "" {
		argv = append(argv, "--mutant", sc.Server.Mutant)
	}
	p, err := faultproxy.StartStdio(ctx, faultproxy.StdioOptions{
		Options: faultproxy.Options{TranscriptSink: flushEach{sink}},
		Command: argv, Rules: rules, ClientIn: o.In, ClientOut: o.Out, Grace: time.Second,
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "mcp-conform %s: %v\n", ServeCommand, err)
		return 2
	}
	tr := p.Transcript()
	end := func(text string) {
		tr.Note("%s: %s", clientsuite.NoteEnd, text)
		_ = sink.flush()
	}
	select {
	case <-p.Done(faultproxy.ClientToServer):
		tr.Note("%s", clientsuite.NoteStdinClosed)
		select {
		case <-p.Exited():
		case <-time.After(3 * time.Second):
		}
		_ = p.Close()
		end("the server exited after its stdin closed")
		return 0
	case sig := <-o.Signals:
		tr.Note("%s %v received, stdin still open", clientsuite.NoteSignal, sig)
		_ = signalGroup(p.Pid(), syscall.SIGKILL)
		end(fmt.Sprintf("stopped by %v", sig))
		return 0
	case <-ctx.Done():
		_ = signalGroup(p.Pid(), syscall.SIGKILL)
		end("cancelled")
		return 1
	}
}

// NotifySignals returns the channel ServeOptions.Signals wants.
func NotifySignals() <-chan os.Signal {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
	return ch
}

// lockedWriter serialises writes to a buffered writer.
type lockedWriter struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Flush()
}

// flushEach flushes after every transcript line, so that the grader has
// every entry written before a kill.
type flushEach struct{ l *lockedWriter }

func (f flushEach) Write(p []byte) (int, error) {
	f.l.mu.Lock()
	defer f.l.mu.Unlock()
	n, err := f.l.w.Write(p)
	if err == nil {
		err = f.l.w.Flush()
	}
	return n, err
}

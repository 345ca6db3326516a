package clientgrade

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcp-conform/mcp-conform/clientsuite"
	"github.com/mcp-conform/mcp-conform/faultproxy"
)

// drainWait bounds how long, after the client exited, the grader waits for
// the transcripts of the stdio servers it started to end.
const drainWait = 3 * time.Second

// runStdio runs a scenario on stdio: the client spawns the server command
// it is given (mcp-conform serve-scenario: the reference server behind the
// fault proxy, on the client's pipes), which streams the proxy's transcript
// back to this process over a loopback socket.
func runStdio(ctx context.Context, o *Options, sc *clientsuite.Scenario, v string) *clientsuite.Run {
	run := &clientsuite.Run{Scenario: sc, Transport: clientsuite.Stdio, Version: v, Scale: o.Scale,
		Params: sc.Params(v, clientsuite.Stdio, o.Scale, 0)}
	col, err := newCollector()
	if err != nil {
		run.HarnessErr = err
		return run
	}
	defer col.close()
	server := []string{o.Exe, ServeCommand, "--scenario", sc.Name, "--version", v,
		"--report", col.addr(), "--token", col.token, "--scale", strconv.FormatFloat(o.Scale, 'f', -1, 64)}
	spec := clientSpec{command: o.Command, params: run.Params, server: server, env: o.Env}
	proc, reap := runClient(ctx, spec, sc.Deadline(v, clientsuite.Stdio, o.Scale), nil)
	col.wait(time.Duration(float64(drainWait) * o.Scale))
	reap()
	run.Clients = []clientsuite.Process{proc}
	run.Entries, run.Servers = col.entries()
	return run
}

// collector receives the transcripts of a run's stdio servers.
type collector struct {
	ln    net.Listener
	token string

	mu    sync.Mutex
	conns []*transcriptConn
	wg    sync.WaitGroup
}

// transcriptConn is one server process's transcript.
type transcriptConn struct {
	conn    net.Conn
	entries []faultproxy.Entry
	ended   bool // the server wrote NoteEnd
	err     string
	done    chan struct{}
}

func newCollector() (*collector, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("transcript listener: %w", err)
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	c := &collector{ln: ln, token: hex.EncodeToString(b)}
	c.wg.Add(1)
	go c.accept()
	return c, nil
}

func (c *collector) addr() string { return c.ln.Addr().String() }

func (c *collector) accept() {
	defer c.wg.Done()
	for {
		conn, err := c.ln.Accept()
		if err != nil {
			return
		}
		tc := &transcriptConn{conn: conn, done: make(chan struct{})}
		c.mu.Lock()
		c.conns = append(c.conns, tc)
		c.mu.Unlock()
		go c.read(tc)
	}
}

// read decodes one server's transcript: the token line, then JSON lines.
func (c *collector) read(tc *transcriptConn) {
	defer close(tc.done)
	defer tc.conn.Close()
	sc := bufio.NewScanner(tc.conn)
	sc.Buffer(make([]byte, 64<<10), 80<<20)
	if !sc.Scan() || strings.TrimSpace(sc.Text()) != c.token {
		tc.err = "a connection to the transcript socket without the run's token (ignored)"
		return
	}
	for sc.Scan() {
		e, err := decodeEntry(sc.Bytes())
		if err != nil {
			tc.err = "unreadable transcript line: " + err.Error()
			continue
		}
		if e.Kind == faultproxy.EntryNote && strings.HasPrefix(e.Text, clientsuite.NoteEnd) {
			tc.ended = true
		}
		tc.entries = append(tc.entries, e)
	}
}

// wait waits until every server connected so far ended its transcript, or
// d passed.
func (c *collector) wait(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	c.mu.Lock()
	conns := append([]*transcriptConn(nil), c.conns...)
	c.mu.Unlock()
	for _, tc := range conns {
		select {
		case <-tc.done:
		case <-t.C:
			return
		}
	}
}

func (c *collector) close() {
	_ = c.ln.Close()
	c.mu.Lock()
	for _, tc := range c.conns {
		_ = tc.conn.Close()
	}
	conns := c.conns
	c.mu.Unlock()
	for _, tc := range conns {
		<-tc.done
	}
	c.wg.Wait()
}

// entries joins the transcripts, each preceded by a NoteServerStart note,
// and says how many servers there were.
func (c *collector) entries() ([]faultproxy.Entry, int) {
	_ = c.ln.Close()
	c.mu.Lock()
	conns := append([]*transcriptConn(nil), c.conns...)
	c.mu.Unlock()
	var out []faultproxy.Entry
	n := 0
	for _, tc := range conns {
		select {
		case <-tc.done:
		default:
			_ = tc.conn.Close() // still open after the drain: ends now
			<-tc.done
		}
		if tc.err != "" && len(tc.entries) == 0 {
			continue
		}
		n++
		out = append(out, faultproxy.Entry{Kind: faultproxy.EntryNote, Text: fmt.Sprintf("%s %d (its own clock starts at 0)", clientsuite.NoteServerStart, n)})
		out = append(out, tc.entries...)
		if tc.err != "" {
			out = append(out, faultproxy.Entry{Kind: faultproxy.EntryNote, Text: tc.err})
		}
		if !tc.ended {
			var at time.Duration
			if len(tc.entries) > 0 {
				at = tc.entries[len(tc.entries)-1].At
			}
			out = append(out, faultproxy.Entry{Kind: faultproxy.EntryNote, At: at, Text: clientsuite.NoteKilled + " (killed by SIGKILL, or still running when the grader stopped waiting)"})
		}
	}
	for i := range out {
		out[i].Index = i
	}
	return out, n
}

// wireEntry is faultproxy.Entry as its MarshalJSON writes it.
type wireEntry struct {
	faultproxy.Entry
	Msg  json.RawMessage `json:"msg"`
	Line *string         `json:"line"`
}

func decodeEntry(b []byte) (faultproxy.Entry, error) {
	var w wireEntry
	if err := json.Unmarshal(b, &w); err != nil {
		return faultproxy.Entry{}, err
	}
	e := w.Entry
	switch {
	case w.Msg != nil:
		e.Raw = append([]byte(nil), w.Msg...)
	case w.Line != nil:
		e.Raw = []byte(*w.Line)
	}
	return e, nil
}

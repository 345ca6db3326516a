package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/sse"
)

// TestProxyHTTP drives `mcp-conform proxy --url` as a person would: the
// reference server runs as `mcp-conform fixture --http`, the proxy fronts
// it, and plain HTTP requests (2026-07-28, stateless) go through the proxy.
func TestProxyHTTP(t *testing.T) {
	limitParallel(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	upstream := pxStartFixture(t, ctx)

	// A rule drops the server's answer to ping 2: the client gets an empty
	// event stream (the proxy's "lost response"), ping 3 its result, and
	// the transcript records the drop.
	t.Run("drop", func(t *testing.T) {
		p := pxStartProxy(t, ctx, upstream, "--faults", testdataFile(t, "http-drop-ping-2.yaml"))
		c := newPxClient(t)

		r2 := c.post(ctx, p.url, "server/discover", "", pxPing(2))
		if r2.status != http.StatusOK || r2.mediaType != "text/event-stream" || len(r2.msgs) != 0 {
			t.Errorf("ping 2: status %d, %s, messages %q; want 200, an event stream with no event", r2.status, r2.mediaType, r2.msgs)
		}
		r3 := c.post(ctx, p.url, "server/discover", "", pxPing(3))
		if r3.status != http.StatusOK || len(r3.msgs) != 1 || r3.msgs[0].id() != "3" || r3.msgs[0].Result == nil {
			t.Errorf("ping 3: status %d, messages %q; want one result with id 3", r3.status, r3.msgs)
		}
		p.stop(t)

		entries := p.entries(t)
		s2c := map[int64]string{} // seq → id of server messages
		c2s := map[string]bool{}  // ids of client messages
		var faults []pxEntry
		for _, e := range entries {
			switch {
			case e.Kind == "message" && e.Dir == "s2c":
				s2c[e.Seq] = e.id()
			case e.Kind == "message" && e.Dir == "c2s":
				c2s[e.id()] = true
			case e.Kind == "fault":
				faults = append(faults, e)
			}
		}
		if len(faults) != 1 || faults[0].Fault != "drop" || faults[0].Rule != "lose-ping-2" || faults[0].Dir != "s2c" {
			t.Fatalf("transcript faults %+v, want one drop by lose-ping-2\n%s", faults, p.transcriptText(t))
		}
		if id := s2c[faults[0].Seq]; id != "2" {
			t.Errorf("the drop acted on the server message with id %q, want 2", id)
		}
		if !c2s["2"] || !c2s["3"] {
			t.Errorf("the transcript lacks a client ping (ids seen %v)", c2s)
		}
	})

	// No rule: a tools/call of slow with a progress token streams its
	// progress and its result through the proxy, untouched.
	t.Run("pass-through", func(t *testing.T) {
		p := pxStartProxy(t, ctx, upstream)
		c := newPxClient(t)
		const steps = 3
		r := c.post(ctx, p.url, "tools/call", "slow", pxSlow(7, steps, 20, "tok-1"))
		if r.status != http.StatusOK || r.mediaType != "text/event-stream" {
			t.Fatalf("tools/call: status %d, %s; want 200 and an event stream\n%s", r.status, r.mediaType, r.body)
		}
		progress, results := pxCount(t, r.msgs, `"tok-1"`, "7")
		if progress != steps || results != 1 {
			t.Errorf("%d progress and %d results, want %d and 1\n%s", progress, results, steps, r.body)
		}
		p.stop(t)
		for _, e := range p.entries(t) {
			if e.Kind == "fault" {
				t.Errorf("fault with no rule: %+v", e)
			}
		}
	})

	// The README recipe: the first progress passes, then the stream is
	// closed; the client sees no result.
	t.Run("cut after first progress", func(t *testing.T) {
		p := pxStartProxy(t, ctx, upstream, "--faults", testdataFile(t, "http-cut-after-progress.yaml"))
		c := newPxClient(t)
		r := c.post(ctx, p.url, "tools/call", "slow", pxSlow(8, 5, 40, 77))
		progress, results := pxCount(t, r.msgs, "77", "8")
		if r.status != http.StatusOK || progress != 1 || results != 0 {
			t.Errorf("status %d, %d progress, %d results; want 200, 1 and 0\n%s", r.status, progress, results, r.body)
		}
		p.stop(t)
		var cuts int
		for _, e := range p.entries(t) {
			if e.Kind == "fault" && e.Fault == "cut" && e.Rule == "cut-after-first-progress" {
				cuts++
			}
		}
		if cuts != 1 {
			t.Errorf("%d cut faults in the transcript, want 1\n%s", cuts, p.transcriptText(t))
		}
	})
}

// TestProxyHTTPUsage: bad HTTP-mode command lines exit 2 at once.
func TestProxyHTTPUsage(t *testing.T) {
	limitParallel(t)
	const up = "http://127.0.0.1:1/mcp"
	crash := filepath.Join(t.TempDir(), "crash.yaml")
	if err := os.WriteFile(crash, []byte("rules:\n  - {name: boom, match: {dir: s2c}, fault: {crash: true}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"url and command", []string{"proxy", "--url", up, "--", "cat"}, "not both"},
		{"neither", []string{"proxy"}, "--url"},
		{"remote listen", []string{"proxy", "--url", up, "--listen", "0.0.0.0:0"}, "--allow-remote"},
		{"all interfaces", []string{"proxy", "--url", up, "--listen", ":0"}, "--allow-remote"},
		{"listen without url", []string{"proxy", "--listen", "127.0.0.1:0", "--", "cat"}, "need --url"},
		{"crash over http", []string{"proxy", "--url", up, "--faults", crash}, "stdio"},
	} {
		r := runPlain(t, 10*time.Second, tc.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", tc.name, r.code, r.stderr, tc.want)
		}
	}
}

// pxProc is a child mcp-conform process whose first stdout line is a URL.
type pxProc struct {
	cmd    *exec.Cmd
	url    string
	stderr *pxBuffer
	done   chan struct{} // closed when Wait returned
	err    error         // Wait's result, once done
}

// pxStart runs the binary with args and waits (10 s at most) for the first
// line of its stdout.
func pxStart(t *testing.T, ctx context.Context, args ...string) *pxProc {
	t.Helper()
	p, first := pxLaunch(t, ctx, append([]string{binary}, args...), []string{"NO_COLOR=1"}, "")
	select {
	case u, ok := <-first:
		if !ok || !strings.HasPrefix(u, "http://") {
			t.Fatalf("mcp-conform %v: first stdout line %q, want a URL\nstderr:\n%s", args, u, p.stderr)
		}
		p.url = u
	case <-time.After(10 * time.Second):
		t.Fatalf("mcp-conform %v printed no URL within 10 s\nstderr:\n%s", args, p.stderr)
	}
	return p
}

// pxLaunch starts argv (env added to the environment; in dir unless "")
// with its stderr in a pxBuffer; first yields the first line of its stdout
// and is closed without one when stdout ends first. The process is killed
// when the test ends.
func pxLaunch(t *testing.T, ctx context.Context, argv, env []string, dir string) (p *pxProc, first <-chan string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(append(os.Environ(), "GORACE=atexit_sleep_ms=0"), env...)
	cmd.Dir = dir
	cmd.WaitDelay = 2 * time.Second
	pr, pw := io.Pipe()
	p = &pxProc{cmd: cmd, stderr: &pxBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = pw, p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = cmd.Wait()
		_ = pw.Close()
		close(p.done)
	}()
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
		_, _ = io.Copy(io.Discard, pr)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = cmd.Process.Kill()
			<-p.done
		}
	})
	return p, line
}

// pxStartFixture starts the reference HTTP server; it is killed when the
// test ends.
func pxStartFixture(t *testing.T, ctx context.Context) string {
	t.Helper()
	return pxStart(t, ctx, "fixture", "--http", "127.0.0.1:0", "--heartbeat", "200ms").url
}

// pxProxy is a running `mcp-conform proxy --url`.
type pxProxy struct {
	*pxProc
	transcript string
}

func pxStartProxy(t *testing.T, ctx context.Context, upstream string, extra ...string) *pxProxy {
	t.Helper()
	transcript := filepath.Join(t.TempDir(), "transcript.jsonl")
	args := append([]string{"proxy", "--url", upstream, "--transcript", transcript}, extra...)
	p := &pxProxy{pxProc: pxStart(t, ctx, args...), transcript: transcript}
	// The stderr line is written before the URL on stdout, but it is
	// copied to us by its own goroutine: give it a moment.
	want := fmt.Sprintf("mcp-conform proxy: %s → %s\n", p.url, upstream)
	for deadline := time.Now().Add(2 * time.Second); !strings.Contains(p.stderr.String(), want); {
		if time.Now().After(deadline) {
			t.Errorf("stderr %q lacks %q", p.stderr, want)
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return p
}

// stop sends SIGTERM and expects a clean exit within 5 s.
func (p *pxProxy) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	start := time.Now()
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		t.Fatalf("the proxy did not end within 5 s of SIGTERM\nstderr:\n%s", p.stderr)
	}
	if p.err != nil {
		t.Fatalf("proxy after SIGTERM: %v (after %s)\nstderr:\n%s", p.err, time.Since(start), p.stderr)
	}
}

// pxEntry is the part of a transcript line the tests read.
type pxEntry struct {
	Kind, Dir, Rule, Fault, Text string
	Seq                          int64
	Msg                          json.RawMessage
}

func (e pxEntry) id() string {
	var m struct{ ID json.RawMessage }
	_ = json.Unmarshal(e.Msg, &m)
	return string(m.ID)
}

func (p *pxProxy) transcriptText(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(p.transcript)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (p *pxProxy) entries(t *testing.T) []pxEntry {
	t.Helper()
	var out []pxEntry
	for _, l := range strings.Split(strings.TrimSpace(p.transcriptText(t)), "\n") {
		var e pxEntry
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("transcript line is not JSON: %q", l)
		}
		out = append(out, e)
	}
	if len(out) == 0 || out[0].Kind != "note" || !strings.Contains(out[0].Text, p.url) {
		t.Errorf("the transcript does not start with the proxy's note")
	}
	return out
}

// pxClient posts 2026-07-28 requests.
type pxClient struct {
	t  *testing.T
	hc *http.Client
}

func newPxClient(t *testing.T) *pxClient {
	tr := &http.Transport{DisableKeepAlives: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &pxClient{t: t, hc: &http.Client{Transport: tr, Timeout: 10 * time.Second}}
}

// pxMsg is one JSON-RPC message of a response.
type pxMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
	raw    string
}

func (m pxMsg) id() string     { return string(m.ID) }
func (m pxMsg) String() string { return m.raw }

// pxResponse is what came back for one POST.
type pxResponse struct {
	status    int
	mediaType string
	msgs      []pxMsg
	body      string
}

// post sends body with the 2026-07-28 headers for method (and Mcp-Name
// when name is set) and reads the whole answer: a JSON body or every event
// of the stream until it ends.
func (c *pxClient) post(ctx context.Context, url, method, name string, body any) pxResponse {
	t := c.t
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := c.hc.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", method, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("POST %s: reading the answer: %v (read %q)", method, err, data)
	}
	r := pxResponse{status: resp.StatusCode, body: string(data)}
	r.mediaType, _, _ = mime.ParseMediaType(resp.Header.Get("Content-Type"))
	add := func(raw string) {
		m := pxMsg{raw: raw}
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			t.Fatalf("POST %s: a message that is not JSON: %q", method, raw)
		}
		r.msgs = append(r.msgs, m)
	}
	switch r.mediaType {
	case "text/event-stream":
		rd := sse.NewReader(bytes.NewReader(data), sse.Options{})
		for {
			ev, err := rd.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("POST %s: event stream: %v\n%s", method, err, data)
			}
			if !ev.IsComment && ev.HasData {
				add(ev.Data)
			}
		}
	case "application/json":
		add(string(data))
	}
	return r
}

func pxMeta() map[string]any {
	return map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
}

// pxPing is the modern barrier request: ping was removed in 2026-07-28,
// server/discover is what every modern server answers.
func pxPing(id int) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "method": "server/discover", "params": map[string]any{"_meta": pxMeta()}}
}

func pxSlow(id, steps, stepMs int, token any) map[string]any {
	meta := pxMeta()
	meta["progressToken"] = token
	return map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{
		"name": "slow", "arguments": map[string]any{"steps": steps, "stepMs": stepMs}, "_meta": meta,
	}}
}

// pxCount counts the progress notifications carrying token (JSON) and the
// results with id; anything else fails the test.
func pxCount(t *testing.T, msgs []pxMsg, token, id string) (progress, results int) {
	t.Helper()
	for _, m := range msgs {
		switch {
		case m.Method == "notifications/progress":
			var p struct{ ProgressToken json.RawMessage }
			_ = json.Unmarshal(m.Params, &p)
			if string(p.ProgressToken) != token {
				t.Errorf("progress with token %s, want %s", p.ProgressToken, token)
			}
			progress++
		case m.id() == id && m.Result != nil:
			results++
		default:
			t.Errorf("unexpected message %s", m.raw)
		}
	}
	return progress, results
}

// pxBuffer is a bytes.Buffer safe to read while a process writes it.
type pxBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *pxBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *pxBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/faultproxy/control/proxyctl"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// controlURL waits (10 s at most) for the proxy's "control API URL" line on
// stderr.
func controlURL(t *testing.T, stderr *pxBuffer) string {
	t.Helper()
	re := regexp.MustCompile(`mcp-conform proxy: control API (http://\S+)`)
	for deadline := time.Now().Add(10 * time.Second); ; {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			return m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no control API line on stderr:\n%s", stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stdioPipes is the client side of a proxy child: its stdout to read, its
// stdin to write.
type stdioPipes struct {
	io.Reader
	io.WriteCloser
}

func (p stdioPipes) Close() error { return p.WriteCloser.Close() }

// startPiped starts the binary with args, its stdin and stdout piped to the
// test and its stderr into a pxBuffer; the caller waits for it.
func startPiped(t *testing.T, ctx context.Context, args ...string) (cmd *exec.Cmd, stdin io.WriteCloser, stdout io.ReadCloser, stderr *pxBuffer) {
	t.Helper()
	cmd = exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	cmd.WaitDelay = 2 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err = cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr = &pxBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, stdin, stdout, stderr
}

// TestProxyControlStdio is the README recipe as a test: `mcp-conform proxy
// --control 127.0.0.1:0 -- mcp-conform fixture` between a real wire client
// (on the proxy's stdin/stdout) and the reference server; the Go control
// client drops a tools/call response, the transcript shows it, removing
// the rule restores delivery, an update changes the fault, reset clears.
func TestProxyControlStdio(t *testing.T) {
	limitParallel(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd, stdin, stdout, stderr := startPiped(t, ctx, "proxy", "--control", "127.0.0.1:0", "--", binary, "fixture")
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	w := clients.NewWire(stdioPipes{stdout, stdin}, clients.WireOptions{})
	defer func() {
		_ = w.Close() // closes the proxy's stdin: it ends the server and exits
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("proxy exit: %v\nstderr:\n%s", err, stderr)
			}
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("the proxy did not exit after its stdin closed")
		}
	}()
	c := proxyctl.New(controlURL(t, stderr))
	if _, err := w.Negotiate(ctx, ""); err != nil {
		t.Fatalf("negotiate through the proxy: %v\nstderr:\n%s", err, stderr)
	}
	st, err := c.Status(ctx)
	if err != nil || st.Transport != "stdio" || !strings.Contains(st.Upstream, "fixture") {
		t.Fatalf("status %+v, %v", st, err)
	}

	echo := func(id int64) *clients.Pending {
		p, err := w.Start(ctx, jsonrpc.IntID(id), "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	drop := faultproxy.RuleSpec{Name: "lose-call-response", Match: faultproxy.MatchSpec{Dir: faultproxy.ServerToClient, RepliesTo: "tools/call"}, Fault: faultproxy.FaultSpec{Drop: true}}
	r, err := c.Add(ctx, drop)
	if err != nil {
		t.Fatal(err)
	}
	if r.Seed == 0 {
		t.Errorf("added rule %+v", r)
	}
	p := echo(7)
	// The barrier's answer left the server after the call's: by then the
	// proxy has acted on the call's response.
	if _, err := w.Call(ctx, "server/discover", nil); err != nil {
		t.Fatal(err)
	}
	es := waitEntries(t, ctx, c, func(e proxyctl.Entry) bool { return e.Kind == faultproxy.EntryFault && e.Fault == "drop" })
	var droppedRaw []byte
	for _, e := range es {
		if e.Kind == faultproxy.EntryFault && e.Fault == "drop" {
			for _, m := range es {
				if m.Kind == faultproxy.EntryMessage && m.Seq == e.Seq {
					droppedRaw = m.Raw()
				}
			}
		}
	}
	if env := jsonrpc.Parse(droppedRaw); env.ID != jsonrpc.IntID(7) || env.Kind != jsonrpc.Response {
		t.Fatalf("the drop acted on %q, want the response to id 7", droppedRaw)
	}
	select {
	case <-p.Done():
		t.Fatal("the dropped response reached the client")
	default:
	}

	if err := c.Remove(ctx, drop.Name); err != nil {
		t.Fatal(err)
	}
	if m, err := echo(8).Wait(ctx); err != nil || m.Env.Kind != jsonrpc.Response {
		t.Fatalf("after remove: %s, %v", m.Raw, err)
	}

	if _, err := c.Add(ctx, drop); err != nil {
		t.Fatal(err)
	}
	dup := drop
	dup.Fault = faultproxy.FaultSpec{Duplicate: 1}
	if _, err := c.Update(ctx, drop.Name, dup); err != nil {
		t.Fatal(err)
	}
	first, err := echo(9).Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WaitFor(ctx, first.Seq+1, func(m clients.Message) bool { return m.Env.ID == jsonrpc.IntID(9) }); err != nil {
		t.Fatalf("the updated rule did not duplicate the response: %v", err)
	}

	if err := c.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if rules, err := c.Rules(ctx); err != nil || len(rules) != 0 {
		t.Fatalf("rules after reset: %+v, %v", rules, err)
	}
	if es, _, err := c.Transcript(ctx, 0); err != nil || len(es) != 0 {
		t.Fatalf("transcript after reset: %d entries, %v", len(es), err)
	}
	if m, err := echo(10).Wait(ctx); err != nil || m.Env.Kind != jsonrpc.Response {
		t.Fatalf("after reset: %s, %v", m.Raw, err)
	}
}

// waitEntries reads the transcript through the API until an entry
// satisfies pred (bounded by ctx), and returns every entry read.
func waitEntries(t *testing.T, ctx context.Context, c *proxyctl.Client, pred func(proxyctl.Entry) bool) []proxyctl.Entry {
	t.Helper()
	var all []proxyctl.Entry
	since := 0
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		es, next, err := c.Transcript(ctx, since)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, es...)
		for _, e := range es {
			if pred(e) {
				return all
			}
		}
		since = next
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("no matching transcript entry; read %d entries", len(all))
		}
	}
}

// TestProxyControlHTTP: the control API in front of a Streamable HTTP
// server drops, then stops dropping, a response; --control refuses a
// non-loopback address.
func TestProxyControlHTTP(t *testing.T) {
	limitParallel(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	upstream := pxStartFixture(t, ctx)
	p := pxStartProxy(t, ctx, upstream, "--control", "127.0.0.1:0", "--faults", testdataFile(t, "http-drop-ping-2.yaml"))
	c := proxyctl.New(controlURL(t, p.stderr))
	st, err := c.Status(ctx)
	if err != nil || st.Transport != "http" || st.Upstream != upstream || st.Listen != p.url || st.Seeds["lose-ping-2"] == 0 {
		t.Fatalf("status %+v, %v", st, err)
	}
	if want := fmt.Sprintf("rule lose-ping-2 seed %d", st.Seeds["lose-ping-2"]); !strings.Contains(p.stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, p.stderr)
	}
	// The file's rule is listed in the file's schema.
	if r, err := c.Rule(ctx, "lose-ping-2"); err != nil || !r.Fault.Drop || fmt.Sprint(r.Match.ID) != "2" {
		t.Errorf("file rule as listed: %+v, %v", r, err)
	}
	if err := c.Remove(ctx, "lose-ping-2"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Add(ctx, faultproxy.RuleSpec{Name: "crash", Fault: faultproxy.FaultSpec{Crash: true}}); err == nil {
		t.Error("a crash rule was accepted on HTTP")
	}
	if _, err := c.Add(ctx, faultproxy.RuleSpec{Name: "lose", Match: faultproxy.MatchSpec{Dir: faultproxy.ServerToClient, RepliesTo: "server/discover"}, Fault: faultproxy.FaultSpec{Drop: true}}); err != nil {
		t.Fatal(err)
	}
	hc := newPxClient(t)
	if r := hc.post(ctx, p.url, "server/discover", "", pxPing(2)); r.status != http.StatusOK || len(r.msgs) != 0 {
		t.Errorf("with the rule: status %d, messages %q; want no message", r.status, r.msgs)
	}
	if err := c.Remove(ctx, "lose"); err != nil {
		t.Fatal(err)
	}
	if r := hc.post(ctx, p.url, "server/discover", "", pxPing(3)); len(r.msgs) != 1 || r.msgs[0].id() != "3" {
		t.Errorf("after remove: messages %q; want the answer to 3", r.msgs)
	}
	p.stop(t)

	res := runCLI(t, 10*time.Second, "proxy", "--control", "0.0.0.0:0", "--", "true")
	if res.code != 2 || !strings.Contains(res.stderr, "--control-allow-remote") {
		t.Errorf("non-loopback --control: exit %d, stderr %q", res.code, res.stderr)
	}
}

// startPrinting runs the binary with args and returns its first stdout line
// (a URL) and its stderr; the process is killed when the test ends.
func startPrinting(t *testing.T, ctx context.Context, args ...string) (string, *pxBuffer, *exec.Cmd) {
	t.Helper()
	p, first := pxLaunch(t, ctx, append([]string{binary}, args...), nil, "")
	select {
	case u := <-first:
		return strings.TrimSpace(u), p.stderr, p.cmd
	case <-time.After(10 * time.Second):
		t.Fatalf("mcp-conform %v printed nothing within 10 s\nstderr:\n%s", args, p.stderr)
	}
	return "", nil, nil
}

// TestProxyControlWebSocket: `mcp-conform proxy --url ws://…` in front of
// `mcp-conform fixture --ws`, driven by the WebSocket wire client; a rule
// added through the control API drops a tools/call response, and the
// transcript names the connection.
func TestProxyControlWebSocket(t *testing.T) {
	limitParallel(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	upstream, _, _ := startPrinting(t, ctx, "fixture", "--ws", "127.0.0.1:0")
	if !strings.HasPrefix(upstream, "ws://127.0.0.1:") {
		t.Fatalf("fixture --ws printed %q", upstream)
	}
	proxyURL, stderr, _ := startPrinting(t, ctx, "proxy", "--url", upstream, "--control", "127.0.0.1:0")
	if !strings.HasPrefix(proxyURL, "ws://127.0.0.1:") || !strings.HasSuffix(proxyURL, "/mcp") {
		t.Fatalf("proxy printed %q\n%s", proxyURL, stderr)
	}
	c := proxyctl.New(controlURL(t, stderr))
	if st, err := c.Status(ctx); err != nil || st.Transport != "websocket" || st.Upstream != upstream {
		t.Fatalf("status %+v, %v", st, err)
	}
	w, err := clients.DialWebSocket(ctx, proxyURL, nil, clients.WireOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Negotiate(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Add(ctx, faultproxy.RuleSpec{Name: "lose", Match: faultproxy.MatchSpec{Dir: faultproxy.ServerToClient, RepliesTo: "tools/call"}, Times: 1, Fault: faultproxy.FaultSpec{Drop: true}}); err != nil {
		t.Fatal(err)
	}
	p, err := w.Start(ctx, jsonrpc.IntID(5), "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	es := waitEntries(t, ctx, c, func(e proxyctl.Entry) bool { return e.Kind == faultproxy.EntryFault && e.Fault == "drop" })
	drop := es[len(es)-1]
	if drop.Stream != "WS#1" || drop.Rule != "lose" {
		t.Errorf("drop entry %+v", drop)
	}
	if _, err := w.Call(ctx, "server/discover", nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
		t.Fatal("the dropped response arrived")
	default:
	}
	// times: 1 — the next call is answered.
	if m, err := w.Call(ctx, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "y"}}); err != nil || m.Env.Kind != jsonrpc.Response {
		t.Fatalf("second call: %s, %v", m.Raw, err)
	}
}

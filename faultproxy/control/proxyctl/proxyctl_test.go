package proxyctl_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/faultproxy/control"
	"github.com/mcp-conform/mcp-conform/faultproxy/control/proxyctl"
	"github.com/mcp-conform/mcp-conform/fixtures"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// The test binary doubles as the reference server, started as a real child
// process behind a real stdio link.
func TestMain(m *testing.M) {
	if os.Getenv("PROXYCTL_FIXTURE") == "1" {
		if err := fixtures.Serve(context.Background(), os.Stdin, os.Stdout, fixtures.Options{}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// rig is the reference server behind a stdio link, the control API on a
// loopback socket, a wire client on the link and a control client.
type rig struct {
	link *faultproxy.Stdio
	api  *control.Listener
	w    *clients.Wire
	c    *proxyctl.Client
}

func start(t *testing.T) *rig {
	t.Helper()
	link, err := faultproxy.StartStdio(context.Background(), faultproxy.StdioOptions{
		Command: []string{os.Args[0], "-test.run=^$"},
		Env:     []string{"PROXYCTL_FIXTURE=1", "GORACE=atexit_sleep_ms=0"},
		Grace:   time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	api, err := control.Listen("127.0.0.1:0", control.Options{Target: link, Transport: "stdio", Upstream: "reference fixture"})
	if err != nil {
		_ = link.Close()
		t.Fatal(err)
	}
	r := &rig{link: link, api: api, w: clients.NewWire(link.Client(), clients.WireOptions{}), c: proxyctl.New(api.URL())}
	t.Cleanup(func() {
		_ = r.w.Close()
		_ = r.link.Close()
		_ = r.api.Close()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := r.w.Negotiate(ctx, ""); err != nil {
		t.Fatalf("negotiate: %v", err)
	}
	return r
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// echo starts a tools/call of the echo tool.
func (r *rig) echo(t *testing.T, id jsonrpc.ID, text string) *clients.Pending {
	t.Helper()
	p, err := r.w.Start(ctxT(t), id, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": text}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// waitFault reads the transcript through the API until a fault entry of
// rule acts, and returns it with the entries read.
func (r *rig) waitFault(t *testing.T, rule, fault string) (proxyctl.Entry, []proxyctl.Entry) {
	t.Helper()
	ctx := ctxT(t)
	var all []proxyctl.Entry
	since := 0
	for {
		changed := r.link.Transcript().Changed()
		es, next, err := r.c.Transcript(ctx, since)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, es...)
		for _, e := range es {
			if e.Kind == faultproxy.EntryFault && e.Rule == rule && e.Fault == fault {
				return e, all
			}
		}
		since = next
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("no %s fault by %s in the transcript", fault, rule)
		}
	}
}

var dropCallResponse = faultproxy.RuleSpec{
	Name:  "lose-call-response",
	Match: faultproxy.MatchSpec{Dir: faultproxy.ServerToClient, RepliesTo: "tools/call"},
	Fault: faultproxy.FaultSpec{Drop: true},
}

// TestControlEndToEnd: a rule added at run time drops a tools/call
// response a real client waits for; the transcript shows it; removing the
// rule restores delivery; updating it changes the fault; reset clears all.
func TestControlEndToEnd(t *testing.T) {
	r := start(t)
	ctx := ctxT(t)

	st, err := r.c.Status(ctx)
	if err != nil || st.Transport != "stdio" || st.Rules != 0 {
		t.Fatalf("status %+v, %v", st, err)
	}

	added, err := r.c.Add(ctx, dropCallResponse)
	if err != nil {
		t.Fatal(err)
	}
	if added.Seed == 0 || added.Name != dropCallResponse.Name || !added.Fault.Drop {
		t.Errorf("added %+v", added)
	}

	// Dropped: the drop entry names the server's response to id 10, and
	// the client never got it.
	p := r.echo(t, jsonrpc.IntID(10), "first")
	drop, entries := r.waitFault(t, "lose-call-response", "drop")
	var dropped proxyctl.Entry
	for _, e := range entries {
		if e.Kind == faultproxy.EntryMessage && e.Seq == drop.Seq {
			dropped = e
		}
	}
	if env := jsonrpc.Parse(dropped.Raw()); env.ID != jsonrpc.IntID(10) || !env.Kind.IsReply() {
		t.Fatalf("the drop acted on %s, want the response to id 10", dropped.Raw())
	}
	// The barrier request is answered after the drop, so anything for id
	// 10 would have come by now.
	if _, err := r.w.Call(ctx, "server/discover", nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
		t.Fatal("the dropped response reached the client")
	default:
	}
	if got, _ := r.c.Rule(ctx, "lose-call-response"); got.Fired != 1 {
		t.Errorf("fired %d, want 1", got.Fired)
	}

	// Removed: the next call is answered.
	if err := r.c.Remove(ctx, "lose-call-response"); err != nil {
		t.Fatal(err)
	}
	if m, err := r.echo(t, jsonrpc.IntID(11), "second").Wait(ctx); err != nil || m.Env.Kind != jsonrpc.Response {
		t.Fatalf("after remove: %s, %v", m.Raw, err)
	}

	// Updated: the same rule name now duplicates the response.
	if _, err := r.c.Add(ctx, dropCallResponse); err != nil {
		t.Fatal(err)
	}
	dup := dropCallResponse
	dup.Name = ""
	dup.Fault = faultproxy.FaultSpec{Duplicate: 1}
	up, err := r.c.Update(ctx, "lose-call-response", dup)
	if err != nil || up.Fault.Duplicate != 1 || up.Fired != 0 {
		t.Fatalf("update: %+v, %v", up, err)
	}
	first, err := r.echo(t, jsonrpc.IntID(12), "third").Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	isReply12 := func(m clients.Message) bool { return m.Env.Kind.IsReply() && m.Env.ID == jsonrpc.IntID(12) }
	if _, err := r.w.WaitFor(ctx, first.Seq+1, isReply12); err != nil {
		t.Fatalf("the duplicated response did not arrive twice: %v", err)
	}

	// Reset: no rule, empty transcript from here, normal delivery.
	before := r.link.Transcript().Len()
	if err := r.c.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	rules, err := r.c.Rules(ctx)
	if err != nil || len(rules) != 0 {
		t.Fatalf("rules after reset: %+v, %v", rules, err)
	}
	es, next, err := r.c.Transcript(ctx, 0)
	if err != nil || len(es) != 0 || next < before {
		t.Fatalf("transcript after reset: %d entries, next %d (was %d), %v", len(es), next, before, err)
	}
	if m, err := r.echo(t, jsonrpc.IntID(13), "fourth").Wait(ctx); err != nil || m.Env.Kind != jsonrpc.Response {
		t.Fatalf("after reset: %s, %v", m.Raw, err)
	}
	es, _, err = r.c.Transcript(ctx, next)
	if err != nil || len(es) < 2 || es[0].Index < next {
		t.Fatalf("transcript after reset and a call: %+v, %v", es, err)
	}
}

// TestSetAllIsAtomic: PUT /rules swaps the whole set, a bad rule in it
// leaves the old set untouched.
func TestSetAllIsAtomic(t *testing.T) {
	r := start(t)
	ctx := ctxT(t)
	if _, err := r.c.SetAll(ctx, []faultproxy.RuleSpec{dropCallResponse, {Name: "b", Fault: faultproxy.FaultSpec{Pass: true}, Seed: 42}}); err != nil {
		t.Fatal(err)
	}
	_, err := r.c.SetAll(ctx, []faultproxy.RuleSpec{{Name: "ok", Fault: faultproxy.FaultSpec{Pass: true}}, {Name: "bad"}})
	if err == nil {
		t.Fatal("a set with a rule without a fault was accepted")
	}
	rules, _ := r.c.Rules(ctx)
	if len(rules) != 2 || rules[0].Name != "lose-call-response" || rules[1].Seed != 42 {
		t.Fatalf("rules after a refused set: %+v", rules)
	}
	st, _ := r.c.Status(ctx)
	if st.Seeds["b"] != 42 || st.Seeds["lose-call-response"] == 0 {
		t.Errorf("status seeds %v", st.Seeds)
	}
}

func TestErrors(t *testing.T) {
	r := start(t)
	ctx := ctxT(t)
	if _, err := r.c.Add(ctx, dropCallResponse); err != nil {
		t.Fatal(err)
	}
	if _, err := r.c.Add(ctx, dropCallResponse); !proxyctl.IsConflict(err) {
		t.Errorf("duplicate add: %v", err)
	}
	if err := r.c.Remove(ctx, "nope"); !proxyctl.IsNotFound(err) {
		t.Errorf("remove missing: %v", err)
	}
	if _, err := r.c.Update(ctx, "nope", dropCallResponse); err == nil {
		t.Errorf("update with another name accepted")
	}
	var pe *proxyctl.Error
	if _, err := r.c.Add(ctx, faultproxy.RuleSpec{Name: "x"}); !errors.As(err, &pe) || pe.Status != http.StatusBadRequest || !strings.Contains(pe.Message, "no fault") {
		t.Errorf("rule without fault: %v", err)
	}
	// DNS rebinding: a foreign Host or Origin is refused.
	for name, hdr := range map[string][2]string{"host": {"Host", "evil.example:80"}, "origin": {"Origin", "http://evil.example"}} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.api.URL()+"/rules", nil)
		if hdr[0] == "Host" {
			req.Host = hdr[1]
		} else {
			req.Header.Set(hdr[0], hdr[1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: status %d, want 403", name, resp.StatusCode)
		}
	}
	http.DefaultClient.CloseIdleConnections()
	if _, err := control.Listen("0.0.0.0:0", control.Options{Target: r.link}); err == nil {
		t.Error("a non-loopback control address was accepted")
	}
}

// TestConcurrentControl changes rules from several goroutines while calls
// flow (run with -race): every call that no rule drops is answered.
func TestConcurrentControl(t *testing.T) {
	r := start(t)
	ctx := ctxT(t)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				name := fmt.Sprintf("g%d-%d", g, i)
				spec := faultproxy.RuleSpec{Name: name, Match: faultproxy.MatchSpec{Method: "never/sent"}, Fault: faultproxy.FaultSpec{Drop: true}}
				if _, err := r.c.Add(ctx, spec); err != nil {
					t.Error(err)
					return
				}
				if _, err := r.c.Rules(ctx); err != nil {
					t.Error(err)
				}
				if _, _, err := r.c.Transcript(ctx, 0); err != nil {
					t.Error(err)
				}
				if err := r.c.Remove(ctx, name); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	for i := range 20 {
		if _, err := r.echo(t, jsonrpc.IntID(int64(100+i)), "x").Wait(ctx); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	wg.Wait()
	if rules, _ := r.c.Rules(ctx); len(rules) != 0 {
		t.Errorf("rules left: %+v", rules)
	}
}

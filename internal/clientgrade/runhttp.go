package clientgrade

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/mcp-conform/mcp-conform/clientsuite"
	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/fixtures"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/sse"
)

// runHTTP runs a scenario on Streamable HTTP: the reference server (with
// the scenario's twists) in this process on a loopback port, the fault
// proxy in front of it with the scenario's rules, and the client(s) given
// the proxy's URL.
func runHTTP(ctx context.Context, o *Options, sc *clientsuite.Scenario, v string) *clientsuite.Run {
	run := &clientsuite.Run{Scenario: sc, Transport: clientsuite.HTTP, Version: v, Scale: o.Scale,
		Params: sc.Params(v, clientsuite.HTTP, o.Scale, 0)}
	h, err := fixtures.NewHTTPHandler(fixtures.HTTPOptions{Mutant: sc.Server.Mutant, Heartbeat: sc.Server.Heartbeat,
		SSERetry: sc.Server.SSERetry})
	if err != nil {
		run.HarnessErr = fmt.Errorf("reference server: %w", err)
		return run
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		run.HarnessErr = fmt.Errorf("listen: %w", err)
		return run
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer func() {
		_ = h.(io.Closer).Close()
		_ = srv.Close()
	}()
	rules := faultproxy.NewRules()
	if err := rules.Set(sc.Rules(v, clientsuite.HTTP, o.Scale)...); err != nil {
		run.HarnessErr = fmt.Errorf("proxy rules: %w", err)
		return run
	}
	p, err := faultproxy.StartHTTP(ctx, faultproxy.HTTPOptions{Upstream: "http://" + ln.Addr().String() + "/mcp", Rules: rules})
	if err != nil {
		run.HarnessErr = err
		return run
	}
	tr := p.Transcript()
	deadline := sc.Deadline(v, clientsuite.HTTP, o.Scale)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var cutDone chan struct{}
	if sc.CutAtFirstProgress {
		cutDone = make(chan struct{})
		go func() {
			defer close(cutDone)
			if at, ok := cutAtFirstProgress(cctx, p, sc.NumClients(), deadline); ok {
				run.CutAt = at
			}
		}()
	}
	n := sc.NumClients()
	procs := make([]clientsuite.Process, n)
	reaps := make([]func(), n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			spec := clientSpec{command: o.Command, params: sc.Params(v, clientsuite.HTTP, o.Scale, i), url: p.URL(), env: o.Env}
			procs[i], reaps[i] = runClient(ctx, spec, deadline, tr.Since)
		}()
	}
	wg.Wait()
	cancel()
	if cutDone != nil {
		<-cutDone
	}
	for _, r := range reaps {
		r()
	}
	_ = p.Close()
	run.Clients = procs
	run.Entries = tr.Entries()
	return run
}

// cutAtFirstProgress waits until n distinct response streams have each
// relayed a progress notification, then cuts every stream at once and
// returns the transcript time of the cut. It gives up at the deadline.
func cutAtFirstProgress(ctx context.Context, p *faultproxy.HTTP, n int, deadline time.Duration) (time.Duration, bool) {
	tr := p.Transcript()
	seen := map[string]bool{}
	next := 0
	t := time.NewTimer(deadline)
	defer t.Stop()
	for {
		changed := tr.Changed()
		for _, e := range tr.Since0(next) {
			next = e.Index + 1
			if e.Kind != faultproxy.EntryMessage || e.Dir != faultproxy.ServerToClient || e.Stream == "" {
				continue
			}
			if isProgressEvent(e.Raw) {
				seen[e.Stream] = true
			}
		}
		if len(seen) >= n {
			at := tr.Since()
			p.CutStreams("herd: every stream at once, each having delivered its first progress")
			return at, true
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return 0, false
		case <-t.C:
			return 0, false
		}
	}
}

// isProgressEvent reports whether an SSE event carries a progress
// notification.
func isProgressEvent(raw []byte) bool {
	ev, err := sse.NewReader(bytes.NewReader(raw), sse.Options{Lenient: true}).Next()
	if err != nil && !errors.Is(err, io.EOF) {
		return false
	}
	return jsonrpc.Parse([]byte(ev.Data)).Method == "notifications/progress"
}

package clientgrade

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/mcp-conform/mcp-conform/clientsuite"
	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/fixtures"
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
	for _, r := range reaps {
		r()
	}
	_ = p.Close()
	run.Clients = procs
	run.Entries = tr.Entries()
	return run
}

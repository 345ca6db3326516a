// Package herd measures a reconnect herd (`mcp-conform herd`): N clients
// each hold a long tools/call stream open through the fault proxy; when
// every stream has delivered its first progress notification (a message
// barrier) the proxy cuts them all at once, and each client follows the
// reconnect plan (a new request with a new id, a refetch of tools/list),
// once reconnecting immediately and once after a capped exponential
// backoff with deterministic jitter (reliable.Backoff). The report gives
// both side by side: success rate, time until every client recovered, p50
// and p99 recovery latency from the cut.
package herd

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/clients/reliable"
	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/fixtures"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// proxyMemoryEntries bounds the transcript entries the proxy keeps in
// memory during a herd (the barrier needs only recent ones).
const proxyMemoryEntries = 4096

// Bounds of a herd.
const (
	DefaultClients = 200
	MaxClients     = 1000
	// maxAttempts bounds the reconnect attempts of one client.
	maxAttempts = 6
	// attemptTimeout bounds one reconnect attempt.
	attemptTimeout = 3 * time.Second
)

// Options are a herd's settings: the loopback endpoint ("" starts the
// built-in reference server in-process), the number of clients, the long
// tool each calls and its arguments.
type Options struct {
	URL     string
	Clients int
	Tool    string
	Args    map[string]any
	// Seed varies the backoff jitter: the same seed gives every client the
	// same delays again; zero is the jitter of the client ids alone.
	Seed uint64
}

// Phase is the outcome of one reconnect strategy.
type Phase struct {
	Mode        string  `json:"mode"`
	Clients     int     `json:"clients"`
	StreamsCut  int     `json:"streamsCut"`
	Recovered   int     `json:"recovered"`
	SuccessRate float64 `json:"successRate"`
	// AllRecoveredMs is the time from the cut to the last recovery (to
	// the end of the phase when some never recovered).
	AllRecoveredMs float64 `json:"allRecoveredMs"`
	P50Ms          float64 `json:"p50Ms"`
	P99Ms          float64 `json:"p99Ms"`
	// Attempts counts reconnect attempts, FailedAttempts those that failed.
	Attempts       int `json:"attempts"`
	FailedAttempts int `json:"failedAttempts"`
	// FirstFailure is the error of one failed attempt, if any failed.
	FirstFailure string   `json:"firstFailure,omitempty"`
	Errors       []string `json:"errors,omitempty"`
}

// Report is what `mcp-conform herd --json` writes.
type Report struct {
	Schema          string `json:"schema"`
	Target          string `json:"target"`
	ProtocolVersion string `json:"protocolVersion"`
	Clients         int    `json:"clients"`
	// Seed is the jitter's seed (Options.Seed).
	Seed   uint64  `json:"seed,omitempty"`
	Phases []Phase `json:"phases"`
}

// CheckLoopback accepts only http(s) URLs on a loopback host: the herd is
// a load test and is not aimed at other hosts.
func CheckLoopback(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("--url %q: not an absolute http URL", raw)
	}
	h := u.Hostname()
	if h == "localhost" {
		return nil
	}
	if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--url %q: the herd runs against loopback addresses only (127.0.0.1, ::1, localhost)", raw)
}

// Run starts the target (when no URL is given) and the proxy, and runs the
// two phases; log receives a line as each starts.
func Run(ctx context.Context, o Options, log io.Writer) (*Report, error) {
	endpoint := o.URL
	if endpoint == "" {
		h, err := fixtures.NewHTTPHandler(fixtures.HTTPOptions{})
		if err != nil {
			return nil, err
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("listen: %w", err)
		}
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		defer func() {
			_ = h.(io.Closer).Close()
			_ = srv.Close()
		}()
		endpoint = "http://" + ln.Addr().String() + "/mcp"
	}
	p, err := faultproxy.StartHTTP(ctx, faultproxy.HTTPOptions{Upstream: endpoint})
	if err != nil {
		return nil, err
	}
	defer p.Close()
	p.Transcript().SetLimit(proxyMemoryEntries)
	rep := &Report{Schema: "mcp-conform/herd/v1", Target: endpoint, Clients: o.Clients, Seed: o.Seed}
	for i, mode := range []string{"immediate", "backoff"} {
		if i > 0 {
			// The last phase's re-issued calls closed their streams;
			// the proxy relays until it sees that. A cut counts only
			// this phase's streams.
			wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err := p.WaitStreamsEnded(wctx)
			cancel()
			if err != nil {
				return nil, fmt.Errorf("before the %s phase: %w", mode, err)
			}
		}
		fmt.Fprintf(log, "herd: %s: %d clients opening streams through the proxy\n", mode, o.Clients)
		ph, version, err := run(ctx, p, o, mode)
		if err != nil {
			return nil, fmt.Errorf("%s phase: %w", mode, err)
		}
		rep.ProtocolVersion = version
		rep.Phases = append(rep.Phases, ph)
	}
	return rep, nil
}

// client is one client of a phase.
type client struct {
	id       string
	jitterID string // the backoff jitter's key: id, with the seed when one is set
	w        *clients.HTTPWire
	call     *clients.HTTPCall
	latency  time.Duration
	ok       bool
	attempts int
	failed   int
	lastErr  error
	firstErr error
}

// run runs one phase: open N streams, cut them at once when each has
// delivered its first progress, reconnect by mode.
func run(ctx context.Context, p *faultproxy.HTTP, o Options, mode string) (Phase, string, error) {
	args := o.Args
	ph := Phase{Mode: mode, Clients: o.Clients}
	cs := make([]*client, o.Clients)
	defer func() {
		for _, c := range cs {
			if c != nil && c.w != nil {
				_ = c.w.Close()
			}
		}
	}()
	// Open every stream; the barrier is each stream's first progress.
	var wg sync.WaitGroup
	errs := make(chan error, o.Clients)
	for i := range cs {
		c := &client{id: fmt.Sprintf("herd-%s-%d", mode, i)}
		if o.Seed != 0 {
			c.jitterID = fmt.Sprintf("%s@%d", c.id, o.Seed)
		}
		cs[i] = c
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.open(ctx, p.URL(), o.Tool, args); err != nil {
				errs <- fmt.Errorf("client %s: %w", c.id, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return ph, "", err
	}
	version := cs[0].w.Session().Version
	cut := time.Now()
	ph.StreamsCut = p.CutStreams("herd: every stream at once")
	// Reconnect.
	for _, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.recover(ctx, mode, cut, o.Tool, args)
		}()
	}
	wg.Wait()
	end := time.Since(cut)
	var lat []float64
	for _, c := range cs {
		ph.Attempts += c.attempts
		ph.FailedAttempts += c.failed
		if c.failed > 0 && ph.FirstFailure == "" && c.firstErr != nil {
			ph.FirstFailure = c.id + ": " + c.firstErr.Error()
		}
		if c.ok {
			ph.Recovered++
			lat = append(lat, ms(c.latency))
		} else if len(ph.Errors) < 5 && c.lastErr != nil {
			ph.Errors = append(ph.Errors, c.id+": "+c.lastErr.Error())
		}
	}
	ph.SuccessRate = float64(ph.Recovered) / float64(ph.Clients)
	slices.Sort(lat)
	if len(lat) > 0 {
		ph.P50Ms = percentile(lat, 0.50)
		ph.P99Ms = percentile(lat, 0.99)
	}
	if ph.Recovered == ph.Clients && len(lat) > 0 {
		ph.AllRecoveredMs = lat[len(lat)-1]
	} else {
		ph.AllRecoveredMs = ms(end)
	}
	return ph, version, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// percentile is the nearest-rank percentile of sorted values.
func percentile(sorted []float64, q float64) float64 {
	i := int(float64(len(sorted))*q+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// open negotiates and starts the long call, and waits for its first
// progress notification.
func (c *client) open(ctx context.Context, endpoint, tool string, args map[string]any) error {
	c.w = clients.NewHTTPWire(endpoint, clients.HTTPOptions{ClientName: c.id})
	octx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := c.w.Negotiate(octx, ""); err != nil {
		return fmt.Errorf("negotiate: %w", err)
	}
	token := jsonrpc.StringID(c.id + "-stream")
	call, err := c.w.Start(ctx, c.w.NewID(), "tools/call", c.w.ProgressParams(token, map[string]any{"name": tool, "arguments": args}))
	if err != nil {
		return fmt.Errorf("open stream: %w", err)
	}
	c.call = call
	_, err = call.WaitEvent(octx, 0, func(e clients.StreamEvent) bool {
		if !e.HasData {
			return false
		}
		env := jsonrpc.Parse([]byte(e.Data))
		return env.Method == "notifications/progress" && env.ProgressToken == token
	})
	if err != nil {
		return fmt.Errorf("no progress on the stream (the tool must report progress for a token): %w", err)
	}
	return nil
}

// jitterKey is what the client's backoff jitter is drawn from.
func (c *client) jitterKey() string {
	if c.jitterID != "" {
		return c.jitterID
	}
	return c.id
}

// recover waits for the stream to end, then follows the reconnect plan
// until it works or the attempts run out: immediately, or after
// reliable.Backoff(client, attempt).
func (c *client) recover(ctx context.Context, mode string, cut time.Time, tool string, args map[string]any) {
	select {
	case <-c.call.Ended():
	case <-ctx.Done():
		c.lastErr = ctx.Err()
		return
	}
	reissued := map[string]any{}
	for k, v := range args {
		reissued[k] = v
	}
	rc := reliable.Reconnector{NewID: c.w.NewID, List: []string{"tools/list"}}
	for a := 0; a < maxAttempts; a++ {
		if mode == "backoff" {
			t := time.NewTimer(reliable.Backoff(c.jitterKey(), a))
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				c.lastErr = ctx.Err()
				return
			}
		}
		c.attempts++
		plan := rc.Plan([]reliable.Op{{Method: "tools/call", Params: map[string]any{"name": tool, "arguments": reissued}, Safe: true}})
		if err := c.attempt(ctx, plan); err != nil {
			c.failed++
			c.lastErr = err
			if c.firstErr == nil {
				c.firstErr = err
			}
			continue
		}
		c.ok, c.latency = true, time.Since(cut)
		return
	}
}

// attempt sends the plan's re-issued request (a new id) and its refetch;
// it works when the new stream delivers its first message and the refetch
// is answered.
func (c *client) attempt(ctx context.Context, plan reliable.Plan) error {
	actx, cancel := context.WithTimeout(ctx, attemptTimeout)
	defer cancel()
	re := plan.Reissue[0]
	token := jsonrpc.StringID(fmt.Sprintf("%s-re-%s", c.id, re.ID))
	call, err := c.w.Start(actx, re.ID, re.Method, c.w.ProgressParams(token, re.Params))
	if err != nil {
		return fmt.Errorf("re-issue: %w", err)
	}
	defer call.Close()
	if call.Status() != http.StatusOK {
		return fmt.Errorf("re-issue: HTTP %d", call.Status())
	}
	if _, err := call.WaitEvent(actx, 0, func(e clients.StreamEvent) bool { return e.HasData }); err != nil {
		if _, ok := call.Response(); !ok {
			return fmt.Errorf("re-issue: nothing on the new stream: %w", err)
		}
	}
	for _, rf := range plan.Refetch {
		m, err := c.w.Call(actx, rf.Method, rf.Params)
		if err != nil {
			return fmt.Errorf("refetch %s: %w", rf.Method, err)
		}
		if m.Env.Kind != jsonrpc.Response {
			return fmt.Errorf("refetch %s: %s", rf.Method, m.Raw)
		}
	}
	return nil
}

// Print writes the side-by-side table.
func Print(w io.Writer, rep *Report) {
	seed := ""
	if rep.Seed != 0 {
		seed = fmt.Sprintf(", seed %d", rep.Seed)
	}
	fmt.Fprintf(w, "herd: %d clients, %s (%s%s); the proxy cut every stream at once, each client re-issued its request with a new id and refetched tools/list\n\n",
		rep.Clients, rep.Target, rep.ProtocolVersion, seed)
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	fmt.Fprintln(tw, "reconnect\tsuccess\tall recovered\tp50\tp99\tattempts (failed)\tstreams cut")
	for _, ph := range rep.Phases {
		fmt.Fprintf(tw, "%s\t%d/%d (%.1f%%)\t%.0f ms\t%.0f ms\t%.0f ms\t%d (%d)\t%d\n", ph.Mode, ph.Recovered, ph.Clients, 100*ph.SuccessRate,
			ph.AllRecoveredMs, ph.P50Ms, ph.P99Ms, ph.Attempts, ph.FailedAttempts, ph.StreamsCut)
	}
	_ = tw.Flush()
	for _, ph := range rep.Phases {
		if ph.FirstFailure != "" {
			fmt.Fprintf(w, "  %s: a failed attempt: %s\n", ph.Mode, ph.FirstFailure)
		}
		for _, e := range ph.Errors {
			fmt.Fprintf(w, "  %s: %s\n", ph.Mode, e)
		}
	}
}

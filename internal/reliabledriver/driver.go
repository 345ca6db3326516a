// Package reliabledriver is the driver of mcp-conform's own reliable client
// (clients/reliable) for `mcp-conform client`: it reads a scenario from
// the environment of docs/CLIENT-DRIVERS.md and runs it with the client's
// own features — its two clocks, its per-era cancellation, its retry
// classes with backoff and jitter, its Last-Event-ID resumption, its new
// session after a 404, its ping answers, its ordered stdio shutdown. With
// a Defect (--mutant) one deliberate bug of the client is switched on, for
// the client mutant matrix. It is run as the hidden subcommand
// `mcp-conform reliable-driver`.
package reliabledriver

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/clients/reliable"
	"github.com/mcp-conform/mcp-conform/clientsuite"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// Exit codes (docs/CLIENT-DRIVERS.md).
const (
	exitRan         = 0
	exitFailed      = 1
	exitUnsupported = 2
)

// Main runs the driver with args (flags, then optionally the server URL)
// and the environment getenv reads, and returns the exit code.
func Main(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("reliable-driver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	mutant := fs.String("mutant", "", "switch on one deliberate defect of the reliable client (see --list)")
	variant := fs.String("variant", "", "shape the (correct) client unlike its default: a comma-separated list of variants (see --list)")
	list := fs.Bool("list", false, "list the defects and the check each one breaks, and the variants")
	if err := fs.Parse(args); err != nil {
		return exitUnsupported
	}
	if *list {
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "MUTANT\tBREAKS\tWHAT IT DOES")
		for _, d := range reliable.Defects() {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", d.Name, d.Breaks, d.Description)
		}
		fmt.Fprintln(tw, "\nVARIANT\t\tWHAT IT DOES (a correct client: breaks nothing)")
		for _, v := range Variants() {
			fmt.Fprintf(tw, "%s\t\t%s\n", v.Name, v.Description)
		}
		_ = tw.Flush()
		return exitRan
	}
	defect := reliable.Defect(*mutant)
	if !reliable.ValidDefect(defect) {
		fmt.Fprintf(stderr, "reliable-driver: unknown mutant %q (see --list)\n", *mutant)
		return exitUnsupported
	}
	on, err := parseVariants(*variant)
	if err != nil {
		fmt.Fprintf(stderr, "reliable-driver: %v\n", err)
		return exitUnsupported
	}
	d := &driver{getenv: getenv, stdout: stdout, stderr: stderr, defect: defect, variants: on}
	if err := json.Unmarshal([]byte(getenv(clientsuite.EnvContext)), &d.p); err != nil {
		fmt.Fprintf(stderr, "reliable-driver: %s: %v\n", clientsuite.EnvContext, err)
		return exitUnsupported
	}
	if _, ok := clientsuite.LookupScenario(getenv(clientsuite.EnvScenario)); !ok {
		fmt.Fprintf(stderr, "reliable-driver: scenario %q is not one this driver knows\n", getenv(clientsuite.EnvScenario))
		return exitUnsupported
	}
	d.url = getenv(clientsuite.EnvURL)
	if d.url == "" && fs.NArg() > 0 {
		d.url = fs.Arg(fs.NArg() - 1)
	}
	return d.run(ctx)
}

type driver struct {
	getenv         func(string) string
	stdout, stderr io.Writer
	defect         reliable.Defect
	variants       map[Variant]bool
	p              clientsuite.Params
	url            string

	outMu sync.Mutex
}

func (d *driver) logf(format string, args ...any) {
	fmt.Fprintf(d.stderr, "reliable-driver [%s %s %s]: %s\n", d.p.Scenario, d.p.Transport, d.p.ProtocolVersion, fmt.Sprintf(format, args...))
}

// outcome prints one outcome line.
func (d *driver) outcome(tool, outcome, detail string) {
	b, _ := json.Marshal(clientsuite.Outcome{MCPConform: "outcome", Tool: tool, Outcome: outcome, Detail: detail})
	d.outMu.Lock()
	defer d.outMu.Unlock()
	fmt.Fprintln(d.stdout, string(b))
}

// conn is the driver's connection: the wire, and the stdio server when the
// client started one.
type conn struct {
	c    clients.Conn
	w    *clients.Wire
	h    *clients.HTTPWire
	srv  *reliable.Server
	tap  *reliable.Tap
	resp *reliable.Responder
	// vt is the variants' HTTP transport, when one is on.
	vt *variantTransport
}

func (d *driver) connect() (*conn, error) {
	cn := &conn{tap: &reliable.Tap{}}
	switch d.p.Transport {
	case clientsuite.Stdio:
		var argv []string
		if err := json.Unmarshal([]byte(d.getenv(clientsuite.EnvServerArg)), &argv); err != nil || len(argv) == 0 {
			return nil, fmt.Errorf("%s: not a JSON array of strings: %v", clientsuite.EnvServerArg, err)
		}
		srv, err := reliable.StartServer(argv, reliable.ServerOptions{Stderr: d.stderr, Tap: cn.tap, Defect: d.defect})
		if err != nil {
			return nil, err
		}
		cn.srv = srv
		stream := srv.Stream()
		if d.variants[SlowFirstRequest] {
			stream = &slowWriter{ReadWriteCloser: stream}
		}
		cn.w = clients.NewWire(stream, clients.WireOptions{ClientName: d.p.ClientID, ProbeTimeout: d.p.InitializeTimeout()})
		cn.c = cn.w
	case clientsuite.HTTP:
		if d.url == "" {
			return nil, errors.New("no server URL (MCP_CONFORM_URL, or the last argument)")
		}
		hc := reliable.NewHTTPClient(reliable.HTTPClientOptions{Tap: cn.tap, Defect: d.defect})
		if d.variants[SlowFirstRequest] || d.variants[CostlyReconnect] || d.variants[CloseStreamsOnExit] {
			cn.vt = &variantTransport{base: hc.Transport, on: d.variants}
			hc.Transport = cn.vt
		}
		cn.h = clients.NewHTTPWire(d.url, clients.HTTPOptions{ClientName: d.p.ClientID, ProbeTimeout: d.p.InitializeTimeout(), Client: hc})
		cn.c = cn.h
	default:
		return nil, fmt.Errorf("transport %q", d.p.Transport)
	}
	// Answer the server's requests from the first message on: a ping may
	// come as soon as the client said it is initialized.
	var ro reliable.RespondOptions
	if d.variants[LatePingAnswer] {
		ro = reliable.RespondOptions{Delay: latePing, AbandonOnClose: true}
	}
	cn.resp = reliable.RespondWith(cn.c, d.defect, ro)
	return cn, nil
}

// close shuts the connection down: the responder first (it answers what
// already arrived), then the server the way the stdio transport says (stdin
// first), then the wire.
func (cn *conn) close() {
	if cn.vt != nil && cn.vt.on[CloseStreamsOnExit] {
		cn.vt.closeAll()
	}
	_ = cn.resp.Close()
	if cn.srv != nil {
		_ = cn.srv.Close()
	}
	_ = cn.c.Close()
}

func (d *driver) run(ctx context.Context) int {
	ctx, stop := context.WithTimeout(ctx, time.Duration(d.p.DeadlineMs)*time.Millisecond)
	defer stop()
	if d.variants[StaggeredStart] {
		sleepCtx(ctx, startDelay(d.p.ClientID))
	}
	cn, err := d.connect()
	if err != nil {
		d.logf("connect: %v", err)
		return exitFailed
	}
	defer cn.close()
	if d.defect == reliable.RequestBeforeInitialize && strings.HasPrefix(d.p.ProtocolVersion, "2025-") {
		d.requestBeforeInitialize(ctx, cn)
	}
	nctx, ncancel := context.WithTimeout(ctx, d.p.InitializeTimeout())
	_, err = cn.c.Negotiate(nctx, d.p.ProtocolVersion)
	timedOut := nctx.Err() != nil
	ncancel()
	if err != nil {
		if timedOut && d.defect == reliable.CancelInitialize {
			d.cancelInitialize(ctx, cn)
		}
		d.logf("negotiate %s: %v", d.p.ProtocolVersion, err)
		d.outcome(d.p.Tool, outcomeOfErr(timedOut), err.Error())
		d.linger(ctx)
		return exitFailed
	}
	rc := reliable.New(d.transport(cn), d.options())
	defer rc.Close()
	calls := []call{{tool: d.p.Tool, args: d.p.Arguments, policy: d.policy()}}
	if d.p.Calls >= 2 {
		calls = append(calls, call{tool: "echo", args: map[string]any{"text": "hello"}, policy: reliable.Policy{Class: reliable.ClassSafe, MaxAttempts: 1}})
	}
	var wg sync.WaitGroup
	for i, c := range calls {
		if i > 0 {
			// The second call goes while the first is in flight: once the
			// first's request is on the wire.
			if err := cn.tap.Wait(ctx, "tools/call", 1); err != nil {
				d.logf("waiting for the first call to go out: %v", err)
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := rc.Do(ctx, "tools/call", map[string]any{"name": c.tool, "arguments": c.args}, c.policy)
			outcome, detail := describe(res)
			d.outcome(c.tool, outcome, detail)
		}()
	}
	wg.Wait()
	d.linger(ctx)
	return exitRan
}

type call struct {
	tool   string
	args   map[string]any
	policy reliable.Policy
}

func (d *driver) linger(ctx context.Context) {
	if d.p.LingerMs <= 0 {
		return
	}
	t := time.NewTimer(d.p.Linger())
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// transport binds the reliable client to the connection.
func (d *driver) transport(cn *conn) reliable.Transport {
	if cn.w != nil {
		return reliable.Stdio{W: cn.w, Defect: d.defect}
	}
	resumes := 0
	if d.p.Reconnect != nil {
		resumes = d.p.Reconnect.MaxAttempts
	}
	return reliable.HTTP{W: cn.h, ClientID: d.p.ClientID, Resumes: resumes, Defect: d.defect}
}

// options maps the context's timeouts onto the reliable client's two
// clocks: a timeout reset on progress is the idle clock, the maximum is
// the maximum; a timeout that is not reset is a maximum too.
func (d *driver) options() reliable.Options {
	o := reliable.Options{ID: d.p.ClientID, Reason: "mcp-conform reliable client: timeout", Defect: d.defect}
	switch {
	case d.p.ResetTimeoutOnProgress:
		o.Idle, o.Max = d.p.Timeout(), d.p.MaxTotal()
	case d.p.MaxTotalTimeoutMs > 0 && d.p.MaxTotal() < d.p.Timeout():
		o.Max = d.p.MaxTotal()
	default:
		o.Max = d.p.Timeout()
	}
	return o
}

// policy is the retry policy of the scenario's call.
func (d *driver) policy() reliable.Policy {
	p := reliable.Policy{Class: reliable.ClassSafe, MaxAttempts: 1}
	if r := d.p.Retry; r != nil {
		if c, err := reliable.ParseClass(r.Class); err == nil {
			p.Class = c
		} else {
			d.logf("%v: treated as unsafe", err)
			p.Class = reliable.ClassUnsafe
		}
		p.Key, p.MaxAttempts = r.Key, max(r.MaxAttempts, 1)
	}
	return p
}

// describe turns a result into an outcome line.
func describe(res reliable.Result) (outcome, detail string) {
	switch res.State {
	case reliable.Completed:
		if res.Response.Env.Kind == jsonrpc.ErrorReply {
			return "error", string(res.Response.Raw)
		}
		return "result", fmt.Sprintf("after %d attempt(s)", res.Attempts)
	case reliable.IdleTimeout, reliable.MaxTimeout:
		return "timeout", fmt.Sprintf("%s after %s (%d attempt(s), cancelled by %s)", res.State, res.Elapsed.Round(time.Millisecond), res.Attempts, orNone(string(res.Signal)))
	case reliable.Cancelled:
		return "cancelled", ""
	}
	detail = fmt.Sprintf("%d attempt(s)", res.Attempts)
	if res.Err != nil {
		detail += ": " + res.Err.Error()
	}
	if res.Unresolved {
		detail += "; unresolved: an unsafe mutation is not retried (reconcile before trying again)"
	}
	return "failed", detail
}

func orNone(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

func outcomeOfErr(timedOut bool) string {
	if timedOut {
		return "timeout"
	}
	return "failed"
}

// requestBeforeInitialize is the request-before-initialize defect: a
// tools/list goes out before initialize, answered or not.
func (d *driver) requestBeforeInitialize(ctx context.Context, cn *conn) {
	wctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	if f, err := cn.c.Send(wctx, cn.c.NewID(), "tools/list", nil); err == nil {
		_, _ = f.Wait(wctx)
	}
}

// cancelInitialize is the cancel-initialize defect: the timed-out
// initialize is cancelled.
func (d *driver) cancelInitialize(ctx context.Context, cn *conn) {
	req, ok := cn.tap.Last("initialize")
	if !ok {
		return
	}
	params := map[string]any{"requestId": req.ID.Raw(), "reason": "initialize timed out"}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if cn.w != nil {
		_ = cn.w.Notify(cctx, "notifications/cancelled", params)
		return
	}
	if status, err := cn.h.Notify(cctx, "notifications/cancelled", params); err == nil && status != http.StatusAccepted {
		d.logf("cancel initialize: HTTP %d", status)
	}
}

// Package proxyrun runs the fault proxy alone (`mcp-conform proxy`)
// between a real client and a server: it wraps a stdio server command
// (standing between it and this process's own stdin and stdout) or fronts
// a Streamable HTTP or WebSocket endpoint, records every message to a
// transcript, applies the rules of a fault file, and optionally serves the
// control API, until the client or the server ends, or SIGINT/SIGTERM.
package proxyrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/faultproxy/control"
	"github.com/mcp-conform/mcp-conform/internal/usageerr"
)

// proxyMemoryEntries bounds the transcript entries the proxy keeps in
// memory (hold-until and the control of faults need only recent ones; the
// transcript file has them all).
const proxyMemoryEntries = 4096

// UsageError is a bad command line: exit code 2, nothing started.
type UsageError = usageerr.Error

func usage(err error) error { return &UsageError{Err: err} }

// Options are what the proxy command was given.
type Options struct {
	// Command is the stdio server's command line; Upstream, when set
	// instead, the http(s):// or ws(s):// endpoint fronted on Listen.
	Command     []string
	Upstream    string
	Listen      string
	AllowRemote bool
	// ListenSet marks a --listen given on the command line.
	ListenSet bool
	// Faults is the rule file (YAML), Transcript the JSONL file.
	Faults, Transcript string
	MaxFrame           int
	// Control is the control API's address ("" none).
	Control            string
	ControlAllowRemote bool
	// Stdin and Stdout are the client's end in stdio mode; Stdout also
	// gets the proxy's URL in network mode; Stderr the proxy's lines.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Authorize, when set (--url), adds the proxy's credentials to every
	// upstream request (--header, --header-env, --oauth-…); Redact names
	// the headers whose values the transcript hides besides the usual
	// ones.
	Authorize func(req *http.Request) error
	Redact    []string
	// Seed is mixed into every rule's seed (faultproxy.NewRulesSeed):
	// --seed reproduces the draws of probabilistic rules.
	Seed uint64
}

// Run checks the options (a UsageError for a bad command line), starts the
// proxy and serves until it ends.
func Run(ctx context.Context, o Options) error {
	if ctx == nil {
		ctx = context.Background()
	}
	httpMode := o.Upstream != ""
	switch {
	case httpMode && len(o.Command) > 0:
		return usage(errors.New("proxy: give either --url or a server command, not both"))
	case !httpMode && len(o.Command) == 0:
		return usage(errors.New("proxy: give a server command after -- (stdio) or --url (Streamable HTTP)"))
	case !httpMode && (o.ListenSet || o.AllowRemote):
		return usage(errors.New("proxy: --listen and --allow-remote need --url"))
	}
	if httpMode && !o.AllowRemote {
		if err := checkLoopback(o.Listen); err != nil {
			return usage(err)
		}
	}
	ctl := controlFlags{addr: o.Control, allowRemote: o.ControlAllowRemote}
	if ctl.addr != "" && !ctl.allowRemote {
		if err := control.CheckLoopback(ctl.addr); err != nil {
			return usage(fmt.Errorf("--control: %w; add --control-allow-remote to expose it", err))
		}
	}
	var rules []faultproxy.Rule
	if o.Faults != "" {
		data, err := os.ReadFile(o.Faults)
		if err != nil {
			return usage(fmt.Errorf("--faults: %w", err))
		}
		if ctl.specs, err = faultproxy.ParseRuleSpecs(data); err != nil {
			return usage(err)
		}
		for _, spec := range ctl.specs {
			r, err := spec.Rule()
			if err != nil {
				return usage(err)
			}
			rules = append(rules, r)
		}
	}
	if httpMode {
		for _, r := range rules {
			if err := netRuleOK(r); err != nil {
				return usage(err)
			}
		}
	}
	var sink io.Writer
	if o.Transcript != "" {
		f, err := os.Create(o.Transcript)
		if err != nil {
			return fmt.Errorf("transcript: %w", err)
		}
		defer f.Close()
		sink = f
	}
	if httpMode && (strings.HasPrefix(o.Upstream, "ws://") || strings.HasPrefix(o.Upstream, "wss://")) {
		return runProxyWS(ctx, o.Upstream, o.Listen, rules, sink, o.MaxFrame, o.Stdout, o.Stderr, ctl, o)
	}
	if httpMode {
		return runProxyHTTP(ctx, o.Upstream, o.Listen, rules, sink, o.MaxFrame, o.Stdout, o.Stderr, ctl, o)
	}
	if o.Authorize != nil {
		return usage(errors.New("proxy: --header, --header-env and --oauth-… need --url"))
	}
	return runProxy(ctx, o.Command, rules, sink, o.MaxFrame, ctl, o)
}

// controlFlags are the control API's settings and the rule specs it starts
// with.
type controlFlags struct {
	addr        string
	allowRemote bool
	specs       []faultproxy.RuleSpec
}

// netRuleOK refuses the faults a network proxy (HTTP or WebSocket) cannot
// apply, as the fault registry says: in --url mode the proxy starts no
// server, so it has no process to signal (crash and pause need one).
func netRuleOK(r faultproxy.Rule) error {
	return faultproxy.CheckRule(r, faultproxy.CapStream)
}

// startControl serves the control API for target when --control was given,
// and prints its URL and the seed of every rule on stderr.
func startControl(ctl controlFlags, target control.Target, transport, upstream, listen string, validate func(faultproxy.Rule) error, stderr io.Writer) (*control.Listener, error) {
	if ctl.addr == "" {
		return nil, nil
	}
	l, err := control.Listen(ctl.addr, control.Options{
		Target: target, Transport: transport, Upstream: upstream, Listen: listen,
		Initial: ctl.specs, Validate: validate, AllowRemote: ctl.allowRemote,
	})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(stderr, "mcp-conform proxy: control API %s\n", l.URL())
	for _, r := range target.Rules().List() {
		fmt.Fprintf(stderr, "mcp-conform proxy: rule %s seed %d\n", r.Name, r.Seed)
	}
	return l, nil
}

// checkLoopback refuses a listen address other than a loopback one: a
// fault proxy should not be exposed to the network by accident.
func checkLoopback(listen string) error {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return fmt.Errorf("--listen %q: %w", listen, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--listen %q is not a loopback address; add --allow-remote to expose the fault proxy to the network", listen)
}

func runProxy(ctx context.Context, argv []string, rules []faultproxy.Rule, sink io.Writer, maxFrame int, ctl controlFlags, o Options) error {
	rs := faultproxy.NewRulesSeed(o.Seed)
	if err := rs.Set(rules...); err != nil {
		return usage(err)
	}
	s, err := faultproxy.StartStdio(ctx, faultproxy.StdioOptions{
		Options: faultproxy.Options{TranscriptSink: sink, MaxFrame: maxFrame},
		Command: argv, Rules: rs, ClientIn: o.Stdin, ClientOut: writeCloser(o.Stdout), StderrTee: o.Stderr,
	})
	if err != nil {
		return err
	}
	// A long-lived proxy keeps only recent entries in memory; the
	// transcript file has them all.
	s.Transcript().SetLimit(proxyMemoryEntries)
	api, err := startControl(ctl, s, "stdio", strings.Join(argv, " "), "", nil, o.Stderr)
	if err != nil {
		_ = s.Close()
		return err
	}
	if api != nil {
		defer api.Close()
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	select {
	case <-s.Exited():
		// Let the server's last messages reach the client.
		<-s.Done(faultproxy.ServerToClient)
	case <-s.Done(faultproxy.ClientToServer):
	case <-sigs:
	}
	_ = s.Close()
	if err := s.ExitErr(); err != nil {
		fmt.Fprintf(o.Stderr, "mcp-conform proxy: server %v\n", err)
	}
	return nil
}

// writeCloser is w, closed at the end of a stdio proxy when it can be (the
// client then sees the end of the server's output).
func writeCloser(w io.Writer) io.WriteCloser {
	if wc, ok := w.(io.WriteCloser); ok {
		return wc
	}
	return nopCloser{w}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// netProxy is what a network proxy (HTTP or WebSocket) offers the proxy
// command and its control API.
type netProxy interface {
	control.Target
	URL() string
	Close() error
}

// startNetProxy starts a network proxy with the rules installed, from the
// shared options.
type startNetProxy func(ctx context.Context, opts faultproxy.Options, rs *faultproxy.Rules) (netProxy, error)

// runProxyHTTP fronts a Streamable HTTP endpoint until SIGINT, SIGTERM or
// ctx ends.
func runProxyHTTP(ctx context.Context, upstream, listen string, rules []faultproxy.Rule, sink io.Writer, maxFrame int, stdout, stderr io.Writer, ctl controlFlags, o Options) error {
	return runProxyNet(ctx, "http", upstream, rules, sink, maxFrame, stdout, stderr, ctl, o.Seed,
		func(ctx context.Context, opts faultproxy.Options, rs *faultproxy.Rules) (netProxy, error) {
			return faultproxy.StartHTTP(ctx, faultproxy.HTTPOptions{Options: opts, Upstream: upstream, Listen: listen, Rules: rs,
				Authorize: o.Authorize, Redact: o.Redact})
		})
}

// runProxyWS fronts a JSON-RPC-over-WebSocket server until SIGINT, SIGTERM
// or ctx ends.
func runProxyWS(ctx context.Context, upstream, listen string, rules []faultproxy.Rule, sink io.Writer, maxFrame int, stdout, stderr io.Writer, ctl controlFlags, o Options) error {
	return runProxyNet(ctx, "websocket", upstream, rules, sink, maxFrame, stdout, stderr, ctl, o.Seed,
		func(ctx context.Context, opts faultproxy.Options, rs *faultproxy.Rules) (netProxy, error) {
			return faultproxy.StartWebSocket(ctx, faultproxy.WebSocketOptions{Options: opts, Upstream: upstream, Listen: listen, Rules: rs,
				Authorize: o.Authorize})
		})
}

// runProxyNet runs a network proxy until SIGINT, SIGTERM or ctx ends. The
// proxy's URL goes to stdout (for scripts) and, with the upstream, to
// stderr (for people).
func runProxyNet(ctx context.Context, transport, upstream string, rules []faultproxy.Rule, sink io.Writer, maxFrame int, stdout, stderr io.Writer, ctl controlFlags, seed uint64, start startNetProxy) error {
	rs := faultproxy.NewRulesSeed(seed)
	if err := rs.Set(rules...); err != nil {
		return usage(err)
	}
	// Listen for signals before the URL is out: a client that reads it
	// may stop the proxy at once.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	p, err := start(ctx, faultproxy.Options{TranscriptSink: sink, MaxFrame: maxFrame}, rs)
	if err != nil {
		return err
	}
	p.Transcript().SetLimit(proxyMemoryEntries)
	api, err := startControl(ctl, p, transport, upstream, p.URL(), netRuleOK, stderr)
	if err != nil {
		_ = p.Close()
		return err
	}
	if api != nil {
		defer api.Close()
	}
	fmt.Fprintf(stderr, "mcp-conform proxy: %s → %s\n", p.URL(), upstream)
	fmt.Fprintln(stdout, p.URL())
	var sig os.Signal
	select {
	case sig = <-sigs:
	case <-ctx.Done():
	}
	_ = p.Close()
	if sig != nil {
		fmt.Fprintf(stderr, "mcp-conform proxy: stopped (%v)\n", sig)
	}
	return nil
}

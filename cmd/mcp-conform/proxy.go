package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/faultproxy/control"
)

// proxyMemoryEntries bounds the transcript entries the proxy command keeps
// in memory (hold-until and the control of faults need only recent ones).
const proxyMemoryEntries = 4096

func newProxyCmd() *cobra.Command {
	var transcript, faults, upstream, listen string
	var maxFrame int
	var allowRemote bool
	var ctl controlFlags
	cmd := &cobra.Command{
		Use:   "proxy [flags] (-- SERVER-COMMAND [ARGS...] | --url UPSTREAM)",
		Short: "Run the fault proxy alone in front of a stdio or Streamable HTTP MCP server",
		Long: `Run the fault proxy alone between a real client (an IDE, an agent) and a server.
Every message is recorded to the transcript (JSONL, written as it goes) and the rules
of the fault file are applied.

stdio: start SERVER-COMMAND as a child process and stand between it and this
process's own stdin/stdout: point the client at "mcp-conform proxy -- CMD" instead
of CMD. The server's stderr is passed through and recorded. The proxy ends when
the client closes its stdin, the server exits, or on SIGINT/SIGTERM.

WebSocket: with --url ws://HOST:PORT/PATH, the same as HTTP, for servers that speak
JSON-RPC over WebSocket (one message per frame): each frame is a message; the
proxy's ws:// URL is printed on stdout.

Streamable HTTP: with --url, listen on --listen (default 127.0.0.1 on a free port)
in front of the server's MCP endpoint UPSTREAM, print the proxy's endpoint URL on
stdout (and a line "proxy: URL → UPSTREAM" on stderr), and relay until SIGINT or
SIGTERM. Point the client at the printed URL. Each POST body, JSON response and
SSE event is one message. The proxy listens only on a loopback address unless
--allow-remote is given.

Fault file (YAML):
  rules:
    - name: lose-first-tools-call-response
      match: {dir: s2c, kind: response, repliesTo: tools/call}
      nth: 1
      fault: {drop: true}
    - name: cut-after-first-progress          # HTTP: end the SSE stream
      match: {dir: s2c, method: notifications/progress}
      times: 1
      fault: {cut: true, deliver: true}
Faults: drop, delay, holdUntil (+max), duplicate, inject (+injectDir, before, replace),
pass; stdio only: crash (+deliverFirst), pause; HTTP only: cut (+deliver: pass the
matched event first), reset (abort the connection), buffer (hold SSE until N bytes),
throttle (bytes/s toward the client), status (+body: answer with this HTTP status).
Ids are JSON values: id: 3 is the number, id: "3" the string. A rule may add
probability (0..1, drawn from the rule's own random source) and seed.

Control API: with --control ADDR (e.g. 127.0.0.1:8474, or 127.0.0.1:0 for a free
port) the proxy also serves an HTTP+JSON API to list, add, update and remove rules
while traffic flows, read the transcript and reset; its URL and each rule's seed
are printed on stderr. Rules sent to it use the fault-file schema above:
  curl -s localhost:8474/rules -d '{"name":"lose","match":{"dir":"s2c","repliesTo":"tools/call"},"fault":{"drop":true}}'
  curl -s -X DELETE localhost:8474/rules/lose
  curl -s 'localhost:8474/transcript?since=0'
Endpoints: GET /status, GET|PUT|POST /rules, GET|PUT|DELETE /rules/NAME,
POST /reset, GET /transcript?since=N. It listens on loopback only unless
--control-allow-remote is given. The Go client is package
github.com/mcp-conform/mcp-conform/faultproxy/control/proxyctl.`,
		Example: `  mcp-conform proxy --transcript /tmp/t.jsonl --faults drop.yaml -- node server.js stdio
  mcp-conform fixture --http 127.0.0.1:3001 &
  mcp-conform proxy --url http://127.0.0.1:3001/mcp --listen 127.0.0.1:3002 \
      --faults cut.yaml --transcript /tmp/t.jsonl     # prints http://127.0.0.1:3002/mcp`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			httpMode := upstream != ""
			switch {
			case httpMode && len(args) > 0:
				return usageError{errors.New("proxy: give either --url or a server command, not both")}
			case !httpMode && len(args) == 0:
				return usageError{errors.New("proxy: give a server command after -- (stdio) or --url (Streamable HTTP)")}
			case !httpMode && (cmd.Flags().Changed("listen") || allowRemote):
				return usageError{errors.New("proxy: --listen and --allow-remote need --url")}
			}
			if httpMode && !allowRemote {
				if err := checkLoopback(listen); err != nil {
					return usageError{err}
				}
			}
			if ctl.addr != "" && !ctl.allowRemote {
				if err := control.CheckLoopback(ctl.addr); err != nil {
					return usageError{fmt.Errorf("--control: %w; add --control-allow-remote to expose it", err)}
				}
			}
			var rules []faultproxy.Rule
			if faults != "" {
				data, err := os.ReadFile(faults)
				if err != nil {
					return usageError{fmt.Errorf("--faults: %w", err)}
				}
				if ctl.specs, err = faultproxy.ParseRuleSpecs(data); err != nil {
					return usageError{err}
				}
				for _, spec := range ctl.specs {
					r, err := spec.Rule()
					if err != nil {
						return usageError{err}
					}
					rules = append(rules, r)
				}
			}
			if httpMode {
				for _, r := range rules {
					if err := netRuleOK(r); err != nil {
						return usageError{err}
					}
				}
			}
			var sink io.Writer
			if transcript != "" {
				f, err := os.Create(transcript)
				if err != nil {
					return fmt.Errorf("transcript: %w", err)
				}
				defer f.Close()
				sink = f
			}
			if httpMode && (strings.HasPrefix(upstream, "ws://") || strings.HasPrefix(upstream, "wss://")) {
				return runProxyWS(cmd.Context(), upstream, listen, rules, sink, maxFrame, cmd.OutOrStdout(), cmd.ErrOrStderr(), ctl)
			}
			if httpMode {
				return runProxyHTTP(cmd.Context(), upstream, listen, rules, sink, maxFrame, cmd.OutOrStdout(), cmd.ErrOrStderr(), ctl)
			}
			return runProxy(cmd.Context(), args, rules, sink, maxFrame, ctl)
		},
	}
	cmd.Flags().StringVar(&transcript, "transcript", "", "write every message and fault to this JSONL file, as it goes")
	cmd.Flags().StringVar(&faults, "faults", "", "rule file (YAML) of faults to apply")
	cmd.Flags().IntVar(&maxFrame, "max-frame", faultproxy.DefaultMaxFrame, "largest message parsed; longer ones pass through unparsed (stdio) or are refused with 413 (HTTP request bodies)")
	cmd.Flags().StringVar(&upstream, "url", "", "front this Streamable HTTP MCP endpoint (e.g. http://127.0.0.1:3001/mcp) instead of a stdio command")
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:0", "address the HTTP proxy listens on (--url; port 0 picks a free one)")
	cmd.Flags().BoolVar(&allowRemote, "allow-remote", false, "let --listen be a non-loopback address (exposes the fault proxy to the network)")
	cmd.Flags().StringVar(&ctl.addr, "control", "", "serve the control API (rules, transcript, reset) on this loopback address, e.g. 127.0.0.1:8474 (port 0 picks one; the URL is printed on stderr)")
	cmd.Flags().BoolVar(&ctl.allowRemote, "control-allow-remote", false, "let --control be a non-loopback address (the API has no authentication)")
	return cmd
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

func runProxy(ctx context.Context, argv []string, rules []faultproxy.Rule, sink io.Writer, maxFrame int, ctl controlFlags) error {
	if ctx == nil {
		ctx = context.Background()
	}
	rs := faultproxy.NewRules()
	if err := rs.Set(rules...); err != nil {
		return usageError{err}
	}
	s, err := faultproxy.StartStdio(ctx, faultproxy.StdioOptions{
		Options: faultproxy.Options{TranscriptSink: sink, MaxFrame: maxFrame},
		Command: argv, Rules: rs, ClientIn: os.Stdin, ClientOut: os.Stdout, StderrTee: os.Stderr,
	})
	if err != nil {
		return err
	}
	// A long-lived proxy keeps only recent entries in memory; the
	// transcript file has them all.
	s.Transcript().SetLimit(proxyMemoryEntries)
	api, err := startControl(ctl, s, "stdio", strings.Join(argv, " "), "", nil, os.Stderr)
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
		fmt.Fprintf(os.Stderr, "mcp-conform proxy: server %v\n", err)
	}
	return nil
}

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
func runProxyHTTP(ctx context.Context, upstream, listen string, rules []faultproxy.Rule, sink io.Writer, maxFrame int, stdout, stderr io.Writer, ctl controlFlags) error {
	return runProxyNet(ctx, "http", upstream, rules, sink, maxFrame, stdout, stderr, ctl,
		func(ctx context.Context, opts faultproxy.Options, rs *faultproxy.Rules) (netProxy, error) {
			return faultproxy.StartHTTP(ctx, faultproxy.HTTPOptions{Options: opts, Upstream: upstream, Listen: listen, Rules: rs})
		})
}

// runProxyWS fronts a JSON-RPC-over-WebSocket server until SIGINT, SIGTERM
// or ctx ends.
func runProxyWS(ctx context.Context, upstream, listen string, rules []faultproxy.Rule, sink io.Writer, maxFrame int, stdout, stderr io.Writer, ctl controlFlags) error {
	return runProxyNet(ctx, "websocket", upstream, rules, sink, maxFrame, stdout, stderr, ctl,
		func(ctx context.Context, opts faultproxy.Options, rs *faultproxy.Rules) (netProxy, error) {
			return faultproxy.StartWebSocket(ctx, faultproxy.WebSocketOptions{Options: opts, Upstream: upstream, Listen: listen, Rules: rs})
		})
}

// runProxyNet runs a network proxy until SIGINT, SIGTERM or ctx ends. The
// proxy's URL goes to stdout (for scripts) and, with the upstream, to
// stderr (for people).
func runProxyNet(ctx context.Context, transport, upstream string, rules []faultproxy.Rule, sink io.Writer, maxFrame int, stdout, stderr io.Writer, ctl controlFlags, start startNetProxy) error {
	if ctx == nil {
		ctx = context.Background()
	}
	rs := faultproxy.NewRules()
	if err := rs.Set(rules...); err != nil {
		return usageError{err}
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

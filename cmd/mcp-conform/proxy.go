package main

import (
	"github.com/spf13/cobra"

	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/internal/proxyrun"
)

func newProxyCmd() *cobra.Command {
	var o proxyrun.Options
	var af authFlags
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
			o.Command, o.ListenSet = args, cmd.Flags().Changed("listen")
			o.Stdin, o.Stdout, o.Stderr = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
			creds, err := af.credentials(cmd.ErrOrStderr())
			if err != nil {
				return usageError{err}
			}
			if err := o.SetCredentials(creds); err != nil {
				return err
			}
			return proxyrun.Run(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.Transcript, "transcript", "", "write every message and fault to this JSONL file, as it goes")
	cmd.Flags().StringVar(&o.Faults, "faults", "", "rule file (YAML) of faults to apply")
	cmd.Flags().IntVar(&o.MaxFrame, "max-frame", faultproxy.DefaultMaxFrame, "largest message parsed; longer ones pass through unparsed (stdio) or are refused with 413 (HTTP request bodies)")
	cmd.Flags().StringVar(&o.Upstream, "url", "", "front this Streamable HTTP MCP endpoint (e.g. http://127.0.0.1:3001/mcp) instead of a stdio command")
	cmd.Flags().StringVar(&o.Listen, "listen", "127.0.0.1:0", "address the HTTP proxy listens on (--url; port 0 picks a free one)")
	cmd.Flags().BoolVar(&o.AllowRemote, "allow-remote", false, "let --listen be a non-loopback address (exposes the fault proxy to the network)")
	cmd.Flags().StringVar(&o.Control, "control", "", "serve the control API (rules, transcript, reset) on this loopback address, e.g. 127.0.0.1:8474 (port 0 picks one; the URL is printed on stderr)")
	cmd.Flags().BoolVar(&o.ControlAllowRemote, "control-allow-remote", false, "let --control be a non-loopback address (the API has no authentication)")
	cmd.Flags().Uint64Var(&o.Seed, "seed", 0, "mixed into every rule's seed: the same --seed reproduces the draws of probabilistic rules (each rule's seed is printed with the control API)")
	af.register(cmd.Flags(), "the proxy sends upstream (--url; added when the client's request lacks it)")
	return cmd
}

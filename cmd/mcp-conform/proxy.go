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
		Use:     "proxy [flags] (-- SERVER-COMMAND [ARGS...] | --url UPSTREAM)",
		Short:   "Run the fault proxy alone in front of a stdio or Streamable HTTP MCP server",
		Long:    help("proxy.txt"),
		Example: help("proxy.example.txt"),
		Args:    cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Command, o.ListenSet = args, cmd.Flags().Changed("listen")
			o.Stdin, o.Stdout, o.Stderr = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
			if err := o.UseCredentials(af.credentials, cmd.ErrOrStderr()); err != nil {
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

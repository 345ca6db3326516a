package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcp-conform/mcp-conform/internal/herd"
)

func newHerdCmd() *cobra.Command {
	var o herd.CLIOptions
	cmd := &cobra.Command{
		Use:   "herd [--url URL] [--clients N]",
		Short: "Measure a reconnect herd: N clients lose their streams at once and reconnect",
		Long: `Measure what happens when many clients lose their streams at the same instant.

N clients (default 200, at most 1000) each open a long tools/call stream through the
fault proxy. When every stream has delivered its first progress notification (a
message barrier), the proxy cuts all of them at once. Each client then follows the
reconnect plan — a new request with a new id, and a refetch of tools/list — twice,
in two phases: once reconnecting immediately, once waiting a capped exponential
backoff with deterministic jitter first (attempt 0 up to 250 ms, doubling, capped at
8 s; the jitter drawn from the client's id and the attempt). Failed attempts are
retried (at most 6). The report gives, for both side by side: success rate, time
until every client recovered, and p50/p99 recovery latency from the cut.

Without --url the built-in reference server is started in-process. --url must be a
loopback address: the herd is a load test and is not aimed at other hosts.`,
		Example: `  mcp-conform herd
  mcp-conform herd --clients 500 --json herd.json
  mcp-conform herd --url http://127.0.0.1:3001/mcp --tool trigger-long-running-operation --args '{"duration":30,"steps":60}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return herd.RunCLI(cmd.Context(), o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.URL, "url", "", "loopback Streamable HTTP endpoint (default: the built-in reference server)")
	f.IntVar(&o.Clients, "clients", herd.DefaultClients, fmt.Sprintf("number of clients (1 to %d)", herd.MaxClients))
	f.StringVar(&o.Tool, "tool", "slow", "long-running tool each client calls to hold its stream open")
	f.StringVar(&o.Args, "args", `{"steps":400,"stepMs":50}`, "the tool's arguments (JSON object)")
	f.StringVar(&o.JSON, "json", "", "write the measurements as JSON to this file")
	f.DurationVar(&o.Timeout, "timeout", 3*time.Minute, "bound on the whole measurement")
	f.Uint64Var(&o.Seed, "seed", 0, "seed of the backoff jitter: the same seed gives every client the same delays (default: one is chosen and printed)")
	return cmd
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcp-conform/mcp-conform/internal/herd"
	"github.com/mcp-conform/mcp-conform/reports"
)

func newHerdCmd() *cobra.Command {
	var o herd.Options
	var args, jsonOut string
	var timeout time.Duration
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
			if o.Clients < 1 || o.Clients > herd.MaxClients {
				return usageError{fmt.Errorf("--clients %d: want 1 to %d", o.Clients, herd.MaxClients)}
			}
			if o.URL != "" {
				if err := herd.CheckLoopback(o.URL); err != nil {
					return usageError{err}
				}
			}
			if err := json.Unmarshal([]byte(args), &o.Args); err != nil {
				return usageError{fmt.Errorf("--args %q: not a JSON object: %w", args, err)}
			}
			if o.Seed == 0 {
				o.Seed = reports.NewSeed()
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			rep, err := herd.Run(ctx, o, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			herd.Print(cmd.OutOrStdout(), rep)
			if jsonOut != "" {
				b, _ := json.MarshalIndent(rep, "", "  ")
				if err := os.WriteFile(jsonOut, append(b, '\n'), 0o644); err != nil {
					return fmt.Errorf("write %s: %w", jsonOut, err)
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.URL, "url", "", "loopback Streamable HTTP endpoint (default: the built-in reference server)")
	f.IntVar(&o.Clients, "clients", herd.DefaultClients, fmt.Sprintf("number of clients (1 to %d)", herd.MaxClients))
	f.StringVar(&o.Tool, "tool", "slow", "long-running tool each client calls to hold its stream open")
	f.StringVar(&args, "args", `{"steps":400,"stepMs":50}`, "the tool's arguments (JSON object)")
	f.StringVar(&jsonOut, "json", "", "write the measurements as JSON to this file")
	f.DurationVar(&timeout, "timeout", 3*time.Minute, "bound on the whole measurement")
	f.Uint64Var(&o.Seed, "seed", 0, "seed of the backoff jitter: the same seed gives every client the same delays (default: one is chosen and printed)")
	return cmd
}

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
		Use:     "herd [--url URL] [--clients N]",
		Short:   "Measure a reconnect herd: N clients lose their streams at once and reconnect",
		Long:    help("herd.txt"),
		Example: help("herd.example.txt"),
		Args:    cobra.NoArgs,
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

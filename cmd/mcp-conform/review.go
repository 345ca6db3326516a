package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/mcp-conform/mcp-conform/internal/review"
)

func newReviewCmd() *cobra.Command {
	var f review.CLIOptions
	var af authFlags
	cmd := &cobra.Command{
		Use:     "review",
		Short:   "Print the reliability review of each tool a target exposes",
		Long:    help("review.txt"),
		Example: help("review.example.txt"),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.Auth, f.Credentials = af.Set(), af.credentials
			return exit(review.RunCLI(cmd.Context(), f, cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Stdio, "stdio", "", "command line of a stdio MCP server to review (split by the shell's quoting rules, without a shell: quote an argument with spaces; nothing is expanded)")
	fl.StringVar(&f.URL, "url", "", "URL of a running Streamable HTTP MCP server")
	fl.StringVar(&f.Manifest, "manifest", "", "target manifest (YAML): its roles decide retry classes and idempotency keys")
	fl.StringVar(&f.Mutant, "mutant", "", "built-in target with this mutant switched on")
	fl.StringVar(&f.Spec, "spec", "", "force a protocol version (default: the newest the server accepts)")
	fl.StringVar(&f.Report, "report", "", "JSON report of a previous run (mcp-conform run --json): cite its verdicts")
	fl.StringVar(&f.Format, "format", "text", "output: text or json")
	fl.DurationVar(&f.Idle, "idle-timeout", 10*time.Second, "idle clock of a call: how long without progress before it is cancelled")
	fl.DurationVar(&f.MaxTimeout, "call-timeout", 30*time.Second, "maximum clock of a call (never reset), as run --call-timeout")
	fl.DurationVar(&f.StartTimeout, "start-timeout", 15*time.Second, "bound on starting the target and negotiating a version")
	fl.DurationVar(&f.OpTimeout, "op-timeout", 5*time.Second, "bound on tools/list")
	af.register(fl, "to the target")
	return cmd
}

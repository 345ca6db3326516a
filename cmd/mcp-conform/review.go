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
		Use:   "review",
		Short: "Print the reliability review of each tool a target exposes",
		Long: `Connect to the target, list its tools and print, for each one, the reliability
review of the seeds: transport and how a call is cancelled on it, the timeout
policy (idle clock reset by progress, maximum never reset), the retry class
(Safe: read-only, retry with a new id; Conditional: a keyed mutation, retry with
the same key and arguments; Unsafe: reconcile before any retry), the idempotency
boundary (the key argument), the flow-control checks and the failure modes that
apply, and the checks that exercise the tool. With --report, each row cites the
verdicts of a previous run's JSON report.

The retry class follows the same rules as the run's table (the manifest's
"mutation" role with a key is Conditional, without one Unsafe; then
readOnlyHint: true is Safe; anything else may mutate: Unsafe); with --report,
the row of that report's retry-class table, which also saw the run's IDEM
checks, is used. Annotations are hints from the server, untrusted by the
specification.

With no target, the built-in reference server is reviewed on both transports.`,
		Example: `  mcp-conform review
  mcp-conform review --manifest fixtures/targets/server-everything.yaml
  mcp-conform run --json report.json && mcp-conform review --report report.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.Auth, f.Credentials = af.Set(), af.credentials
			code, err := review.RunCLI(cmd.Context(), f, cmd.OutOrStdout(), cmd.ErrOrStderr())
			if err == nil && code != 0 {
				err = exitError{code}
			}
			return err
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

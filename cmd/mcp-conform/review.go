package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/internal/review"
	"github.com/mcp-conform/mcp-conform/internal/runner"
	"github.com/mcp-conform/mcp-conform/suites"
)

type reviewFlags struct {
	stdio, url, manifest, mutant string
	auth                         authFlags
	spec, report, format         string
	idle, maxTimeout             time.Duration
	startTimeout, opTimeout      time.Duration
}

func newReviewCmd() *cobra.Command {
	var f reviewFlags
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
		RunE: func(cmd *cobra.Command, _ []string) error { return runReview(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.stdio, "stdio", "", "command line of a stdio MCP server to review (split by the shell's quoting rules, without a shell: quote an argument with spaces; nothing is expanded)")
	fl.StringVar(&f.url, "url", "", "URL of a running Streamable HTTP MCP server")
	fl.StringVar(&f.manifest, "manifest", "", "target manifest (YAML): its roles decide retry classes and idempotency keys")
	fl.StringVar(&f.mutant, "mutant", "", "built-in target with this mutant switched on")
	fl.StringVar(&f.spec, "spec", "", "force a protocol version (default: the newest the server accepts)")
	fl.StringVar(&f.report, "report", "", "JSON report of a previous run (mcp-conform run --json): cite its verdicts")
	fl.StringVar(&f.format, "format", "text", "output: text or json")
	fl.DurationVar(&f.idle, "idle-timeout", 10*time.Second, "idle clock of a call: how long without progress before it is cancelled")
	fl.DurationVar(&f.maxTimeout, "call-timeout", 30*time.Second, "maximum clock of a call (never reset), as run --call-timeout")
	fl.DurationVar(&f.startTimeout, "start-timeout", 15*time.Second, "bound on starting the target and negotiating a version")
	fl.DurationVar(&f.opTimeout, "op-timeout", 5*time.Second, "bound on tools/list")
	f.auth.register(fl, "to the target")
	return cmd
}

func runReview(cmd *cobra.Command, f reviewFlags) error {
	ts, err := runner.Targets(runner.Named{Stdio: f.stdio, URL: f.url, Manifest: f.manifest, Mutant: f.mutant})
	switch {
	case err != nil:
		return usageError{err}
	case f.spec != "" && !clients.IsKnownVersion(f.spec):
		return usageError{fmt.Errorf("--spec %q: known versions are %s", f.spec, strings.Join(clients.KnownVersions, ", "))}
	case f.format != "text" && f.format != "json":
		return usageError{fmt.Errorf("--format %q: text or json", f.format)}
	}
	o := review.Options{Idle: f.idle, Max: f.maxTimeout}
	if f.report != "" {
		if o.Report, err = runner.ReadReport(f.report); err != nil {
			return usageError{fmt.Errorf("--report: %w", err)}
		}
	}
	cfg := &suites.Config{Targets: ts, Spec: f.spec, StartTimeout: f.startTimeout, OpTimeout: f.opTimeout, CallTimeout: f.maxTimeout}
	if f.auth.Set() {
		if f.url == "" && f.manifest == "" || ts[0].Transport == "stdio" {
			return usageError{errors.New("--header, --header-env and --oauth-… apply to an HTTP target: --url, or a manifest with transport http")}
		}
		if cfg.Credentials, err = f.auth.credentials(cmd.ErrOrStderr()); err != nil {
			return usageError{err}
		}
	}
	rows, err := review.Targets(cmd.Context(), cfg, o)
	if err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "mcp-conform: %v\n", err)
		return exitError{2}
	}
	if f.format == "json" {
		return review.WriteJSON(cmd.OutOrStdout(), rows)
	}
	return review.WriteText(cmd.OutOrStdout(), rows, o.Report != nil)
}

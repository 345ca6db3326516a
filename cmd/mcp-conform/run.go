package main

import (
	"github.com/spf13/cobra"

	"github.com/mcp-conform/mcp-conform/internal/runner"
)

type runFlags struct {
	outputFlags
	runner.CLIOptions
	// auth are the credentials of an HTTP target.
	auth authFlags
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the conformance checks against a target and print the report",
		Long:  help("run.txt"),
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runChecks(cmd, f) },
	}
	f.CLIOptions.Register(cmd.Flags())
	f.outputFlags.register(cmd)
	f.auth.register(cmd.Flags(), "to the target (and its proxy's to it)")
	return cmd
}

func runChecks(cmd *cobra.Command, f runFlags) error {
	o := f.CLIOptions
	out := f.outputFlags.Output
	o.Strict, o.StrictBaseline, o.Verbose, o.Color = out.Strict, out.StrictBaseline, out.Verbose, out.Color
	o.Auth, o.Credentials, o.ToolVersion = f.auth.Set(), f.auth.credentials, version
	o.ChildArgs = func(seed uint64) []string { return runner.ChildArgs(cmd.Flags(), seed) }
	rep, err := runner.RunCLI(cmd.Context(), o, cmd.ErrOrStderr())
	if rep == nil {
		return err
	}
	return f.outputFlags.finish(cmd, rep, err)
}

package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/mcp-conform/mcp-conform/internal/draft"
)

func newInitCmd() *cobra.Command {
	var f draft.InitOptions
	var af authFlags
	cmd := &cobra.Command{
		Use:     "init (--stdio CMD | --url URL)",
		Short:   "Draft a target manifest: which tool plays each role the checks need",
		Long:    help("init.txt"),
		Example: help("init.example.txt"),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.Auth, f.Credentials = af.Set(), af.credentials
			return exit(draft.Init(cmd.Context(), f, cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Stdio, "stdio", "", "command line of a stdio MCP server to start (split by the shell's quoting rules, without a shell: quote an argument with spaces; nothing is expanded)")
	fl.StringVar(&f.URL, "url", "", "URL of a running Streamable HTTP (or ws://) MCP server")
	af.register(fl, "of init")
	fl.StringVar(&f.Out, "out", "", "write the manifest to FILE (default: stdout, the summary then goes to stderr)")
	fl.BoolVar(&f.Force, "force", false, "overwrite --out FILE if it exists")
	fl.BoolVar(&f.TryTools, "try-tools", false, "also call candidate tools that are not read-only, to confirm them (a test instance only)")
	fl.BoolVar(&f.NoCalls, "no-calls", false, "call no tool at all, not even read-only ones")
	fl.StringVar(&f.Spec, "spec", "", "force a protocol version (default: the newest the server accepts)")
	fl.StringVar(&f.Name, "name", "", "the manifest's name (default: the server's name)")
	fl.DurationVar(&f.CallTimeout, "call-timeout", 15*time.Second, "bound on each tool call")
	fl.DurationVar(&f.StartTimeout, "start-timeout", 15*time.Second, "bound on starting the target and negotiating a version")
	return cmd
}

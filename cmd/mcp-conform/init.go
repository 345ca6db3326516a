package main

import (
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcp-conform/mcp-conform/internal/draft"
)

type initFlags struct {
	stdio, url, out, spec, name string
	auth                        authFlags
	tryTools, noCalls, force    bool
	callTimeout, startTimeout   time.Duration
}

func newInitCmd() *cobra.Command {
	var f initFlags
	cmd := &cobra.Command{
		Use:     "init (--stdio CMD | --url URL)",
		Short:   "Draft a target manifest: which tool plays each role the checks need",
		Long:    help("init.txt"),
		Example: help("init.example.txt"),
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return runInit(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.stdio, "stdio", "", "command line of a stdio MCP server to start (split by the shell's quoting rules, without a shell: quote an argument with spaces; nothing is expanded)")
	fl.StringVar(&f.url, "url", "", "URL of a running Streamable HTTP (or ws://) MCP server")
	f.auth.register(fl, "of init")
	fl.StringVar(&f.out, "out", "", "write the manifest to FILE (default: stdout, the summary then goes to stderr)")
	fl.BoolVar(&f.force, "force", false, "overwrite --out FILE if it exists")
	fl.BoolVar(&f.tryTools, "try-tools", false, "also call candidate tools that are not read-only, to confirm them (a test instance only)")
	fl.BoolVar(&f.noCalls, "no-calls", false, "call no tool at all, not even read-only ones")
	fl.StringVar(&f.spec, "spec", "", "force a protocol version (default: the newest the server accepts)")
	fl.StringVar(&f.name, "name", "", "the manifest's name (default: the server's name)")
	fl.DurationVar(&f.callTimeout, "call-timeout", 15*time.Second, "bound on each tool call")
	fl.DurationVar(&f.startTimeout, "start-timeout", 15*time.Second, "bound on starting the target and negotiating a version")
	return cmd
}

func runInit(cmd *cobra.Command, f initFlags) error {
	if (f.stdio == "") == (f.url == "") {
		return usageError{errors.New("init needs exactly one target: --stdio CMD or --url URL")}
	}
	if f.tryTools && f.noCalls {
		return usageError{errors.New("--try-tools and --no-calls contradict each other")}
	}
	if f.auth.Set() && f.stdio != "" {
		return usageError{errors.New("--header, --header-env and --oauth-… apply to --url targets only")}
	}
	creds, err := f.auth.credentials(cmd.ErrOrStderr())
	if err != nil {
		return usageError{err}
	}
	return exit(draft.Init(cmd.Context(), draft.InitOptions{Stdio: f.stdio, URL: f.url, Out: f.out, Spec: f.spec, Name: f.name,
		Credentials: creds, TryTools: f.tryTools, NoCalls: f.noCalls, Force: f.force,
		CallTimeout: f.callTimeout, StartTimeout: f.startTimeout}, cmd.OutOrStdout(), cmd.ErrOrStderr()))
}

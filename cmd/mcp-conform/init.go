package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcp-conform/mcp-conform/internal/cmdline"
	"github.com/mcp-conform/mcp-conform/internal/draft"
	"github.com/mcp-conform/mcp-conform/suites"
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
		Use:   "init (--stdio CMD | --url URL)",
		Short: "Draft a target manifest: which tool plays each role the checks need",
		Long: `Start (--stdio) or reach (--url) an MCP server, list its tools and draft a target
manifest: which tool is the long-running "slow" one (read-only, a duration-like
argument, progress for a token), which is the keyed "mutation" (idempotentHint, a
key-like string argument) with the read-only "probe" that counts its executions,
the "lookup" by the same key, the task-capable "task" tool, and "flood" or
"silent" when a tool says it is one. Each role carries a comment saying why it was
chosen, what init saw, and what to check by hand; roles it cannot infer are
written as commented-out templates. Then it prints which checks the draft unlocks
and which still SKIP, and why.

init calls only tools annotated readOnlyHint: true, to confirm what it proposes
(the slow tool sends progress, the probe answers with a number). --try-tools also
calls the candidates that are not read-only (the mutation, twice with one key):
use it against a test instance only. --no-calls calls no tool at all.`,
		Example: `  mcp-conform init --stdio "node server.js" --out my-server.yaml
  mcp-conform init --url http://127.0.0.1:3001/mcp --header 'Authorization: Bearer $TOKEN' > my-server.yaml
  mcp-conform init --stdio "mcp-conform fixture" --try-tools`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runInit(cmd, f) },
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
	if f.out != "" && !f.force {
		if _, err := os.Stat(f.out); err == nil {
			return usageError{fmt.Errorf("%s exists (--force overwrites it)", f.out)}
		}
	}
	policy := draft.CallReadOnly
	switch {
	case f.tryTools:
		policy = draft.CallAll
	case f.noCalls:
		policy = draft.CallNone
	}
	t := draft.Target{URL: f.url, Credentials: creds, Spec: f.spec}
	var command []string
	if f.stdio != "" {
		if command, err = cmdline.Split(f.stdio); err != nil {
			return usageError{fmt.Errorf("--stdio: %w", err)}
		}
		t.Command, err = resolveInitCommand(command)
		if err != nil {
			return err
		}
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	d, err := draft.Run(ctx, t, draft.Options{Policy: policy, Name: f.name, Command: manifestCommand(command, f.out),
		CallTimeout: f.callTimeout, StartTimeout: f.startTimeout})
	if err != nil {
		return exitWith(cmd.ErrOrStderr(), 2, fmt.Errorf("init: %w", err))
	}
	yaml := draft.Render(d)
	if _, err := draft.Parse(yaml); err != nil {
		// A draft the harness would refuse is a bug of init.
		return exitWith(cmd.ErrOrStderr(), 2, fmt.Errorf("init: %w", err))
	}
	summary := cmd.ErrOrStderr()
	if f.out == "" {
		if _, err := cmd.OutOrStdout().Write(yaml); err != nil {
			return err
		}
	} else {
		if err := os.WriteFile(f.out, yaml, 0o644); err != nil {
			return exitWith(cmd.ErrOrStderr(), 2, fmt.Errorf("init: %w", err))
		}
		summary = cmd.OutOrStdout()
	}
	if err := d.WriteSummary(summary, suites.Catalog()); err != nil {
		return err
	}
	if f.out != "" {
		fmt.Fprintf(summary, "\nwrote %s; run it with: mcp-conform run --manifest %s\n", f.out, f.out)
	}
	return nil
}

// exitWith prints err and ends the command with code.
func exitWith(w io.Writer, code int, err error) error {
	fmt.Fprintln(w, "mcp-conform:", err)
	return exitError{code}
}

// resolveInitCommand is the argv init executes: "mcp-conform ..." is this
// executable, as the harness runs it.
func resolveInitCommand(argv []string) ([]string, error) {
	if len(argv) == 0 {
		return nil, usageError{errors.New("--stdio needs a command")}
	}
	if argv[0] != "mcp-conform" {
		return argv, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("locate own executable: %w", err)
	}
	return append([]string{exe}, argv[1:]...), nil
}

// manifestCommand is the command as the manifest says it. The harness
// resolves a manifest's relative paths from the manifest's directory, so
// when the manifest is written elsewhere than the current directory, an
// argument that is a relative path to an existing file becomes absolute.
func manifestCommand(argv []string, out string) []string {
	if len(argv) == 0 || out == "" {
		return argv
	}
	dir, err := filepath.Abs(filepath.Dir(out))
	wd, werr := os.Getwd()
	if err != nil || werr != nil || dir == wd {
		return argv
	}
	res := make([]string, len(argv))
	for i, a := range argv {
		res[i] = a
		if filepath.IsAbs(a) || strings.HasPrefix(a, "-") {
			continue
		}
		if _, err := os.Stat(a); err == nil {
			if abs, err := filepath.Abs(a); err == nil {
				res[i] = abs
			}
		}
	}
	return res
}

package draft

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/auth"
	"github.com/mcp-conform/mcp-conform/internal/cmdline"
	"github.com/mcp-conform/mcp-conform/internal/usageerr"
	"github.com/mcp-conform/mcp-conform/suites"
)

// UsageError is a bad command line of "mcp-conform init" (exit code 2).
type UsageError = usageerr.Error

// InitOptions are the flags of "mcp-conform init" (its target: Stdio, a
// command line, or URL).
type InitOptions struct {
	Stdio, URL, Out, Spec, Name string
	TryTools, NoCalls, Force    bool
	CallTimeout, StartTimeout   time.Duration
	// Auth is set when a credential flag was given (URL targets only);
	// Credentials builds them, its log receiving the OAuth client's lines.
	Auth        bool
	Credentials func(log io.Writer) (*auth.Credentials, error)
}

// Init is "mcp-conform init": it drafts the target's manifest (until
// SIGINT/SIGTERM), refuses a draft that does not load, writes it to o.Out
// (or stdout) and the summary of what it unlocks to the other stream, and
// returns the exit code (2: the draft failed, said on stderr). A bad
// option is a *UsageError.
func Init(ctx context.Context, o InitOptions, stdout, stderr io.Writer) (int, error) {
	if (o.Stdio == "") == (o.URL == "") {
		return 0, &UsageError{Err: errors.New("init needs exactly one target: --stdio CMD or --url URL")}
	}
	if o.TryTools && o.NoCalls {
		return 0, &UsageError{Err: errors.New("--try-tools and --no-calls contradict each other")}
	}
	if o.Auth && o.Stdio != "" {
		return 0, &UsageError{Err: errors.New("--header, --header-env and --oauth-… apply to --url targets only")}
	}
	creds, err := o.Credentials(stderr)
	if err != nil {
		return 0, &UsageError{Err: err}
	}
	if o.Out != "" && !o.Force {
		if _, err := os.Stat(o.Out); err == nil {
			return 0, &UsageError{Err: fmt.Errorf("%s exists (--force overwrites it)", o.Out)}
		}
	}
	policy := CallReadOnly
	switch {
	case o.TryTools:
		policy = CallAll
	case o.NoCalls:
		policy = CallNone
	}
	t := Target{URL: o.URL, Credentials: creds, Spec: o.Spec}
	var command []string
	if o.Stdio != "" {
		if command, err = cmdline.Split(o.Stdio); err != nil {
			return 0, &UsageError{Err: fmt.Errorf("--stdio: %w", err)}
		}
		t.Command, err = resolveInitCommand(command)
		if err != nil {
			return 0, err
		}
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	d, err := Run(ctx, t, Options{Policy: policy, Name: o.Name, Command: manifestCommand(command, o.Out),
		CallTimeout: o.CallTimeout, StartTimeout: o.StartTimeout})
	if err != nil {
		return exitWith(stderr, 2, fmt.Errorf("init: %w", err))
	}
	yaml := Render(d)
	if _, err := Parse(yaml); err != nil {
		// A draft the harness would refuse is a bug of init.
		return exitWith(stderr, 2, fmt.Errorf("init: %w", err))
	}
	summary := stderr
	if o.Out == "" {
		if _, err := stdout.Write(yaml); err != nil {
			return 0, err
		}
	} else {
		if err := os.WriteFile(o.Out, yaml, 0o644); err != nil {
			return exitWith(stderr, 2, fmt.Errorf("init: %w", err))
		}
		summary = stdout
	}
	if err := d.WriteSummary(summary, suites.Catalog()); err != nil {
		return 0, err
	}
	if o.Out != "" {
		fmt.Fprintf(summary, "\nwrote %s; run it with: mcp-conform run --manifest %s\n", o.Out, o.Out)
	}
	return 0, nil
}

// exitWith prints err and ends the command with code.
func exitWith(w io.Writer, code int, err error) (int, error) {
	fmt.Fprintln(w, "mcp-conform:", err)
	return code, nil
}

// resolveInitCommand is the argv init executes: "mcp-conform ..." is this
// executable, as the harness runs it.
func resolveInitCommand(argv []string) ([]string, error) {
	if len(argv) == 0 {
		return nil, &UsageError{Err: errors.New("--stdio needs a command")}
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

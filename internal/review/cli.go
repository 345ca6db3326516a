package review

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/internal/auth"
	"github.com/mcp-conform/mcp-conform/internal/runner"
	"github.com/mcp-conform/mcp-conform/internal/usageerr"
	"github.com/mcp-conform/mcp-conform/protocol"
	"github.com/mcp-conform/mcp-conform/suites"
)

// UsageError is a bad command line of "mcp-conform review" (exit code 2).
type UsageError = usageerr.Error

// CLIOptions are the flags of "mcp-conform review".
type CLIOptions struct {
	// Named is the target as the flags name it.
	runner.Named
	Spec, Report, Format    string
	Idle, MaxTimeout        time.Duration
	StartTimeout, OpTimeout time.Duration
	// Auth is set when a credential flag was given; Credentials builds
	// them, its log receiving the OAuth client's lines.
	Auth        bool
	Credentials func(log io.Writer) (*auth.Credentials, error)
}

// RunCLI is "mcp-conform review": it reviews every tool of the target (and
// cites the verdicts of Report) and writes the rows to stdout as text or
// JSON. It returns the exit code (2: the target could not be reviewed,
// said on stderr); a bad option is a *UsageError.
func RunCLI(ctx context.Context, f CLIOptions, stdout, stderr io.Writer) (int, error) {
	ts, err := runner.Targets(f.Named)
	switch {
	case err != nil:
		return 0, &UsageError{Err: err}
	case f.Spec != "" && !clients.IsKnownVersion(f.Spec):
		return 0, &UsageError{Err: fmt.Errorf("--spec %q: known versions are %s", f.Spec, strings.Join(clients.KnownVersions, ", "))}
	case f.Format != "text" && f.Format != "json":
		return 0, &UsageError{Err: fmt.Errorf("--format %q: text or json", f.Format)}
	}
	o := Options{Idle: f.Idle, Max: f.MaxTimeout}
	if f.Report != "" {
		if o.Report, err = runner.ReadReport(f.Report); err != nil {
			return 0, &UsageError{Err: fmt.Errorf("--report: %w", err)}
		}
	}
	cfg := &suites.Config{Targets: ts, Spec: f.Spec, StartTimeout: f.StartTimeout, OpTimeout: f.OpTimeout, CallTimeout: f.MaxTimeout}
	if f.Auth {
		if f.URL == "" && f.Manifest == "" || ts[0].Transport == string(protocol.TransportStdio) {
			return 0, &UsageError{Err: errors.New("--header, --header-env and --oauth-… apply to an HTTP target: --url, or a manifest with transport http")}
		}
		if cfg.Credentials, err = f.Credentials(stderr); err != nil {
			return 0, &UsageError{Err: err}
		}
	}
	rows, err := Targets(ctx, cfg, o)
	if err != nil {
		fmt.Fprintf(stderr, "mcp-conform: %v\n", err)
		return 2, nil
	}
	if f.Format == "json" {
		return 0, WriteJSON(stdout, rows)
	}
	return 0, WriteText(stdout, rows, o.Report != nil)
}

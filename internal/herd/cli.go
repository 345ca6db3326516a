package herd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/usageerr"
	"github.com/mcp-conform/mcp-conform/reports"
)

// UsageError is a bad command line of "mcp-conform herd" (exit code 2).
type UsageError = usageerr.Error

// CLIOptions are the flags of "mcp-conform herd": the measurement's
// Options, the tool's arguments as JSON, the --json file and the bound on
// the whole measurement.
type CLIOptions struct {
	Options
	Args, JSON string
	Timeout    time.Duration
}

// RunCLI is "mcp-conform herd": it checks the options (a seed is chosen
// when none is given), measures the herd within the timeout (its lines on
// stderr), prints the report on stdout and writes it as JSON on request.
// A bad option is a *UsageError.
func RunCLI(ctx context.Context, f CLIOptions, stdout, stderr io.Writer) error {
	o := f.Options
	if o.Clients < 1 || o.Clients > MaxClients {
		return &UsageError{Err: fmt.Errorf("--clients %d: want 1 to %d", o.Clients, MaxClients)}
	}
	if o.URL != "" {
		if err := CheckLoopback(o.URL); err != nil {
			return &UsageError{Err: err}
		}
	}
	if err := json.Unmarshal([]byte(f.Args), &o.Args); err != nil {
		return &UsageError{Err: fmt.Errorf("--args %q: not a JSON object: %w", f.Args, err)}
	}
	if o.Seed == 0 {
		o.Seed = reports.NewSeed()
	}
	ctx, cancel := context.WithTimeout(ctx, f.Timeout)
	defer cancel()
	rep, err := Run(ctx, o, stderr)
	if err != nil {
		return err
	}
	Print(stdout, rep)
	if f.JSON != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(f.JSON, append(b, '\n'), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", f.JSON, err)
		}
	}
	return nil
}

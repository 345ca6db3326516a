package runner

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/mcp-conform/mcp-conform/fixtures"
	"github.com/mcp-conform/mcp-conform/suites"
)

// Named is how a command line names its target: at most one of Stdio, URL
// and Manifest; none is the built-in reference server (with Mutant, if
// set, and over WebSocket too with WebSocket).
type Named struct {
	Stdio, URL, Manifest, Mutant string
	WebSocket                    bool
}

// Targets resolves the named target to the run's targets (the built-in
// one is one per transport) and checks that a target's program exists;
// a bad combination is a UsageError.
func Targets(n Named) ([]*suites.Manifest, error) {
	named := 0
	for _, s := range []string{n.Stdio, n.URL, n.Manifest} {
		if s != "" {
			named++
		}
	}
	switch {
	case named > 1:
		return nil, &UsageError{Err: errors.New("give at most one of --stdio, --url and --manifest")}
	case n.Mutant != "" && named > 0:
		return nil, &UsageError{Err: errors.New("--mutant applies to the built-in target only")}
	case n.Mutant != "" && !fixtures.ValidMutant(n.Mutant):
		return nil, &UsageError{Err: fmt.Errorf("unknown mutant %q (see 'mcp-conform fixture --list')", n.Mutant)}
	case n.WebSocket && named > 0:
		return nil, &UsageError{Err: errors.New("--websocket applies to the built-in target only (a WebSocket server of your own: --url ws://… or a manifest with transport: websocket)")}
	}
	ts, err := suites.TargetFlags{Stdio: n.Stdio, URL: n.URL, Manifest: n.Manifest, Mutant: n.Mutant}.Targets()
	if err != nil {
		return nil, &UsageError{Err: err}
	}
	if n.WebSocket {
		ts = append(ts, suites.ReferenceWSManifest(n.Mutant))
	}
	for _, t := range ts {
		if err := CheckProgram(t); err != nil {
			return nil, &UsageError{Err: err}
		}
	}
	return ts, nil
}

// CheckProgram fails early when the target's program cannot be found: a
// run against it would start nothing, and with no roles declared every
// check would SKIP and the run would pass. Names without a slash are looked
// up in PATH as exec does; other relative paths are taken from the
// manifest's directory, where the server is started.
func CheckProgram(m *suites.Manifest) error {
	if len(m.Command) == 0 {
		return nil
	}
	prog := m.Command[0]
	if isBuiltIn(m) {
		return nil // served by this executable
	}
	if !strings.Contains(prog, "/") {
		if _, err := exec.LookPath(prog); err != nil {
			return fmt.Errorf("target command %q: %w", prog, err)
		}
		return nil
	}
	path := prog
	if !filepath.IsAbs(path) {
		path = filepath.Join(m.Dir, path)
	}
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return fmt.Errorf("target command %q: %w", prog, err)
	case fi.IsDir() || fi.Mode()&0o111 == 0:
		return fmt.Errorf("target command %q: %s is not an executable file", prog, path)
	}
	return nil
}

// isBuiltIn reports whether m's server is the built-in reference (or one
// of its mutants): "mcp-conform fixture …", served by this executable.
func isBuiltIn(m *suites.Manifest) bool {
	return len(m.Command) > 1 && m.Command[0] == "mcp-conform" && m.Command[1] == "fixture"
}

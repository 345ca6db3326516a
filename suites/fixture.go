package suites

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/mcp-conform/mcp-conform/fixtures"
	"github.com/mcp-conform/mcp-conform/internal/harness"
)

func init() { harness.SetCommandResolver(resolveCommand) }

// fixtureEnv, when set in a process's environment, makes
// ServeFixtureIfAsked serve the reference server (value "reference") or one
// of its mutants (the mutant's name) on stdin/stdout.
const fixtureEnv = "MCP_CONFORM_SERVE_FIXTURE"

// fixtureHTTPEnv, set with fixtureEnv, serves Streamable HTTP on its value
// (an address) instead of stdio; fixtureHeartbeatEnv sets the heartbeat.
const (
	fixtureHTTPEnv       = "MCP_CONFORM_FIXTURE_HTTP"
	fixtureHeartbeatEnv  = "MCP_CONFORM_FIXTURE_HEARTBEAT"
	fixtureSessionTTLEnv = "MCP_CONFORM_FIXTURE_SESSION_TTL"
	// FixtureLedgerEnv names the SQLite ledger file of the reference
	// server's keyed mutation tools: servers given the same file share it,
	// and a restarted server finds it again (empty: a private file).
	FixtureLedgerEnv = "MCP_CONFORM_FIXTURE_LEDGER"
	// FixtureVariantEnv names correct variants of the reference server to
	// serve (a comma-separated list of fixtures.Variants names): a
	// manifest's env selects them.
	FixtureVariantEnv = "MCP_CONFORM_FIXTURE_VARIANT"
	// FixtureTokensEnv, FixtureIntrospectEnv and FixtureAuthServersEnv
	// make the reference server over HTTP require a bearer token
	// (fixtures.HTTPOptions Tokens, comma-separated; Introspection;
	// AuthorizationServers, comma-separated): `mcp-conform fixture
	// --require-token`, and the built-in HTTP target.
	FixtureTokensEnv      = "MCP_CONFORM_FIXTURE_TOKENS"
	FixtureIntrospectEnv  = "MCP_CONFORM_FIXTURE_INTROSPECT"
	FixtureAuthServersEnv = "MCP_CONFORM_FIXTURE_AUTH_SERVERS"
)

// fixtureVariants reads FixtureVariantEnv.
func fixtureVariants() ([]string, error) {
	return fixtures.ParseVariants(os.Getenv(FixtureVariantEnv))
}

// ReferenceToken is the bearer token the built-in HTTP target requires
// (besides the two principals' of its auth: list): every request of the
// harness carries it (the manifest's headers:), and SECURITY-AUTH-REQUIRED
// checks that a request without it is refused.
const ReferenceToken = "mcp-conform-reference-token"

// splitEnv reads a comma-separated list from the environment.
func splitEnv(name string) []string {
	var out []string
	for _, v := range strings.Split(os.Getenv(name), ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// referenceSessionTTL is the idle expiry of the built-in HTTP target's 2025
// sessions: short, so that SESSION-EXPIRED-404 waits little (1.5 s), and
// long enough that a loaded machine's pause between two requests of one
// check (400 ms was seen to expire a session under -race) does not.
const referenceSessionTTL = time.Second

// referenceHeartbeat is the heartbeat of the built-in HTTP target: short,
// so that the heartbeat check sees one within a short silent call.
const referenceHeartbeat = 200 * time.Millisecond

// ServeFixtureIfAsked serves the reference server and exits when the
// process was started as the built-in target; otherwise it returns at once.
// Every binary that runs the suites (the CLI, the suites' test binary) calls
// it first thing, so the built-in target needs no separate executable.
func ServeFixtureIfAsked() {
	v, ok := os.LookupEnv(fixtureEnv)
	if !ok {
		return
	}
	mutant := v
	if v == "reference" {
		mutant = ""
	}
	if addr := os.Getenv(fixtureWSEnv); addr != "" {
		os.Exit(serveFixtureWS(mutant, addr))
	}
	if addr := os.Getenv(fixtureHTTPEnv); addr != "" {
		hb, _ := time.ParseDuration(os.Getenv(fixtureHeartbeatEnv))
		ttl, _ := time.ParseDuration(os.Getenv(fixtureSessionTTLEnv))
		os.Exit(serveFixtureHTTP(mutant, addr, hb, ttl))
	}
	os.Exit(ServeFixture(mutant))
}

// ServeFixtureHTTP serves the reference server (or a mutant) on Streamable
// HTTP at addr until SIGINT/SIGTERM, printing the endpoint URL on stdout
// once listening, and returns the process exit code.
func ServeFixtureHTTP(mutant, addr string, heartbeat time.Duration) int {
	return serveFixtureHTTP(mutant, addr, heartbeat, 0)
}

func serveFixtureHTTP(mutant, addr string, heartbeat, sessionTTL time.Duration) int {
	if mutant != "" && !fixtures.ValidMutant(mutant) {
		fmt.Fprintf(os.Stderr, "mcp-conform fixture: unknown mutant %q\n", mutant)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	vs, err := fixtureVariants()
	if err != nil {
		fmt.Fprintf(os.Stderr, "mcp-conform fixture: %v\n", err)
		return 2
	}
	opts := fixtures.HTTPOptions{Mutant: mutant, Stderr: os.Stderr, Heartbeat: heartbeat, SessionTTL: sessionTTL,
		Ledger: os.Getenv(FixtureLedgerEnv), Variants: vs, Tokens: splitEnv(FixtureTokensEnv), Introspection: os.Getenv(FixtureIntrospectEnv),
		AuthorizationServers: splitEnv(FixtureAuthServersEnv)}
	err = fixtures.ServeHTTP(ctx, addr, opts, func(url string) { fmt.Println(url) })
	if errors.Is(err, fixtures.ErrCrash) {
		fmt.Fprintf(os.Stderr, "mcp-conform fixture: %v\n", err)
		return 3
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "mcp-conform fixture: %v\n", err)
		return 1
	}
	return 0
}

// ServeFixture serves the reference server (or a mutant) on stdin/stdout
// until stdin ends, and returns the process exit code.
func ServeFixture(mutant string) int {
	if mutant != "" && !fixtures.ValidMutant(mutant) {
		fmt.Fprintf(os.Stderr, "mcp-conform fixture: unknown mutant %q\n", mutant)
		return 2
	}
	vs, err := fixtureVariants()
	if err != nil {
		fmt.Fprintf(os.Stderr, "mcp-conform fixture: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = fixtures.Serve(ctx, os.Stdin, os.Stdout, fixtures.Options{Mutant: mutant, Stderr: os.Stderr, Ledger: os.Getenv(FixtureLedgerEnv), Variants: vs})
	switch {
	case errors.Is(err, fixtures.ErrCrash):
		return 3
	case err != nil && ctx.Err() == nil:
		fmt.Fprintf(os.Stderr, "mcp-conform fixture: %v\n", err)
		return 1
	}
	return 0
}

// ReferenceTargets are the built-in targets: the reference server (or a
// mutant) on every transport it serves.
func ReferenceTargets(mutant string) []*Manifest {
	return []*Manifest{ReferenceManifest(mutant), ReferenceHTTPManifest(mutant)}
}

// ReferenceHTTPManifest is the built-in Streamable HTTP target: the
// reference server on a free loopback port, started by this executable.
func ReferenceHTTPManifest(mutant string) *Manifest {
	return &Manifest{
		Name:      "mcp-conform-reference",
		Transport: "http",
		Command:   []string{"mcp-conform", "fixture", "--http", "127.0.0.1:{port}"},
		URL:       "http://127.0.0.1:{port}/mcp",
		Restart:   true,
		Roles: map[string]Role{
			"slow": {Tool: "slow", Arguments: map[string]any{"steps": 8, "stepMs": 60},
				Probe: map[string]any{"tool": "probe", "tag": "tag"}},
			"silent":   {Tool: "slow", Arguments: map[string]any{"steps": 2, "stepMs": 500}},
			"mutation": referenceMutationRole(),
			"lookup":   {Tool: "lookup_ticket"},
			"task":     referenceTaskRole,
			"flood": {Tool: "flood", Arguments: map[string]any{"count": 5000, "pad": 1000},
				Probe: map[string]any{"tool": "probe", "tag": "tag"}},
		},
		SessionTTL: referenceSessionTTL.String(),
		// The reference binds a session initialized with a credential to
		// it (SECURITY-SESSION-BINDING).
		Auth: []map[string]string{
			{"Authorization": "Bearer mcp-conform-principal-a"},
			{"Authorization": "Bearer mcp-conform-principal-b"},
		},
		// It requires a bearer token: the principals' and the run's, which
		// every request of the harness carries.
		Headers:      map[string]string{"Authorization": "Bearer " + ReferenceToken},
		RequiresAuth: true,
		Env: map[string]string{
			fixtureEnv:           fixtureValue(mutant),
			fixtureHTTPEnv:       "127.0.0.1:{port}",
			fixtureHeartbeatEnv:  referenceHeartbeat.String(),
			fixtureSessionTTLEnv: referenceSessionTTL.String(),
			FixtureLedgerEnv:     TmpDirPlaceholder + "/ledger.db",
			FixtureTokensEnv:     ReferenceToken + ",mcp-conform-principal-a,mcp-conform-principal-b",
		},
	}
}

// ReferenceManifest is the built-in target: the reference server, or one of
// its mutants, served by this very executable.
func ReferenceManifest(mutant string) *Manifest {
	return &Manifest{
		Name:      "mcp-conform-reference",
		Transport: "stdio",
		Command:   []string{"mcp-conform", "fixture"},
		Restart:   true,
		Roles: map[string]Role{
			"slow":     {Tool: "slow", Arguments: map[string]any{"steps": 8, "stepMs": 60}},
			"mutation": referenceMutationRole(),
			"lookup":   {Tool: "lookup_ticket"},
			"task":     referenceTaskRole,
			"flood":    {Tool: "flood", Arguments: map[string]any{"count": 2000, "pad": 1000}},
		},
		Env: map[string]string{fixtureEnv: fixtureValue(mutant), FixtureLedgerEnv: TmpDirPlaceholder + "/ledger.db"},
	}
}

// referenceMutationRole is the keyed mutation of the reference server:
// create_support_ticket, keyed by operation_key, with ticket_stats as the
// probe of how many times the effect ran.
func referenceMutationRole() Role {
	return Role{Tool: "create_support_ticket", Key: "operation_key",
		Arguments: map[string]any{"title": "Cannot sign in"},
		Probe:     map[string]any{"tool": "ticket_stats", "field": "executions"},
		// Every server process of a check opens {tmpdir}/ledger.db.
		Shared: true}
}

// referenceTaskRole is the built-in targets' task role: the research tool,
// 5 steps of 60 ms whose worker notices a cancellation only at the end of a
// step.
var referenceTaskRole = Role{Tool: "research", Arguments: map[string]any{"topic": "x", "steps": 5, "stepMs": 60}}

func fixtureValue(mutant string) string {
	if mutant == "" {
		return "reference"
	}
	return mutant
}

// resolveCommand turns a manifest command into an argv and environment. The
// command "mcp-conform fixture [--mutant NAME]" is served by this executable.
func resolveCommand(m *Manifest) ([]string, []string, error) {
	var env []string
	for k, v := range m.Env {
		env = append(env, k+"="+v)
	}
	argv := m.Command
	if len(argv) >= 2 && argv[0] == "mcp-conform" && argv[1] == "fixture" {
		exe, err := os.Executable()
		if err != nil {
			return nil, nil, fmt.Errorf("locate own executable: %w", err)
		}
		mutant := ""
		for i := 2; i+1 < len(argv); i++ {
			if argv[i] == "--mutant" {
				mutant = argv[i+1]
			}
			if _, set := m.Env[fixtureWSEnv]; argv[i] == "--ws" && !set {
				env = append(env, fixtureWSEnv+"="+argv[i+1])
			}
		}
		if _, set := m.Env[fixtureEnv]; !set {
			env = append(env, fixtureEnv+"="+fixtureValue(mutant))
		}
		return []string{exe}, append(env, "GORACE=atexit_sleep_ms=0"), nil
	}
	return argv, env, nil
}

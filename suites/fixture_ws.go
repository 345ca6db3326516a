package suites

// The built-in WebSocket target, moved unchanged from wsconn.go: it belongs with
// fixture.go (ServeFixture*, the reference manifests), which moves into fixtures/.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcp-conform/mcp-conform/fixtures"
)

// ReferenceWSManifest is the built-in WebSocket target: the reference
// server (or a mutant) on a free loopback port, started by this
// executable, one session per connection.
func ReferenceWSManifest(mutant string) *Manifest {
	return &Manifest{
		Name:      "mcp-conform-reference",
		Transport: "websocket",
		Command:   []string{"mcp-conform", "fixture", "--ws", "127.0.0.1:{port}"},
		URL:       "ws://127.0.0.1:{port}/mcp",
		Restart:   true,
		Roles: map[string]Role{
			"slow": {Tool: "slow", Arguments: map[string]any{"steps": 8, "stepMs": 60}},
		},
		Env: map[string]string{
			fixtureEnv:   fixtureValue(mutant),
			fixtureWSEnv: "127.0.0.1:{port}",
		},
	}
}

// fixtureWSEnv, set with fixtureEnv, serves WebSocket on its value (an
// address) instead of stdio.
const fixtureWSEnv = "MCP_CONFORM_FIXTURE_WS"

// ServeFixtureWS serves the reference server (or a mutant) over WebSocket
// at addr until SIGINT/SIGTERM, printing the endpoint URL on stdout once
// listening, and returns the process exit code (3 when a crash mutant
// crashed).
func ServeFixtureWS(mutant, addr string) int {
	return serveFixtureWS(mutant, addr)
}

func serveFixtureWS(mutant, addr string) int {
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
	err = fixtures.ServeWebSocket(ctx, addr, fixtures.Options{Mutant: mutant, Stderr: os.Stderr, Variants: vs}, func(url string) { fmt.Println(url) })
	switch {
	case errors.Is(err, fixtures.ErrCrash):
		fmt.Fprintf(os.Stderr, "mcp-conform fixture: %v\n", err)
		return 3
	case err != nil:
		fmt.Fprintf(os.Stderr, "mcp-conform fixture: %v\n", err)
		return 1
	}
	return 0
}

package suites

// The built-in WebSocket target, moved unchanged from wsconn.go: it belongs with
// fixture.go (the reference manifests); fixtures.ServeIfAsked serves it.

// ReferenceWSManifest is the built-in WebSocket target: the reference
// server (or a mutant) on a free loopback port, started by this
// executable, one session per connection.
func ReferenceWSManifest(mutant string) *Manifest {
	return &Manifest{
		Name:      "mcp-conform-reference",
		Transport: viaWebSocket,
		Command:   []string{"mcp-conform", "fixture", "--ws", "127.0.0.1:{port}"},
		URL:       "ws://127.0.0.1:{port}/mcp",
		Restart:   true,
		Roles: map[string]Role{
			"slow":             {Tool: "slow", Arguments: map[string]any{"steps": 8, "stepMs": 60}},
			"listChanged":      referenceListChangedRole,
			"endSubscriptions": referenceEndSubscriptionsRole,
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

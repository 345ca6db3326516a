package suites

import (
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/harness"
	"github.com/mcp-conform/mcp-conform/internal/refbin"
)

func init() { harness.SetCommandResolver(resolveCommand) }

// fixtureEnv, when set in a process's environment, makes
// fixtures.ServeIfAsked serve the reference server (value "reference") or
// one of its mutants (the mutant's name) on stdin/stdout. These names are
// fixtures' (ServeEnv, HTTPEnv, ...), which suites does not import;
// internal/describe's TestReferenceManifestsSetFixtureEnv holds the two
// spellings together.
const fixtureEnv = "MCP_CONFORM_SERVE_FIXTURE"

// fixtureHTTPEnv, set with fixtureEnv, serves Streamable HTTP on its value
// (an address) instead of stdio; fixtureHeartbeatEnv sets the heartbeat.
const (
	fixtureHTTPEnv       = "MCP_CONFORM_FIXTURE_HTTP"
	fixtureHeartbeatEnv  = "MCP_CONFORM_FIXTURE_HEARTBEAT"
	fixtureSessionTTLEnv = "MCP_CONFORM_FIXTURE_SESSION_TTL"
	// fixtureLedgerEnv names the SQLite ledger file of the reference
	// server's keyed mutation tools: servers given the same file share it,
	// and a restarted server finds it again (empty: a private file).
	fixtureLedgerEnv = "MCP_CONFORM_FIXTURE_LEDGER"
	// fixtureTokensEnv makes the reference server over HTTP require a
	// bearer token, one of its comma-separated list: the built-in HTTP
	// target does.
	fixtureTokensEnv = "MCP_CONFORM_FIXTURE_TOKENS"
)

// ReferenceToken is the bearer token the built-in HTTP target requires
// (besides the two principals' of its auth: list): every request of the
// harness carries it (the manifest's headers:), and SECURITY-AUTH-REQUIRED
// checks that a request without it is refused.
const ReferenceToken = "mcp-conform-reference-token"

// referenceSessionTTL is the idle expiry of the built-in HTTP target's 2025
// sessions: short, so that SESSION-EXPIRED-404 waits little (1.5 s), and
// long enough that a loaded machine's pause between two requests of one
// check (400 ms was seen to expire a session under -race) does not.
const referenceSessionTTL = time.Second

// referenceHeartbeat is the heartbeat of the built-in HTTP target: short,
// so that the heartbeat check sees one within a short silent call.
const referenceHeartbeat = 200 * time.Millisecond

// ReferenceTargets are the built-in targets: the reference server (or a
// mutant) on every transport it serves.
func ReferenceTargets(mutant string) []*Manifest {
	return []*Manifest{ReferenceManifest(mutant), ReferenceHTTPManifest(mutant)}
}

// The reference's token of another audience: a static token the reference
// server knows as issued for another resource (TOKEN@AUDIENCE in its
// token list).
const (
	referenceForeignToken    = "mcp-conform-foreign-audience"
	referenceForeignAudience = "https://other-server.example/mcp"
)

// ReferenceHTTPManifest is the built-in Streamable HTTP target: the
// reference server on a free loopback port, started by this executable.
func ReferenceHTTPManifest(mutant string) *Manifest {
	return &Manifest{
		Name:      "mcp-conform-reference",
		Transport: viaHTTP,
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
			"log":              referenceLogRole,
			"listChanged":      referenceListChangedRole,
			"endSubscriptions": referenceEndSubscriptionsRole,
			"handle":           referenceHandleRole,
		},
		SessionTTL: referenceSessionTTL.String(),
		Versions:   referenceVersions(),
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
		// A token its authorization server issued for another resource
		// (SECURITY-TOKEN-AUDIENCE): the reference knows it, and its
		// audience, and refuses it.
		ForeignAuth: map[string]string{"Authorization": "Bearer " + referenceForeignToken},
		Env: map[string]string{
			fixtureEnv:           fixtureValue(mutant),
			fixtureHTTPEnv:       "127.0.0.1:{port}",
			fixtureHeartbeatEnv:  referenceHeartbeat.String(),
			fixtureSessionTTLEnv: referenceSessionTTL.String(),
			fixtureLedgerEnv:     TmpDirPlaceholder + "/ledger.db",
			fixtureTokensEnv:     ReferenceToken + ",mcp-conform-principal-a,mcp-conform-principal-b," + referenceForeignToken + "@" + referenceForeignAudience,
		},
	}
}

// ReferenceManifest is the built-in target: the reference server, or one of
// its mutants, served by this very executable.
func ReferenceManifest(mutant string) *Manifest {
	return &Manifest{
		Name:      "mcp-conform-reference",
		Transport: viaStdio,
		Command:   []string{"mcp-conform", "fixture"},
		Restart:   true,
		Roles: map[string]Role{
			"slow":             {Tool: "slow", Arguments: map[string]any{"steps": 8, "stepMs": 60}},
			"mutation":         referenceMutationRole(),
			"lookup":           {Tool: "lookup_ticket"},
			"task":             referenceTaskRole,
			"flood":            {Tool: "flood", Arguments: map[string]any{"count": 2000, "pad": 1000}},
			"log":              referenceLogRole,
			"listChanged":      referenceListChangedRole,
			"endSubscriptions": referenceEndSubscriptionsRole,
			"handle":           referenceHandleRole,
		},
		Versions: referenceVersions(),
		Env:      map[string]string{fixtureEnv: fixtureValue(mutant), fixtureLedgerEnv: TmpDirPlaceholder + "/ledger.db"},
	}
}

// referenceVersions are the protocol versions the reference server
// supports (its declared contract, versions:): every version the catalog
// knows.
func referenceVersions() []string { return slices.Clone(allVersions) }

// referenceHandleRole is the state-handle pair of the reference server
// (HANDLE-ENTROPY): open_cart mints a cart_id, view_cart takes it back.
var referenceHandleRole = Role{Tool: "open_cart", Field: "cart_id", Use: "view_cart", Param: "cart_id"}

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
// step. Its tasks/list pages hold 2 tasks (PageSize, TASK-LIST), its
// fail argument ends the task failed (FailArguments, TASK-RESULT), its ask
// argument makes it ask for input (InputArguments, TASK-INPUT-REQUIRED) and the
// probe tool reports the steps of a research run with a tag (Probe,
// TASK-CANCEL-STOPS; on stdio the tool is callable, not listed).
var referenceTaskRole = Role{Tool: "research", Arguments: map[string]any{"topic": "x", "steps": 5, "stepMs": 60},
	PageSize: 2, FailArguments: map[string]any{"fail": true}, InputArguments: map[string]any{"ask": true}, Probe: map[string]any{"tool": "probe", "tag": "tag"}}

// referenceLogRole is the built-in targets' log role: echo, which logs at
// debug, info, warning and error (those at or above the level asked for)
// while it handles a call.
var referenceLogRole = Role{Tool: "echo", Arguments: map[string]any{"text": "log"}}

// referenceListChangedRole is the built-in targets' listChanged role:
// change_tools, which adds the tool extra to tools/list (or removes it) for
// every connection of the server and announces the change.
var referenceListChangedRole = Role{Tool: "change_tools"}

// referenceEndSubscriptionsRole is the built-in targets' endSubscriptions
// role: change_tools with end_subscriptions: true ends every open
// subscriptions/listen of the server on its own initiative
// (SUBSCRIPTION-TEARDOWN-CANCELLED, SUBSCRIPTION-GRACEFUL-CLOSE).
var referenceEndSubscriptionsRole = Role{Tool: "change_tools", Arguments: map[string]any{"end_subscriptions": true}}

func fixtureValue(mutant string) string {
	if mutant == "" {
		return "reference"
	}
	return mutant
}

// resolveCommand turns a manifest command into an argv and environment. The
// command "mcp-conform fixture [--mutant NAME]" is served by this executable
// or the slim reference binary beside it (refbin.For).
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
		// The slim reference binary beside this one, when it is the same
		// build (internal/refbin); else this executable serves it.
		return []string{refbin.For(exe)}, append(env, "GORACE=atexit_sleep_ms=0"), nil
	}
	return argv, env, nil
}

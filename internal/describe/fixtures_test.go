package describe

// The fixtures and the catalog meet here (explain shows a check's mutant),
// so the tests that hold them to each other live here: fixtures cannot
// import suites' catalog in its own tests without tying the two together.

import (
	"slices"
	"testing"

	"github.com/mcp-conform/mcp-conform/fixtures"
	"github.com/mcp-conform/mcp-conform/suites"
)

// TestEveryMutantBreaksACatalogCheck: a mutant's Breaks names a check of
// the catalog (explain shows the mutant under it; a Breaks naming nothing
// would be a mutant no check is shown to catch), and a mutant of one
// transport breaks a check that runs on it. Only a mutant that is not a
// bug breaks nothing. No server is started.
func TestEveryMutantBreaksACatalogCheck(t *testing.T) {
	for _, m := range fixtures.Mutants() {
		if m.Breaks == "" {
			continue // not a bug (no-progress): no check may fail on it
		}
		c, ok := suites.Lookup(m.Breaks)
		if !ok {
			t.Errorf("mutant %s breaks %q, which is no check of the catalog", m.Name, m.Breaks)
			continue
		}
		if m.Transport != "" && !slices.Contains(c.Transports, m.Transport) {
			t.Errorf("mutant %s (%s) breaks %s, which runs on %v only", m.Name, m.Transport, c.ID, c.Transports)
		}
	}
}

// TestReferenceManifestsSetFixtureEnv: the harness's built-in targets start
// the reference with an environment whose names suites spells itself (it
// does not import fixtures); every one is a name fixtures.ServeIfAsked
// reads.
func TestReferenceManifestsSetFixtureEnv(t *testing.T) {
	known := map[string]bool{fixtures.ServeEnv: true, fixtures.HTTPEnv: true, fixtures.HeartbeatEnv: true,
		fixtures.SessionTTLEnv: true, fixtures.WSEnv: true, fixtures.LedgerEnv: true, fixtures.VariantEnv: true,
		fixtures.TokensEnv: true, fixtures.IntrospectEnv: true, fixtures.AuthServersEnv: true}
	ms := append(suites.ReferenceTargets("no-progress"), suites.ReferenceWSManifest(""))
	for _, m := range ms {
		if _, ok := m.Env[fixtures.ServeEnv]; !ok {
			t.Errorf("%s reference manifest does not set %s", m.Transport, fixtures.ServeEnv)
		}
		for k := range m.Env {
			if !known[k] {
				t.Errorf("%s reference manifest sets %s, which fixtures.ServeIfAsked does not read", m.Transport, k)
			}
		}
	}
}

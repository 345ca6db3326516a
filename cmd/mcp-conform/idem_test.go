package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBadIdempotencyManifests: a mutation role naming a tool the target
// does not list, a key that is not in the tool's input schema, or a probe
// that answers no number stops the run before any check, with exit 2 and
// a message that says what is wrong.
func TestBadIdempotencyManifests(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"idem-unknown-tool.yaml", `tool "open_ticket" is not in tools/list`},
		{"idem-bad-key.yaml", `key argument "idempotency_key" is not a property of create_support_ticket's inputSchema`},
		{"idem-bad-probe.yaml", `probe lookup_ticket does not return a number in "found"`},
	} {
		t.Run(tc.file, func(t *testing.T) {
			limitParallel(t)
			r := runCLI(t, 30*time.Second, "run", "-q", "--manifest", filepath.Join("testdata", tc.file))
			if r.code != 2 {
				t.Fatalf("exit %d, want 2\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("stderr lacks %q:\n%s", tc.want, r.stderr)
			}
			if r.report != nil {
				t.Errorf("a report was written (%d checks): no check may run on a bad manifest", len(r.report.Checks))
			}
		})
	}
}

package harness

import (
	"os"
	"path/filepath"
	"testing"
)

// rolesLoader returns a function that loads a manifest of one command and
// the given roles block (YAML lines indented under roles:), for tests of
// a role's fields.
func rolesLoader(t *testing.T) func(roles string) (*Manifest, error) {
	t.Helper()
	dir := t.TempDir()
	return func(roles string) (*Manifest, error) {
		p := filepath.Join(dir, "m.yaml")
		if err := os.WriteFile(p, []byte("command: [x]\nroles:\n"+roles), 0o644); err != nil {
			t.Fatal(err)
		}
		return LoadManifest(p)
	}
}

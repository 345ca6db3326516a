package harness

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/internal/auth"
	"github.com/mcp-conform/mcp-conform/reports"
)

// TestManifestHeaders: headers: values take ${VAR} from the environment
// (an unset one is an error naming it, not a value), are refused on stdio,
// and the command line's header of the same name replaces the manifest's;
// every value becomes a secret reports hide.
func TestManifestHeaders(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) string {
		p := filepath.Join(dir, "m.yaml")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Setenv("MCP_CONFORM_TEST_TOKEN", "manifest-secret-4821")
	m, err := LoadManifest(write("transport: http\nurl: http://127.0.0.1:1/mcp\nrequiresAuth: true\nheaders: {Authorization: \"Bearer ${MCP_CONFORM_TEST_TOKEN}\", X-Tenant: t1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Headers["Authorization"] != "Bearer manifest-secret-4821" || !m.RequiresAuth {
		t.Fatalf("headers %v, requiresAuth %v", m.Headers, m.RequiresAuth)
	}
	_, err = LoadManifest(write("transport: http\nurl: http://127.0.0.1:1/mcp\nheaders: {Authorization: \"Bearer $MCP_CONFORM_UNSET_VAR\"}\n"))
	if err == nil || !strings.Contains(err.Error(), "MCP_CONFORM_UNSET_VAR") {
		t.Errorf("unset variable: %v", err)
	}
	if _, err := LoadManifest(write("command: [x]\nheaders: {A: b}\n")); err == nil {
		t.Error("headers on a stdio target were accepted")
	}
	cfg := &Config{Credentials: &auth.Credentials{Header: http.Header{"X-Tenant": {"cli-tenant"}}}}
	c := cfg.CredentialsFor(m)
	if c.Header.Get("Authorization") != "Bearer manifest-secret-4821" || c.Header.Get("X-Tenant") != "cli-tenant" {
		t.Errorf("credentials %v", c.Header)
	}
	if got := reports.Secrets.String("echo manifest-secret-4821"); strings.Contains(got, "manifest-secret-4821") {
		t.Errorf("the manifest's secret is not hidden: %q", got)
	}
	if !reports.Secrets.Sensitive("X-Tenant") {
		t.Error("a header the run sends is not redacted by name")
	}
}

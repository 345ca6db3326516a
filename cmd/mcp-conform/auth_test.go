package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/mcp-conform/mcp-conform/internal/auth/authtest"
	"github.com/mcp-conform/mcp-conform/reports"
	"github.com/mcp-conform/mcp-conform/suites"
)

// The secrets of TestAuthHTTPTarget: none may appear in any output.
const (
	authStaticToken  = "static-token-Zq81xv0kd93"
	authClientSecret = "client-secret-Pm2Lw8Xe4t"
	authClientID     = "mcp-conform-test-client"
)

// authManifest writes a manifest for the running reference at url with the
// built-in HTTP target's roles, plus extra top-level fields.
func authManifest(t *testing.T, dir, name, url string, extra map[string]any) string {
	t.Helper()
	m := map[string]any{"name": "reference-url", "transport": "http", "url": url, "roles": suites.ReferenceHTTPManifest("").Roles}
	for k, v := range extra {
		m[k] = v
	}
	b, err := yaml.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// authRun is one run of the (fast) binary with extra environment, writing
// every report format into its own directory.
type authRun struct {
	result
	dir string
}

func runWithEnv(t *testing.T, env []string, args ...string) authRun {
	t.Helper()
	dir := t.TempDir()
	args = append(args, "-v", "--junit", filepath.Join(dir, "junit.xml"), "--html", filepath.Join(dir, "report.html"),
		"--markdown", filepath.Join(dir, "summary.md"))
	res, err := execCLIEnv(fastBinary, dir, 2*time.Minute, env, args...)
	if err != nil {
		t.Fatal(err)
	}
	r := authRun{result: res, dir: dir}
	if r.report == nil && r.code != 2 {
		t.Fatalf("mcp-conform %v wrote no report (exit %d)\nstdout:\n%s\nstderr:\n%s", args, r.code, r.stdout, r.stderr)
	}
	return r
}

// mustReport fails the test when the run wrote no report.
func (r authRun) mustReport(t *testing.T) *reports.Report {
	t.Helper()
	if r.report == nil {
		t.Fatalf("no report written (exit %d)\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	return r.report
}

// verdicts maps check, transport and version to the status, leaving out
// the checks named.
func verdicts(rep *reports.Report, except ...string) map[string]string {
	out := map[string]string{}
	for _, c := range rep.Checks {
		if !contains(except, c.ID) {
			out[c.ID+" ["+c.Transport+" "+c.ProtocolVersion+"]"] = string(c.Status)
		}
	}
	return out
}

// assertNoSecret greps stdout, stderr and every file the run wrote.
func assertNoSecret(t *testing.T, r authRun, secrets ...string) {
	t.Helper()
	texts := map[string]string{"stdout": r.stdout, "stderr": r.stderr}
	files, _ := os.ReadDir(r.dir)
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(r.dir, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		texts[f.Name()] = string(b)
	}
	if len(texts) < 6 {
		t.Errorf("only %d outputs to look in", len(texts))
	}
	for name, text := range texts {
		for _, s := range secrets {
			if s != "" && strings.Contains(text, s) {
				t.Errorf("%s holds the secret %q", name, s)
			}
		}
	}
}

// TestAuthHTTPTarget checks a token-protected reference server over HTTP
// (`mcp-conform fixture --require-token`, also accepting the tokens of a
// real client-credentials authorization server started here, whose tokens
// live 2 s) with the credentials given each way a user can — --header,
// --header-env, a manifest's headers: with ${ENV}, OAuth client
// credentials with the token endpoint discovered and given — and requires
// each run's verdicts to equal those of the same manifest against the
// unprotected reference, and no output to hold the token or the secret.
// The OAuth runs outlive several tokens: the token is refreshed.
func TestAuthHTTPTarget(t *testing.T) {
	// Eight runs of the race-built binary, one after another, within the
	// servers' 4 minutes: its share of the machine is a race-built test's.
	limitParallel(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	as, err := authtest.Start(authtest.Options{ClientID: authClientID, ClientSecret: authClientSecret, Lifetime: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = as.Close() })
	open := pxStartFixture(t, ctx)
	locked := pxStart(t, ctx, "fixture", "--http", "127.0.0.1:0", "--heartbeat", "200ms", "--require-token", authStaticToken,
		"--token-introspection", as.IntrospectURL, "--authorization-server", as.Issuer).url
	dir := t.TempDir()
	plain := authManifest(t, dir, "open.yaml", open, nil)
	lockedPlain := authManifest(t, dir, "locked.yaml", locked, nil)
	lockedHeaders := authManifest(t, dir, "locked-headers.yaml", locked, map[string]any{
		"headers": map[string]string{"Authorization": "Bearer ${MCP_TEST_TOKEN}"}, "requiresAuth": true})

	baseline := map[string]map[string]string{}
	for _, spec := range []string{"2025-11-25", "2026-07-28"} {
		r := runWithEnv(t, nil, "run", "--manifest", plain, "--spec", spec)
		if r.code != 0 {
			t.Fatalf("the unprotected reference (%s): exit %d\n%s", spec, r.code, r.stdout)
		}
		baseline[spec] = verdicts(r.mustReport(t), "SECURITY-AUTH-REQUIRED", "SECURITY-AUTH-EVERY-REQUEST")
	}
	// Without credentials the protected server serves nothing: the run
	// stops at once, saying why.
	if r := runWithEnv(t, nil, "run", "--manifest", lockedPlain, "--spec", "2025-11-25", "--focus", "SESSION-REQUIRED"); r.code != 2 || !strings.Contains(r.stdout+r.stderr, "HTTP 401") {
		t.Errorf("no credentials: exit %d, want 2 with the 401 in the output\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	for _, tc := range []struct {
		name  string
		spec  string
		env   []string
		args  []string
		oauth bool
	}{
		{"header", "2025-11-25", nil, []string{"--manifest", lockedPlain, "--header", "Authorization: Bearer " + authStaticToken}, false},
		{"header/2026", "2026-07-28", nil, []string{"--manifest", lockedPlain, "--header", "Authorization: Bearer " + authStaticToken}, false},
		{"header-env", "2025-11-25", []string{"MCP_TEST_AUTH=Bearer " + authStaticToken}, []string{"--manifest", lockedPlain, "--header-env", "Authorization=MCP_TEST_AUTH"}, false},
		{"manifest-headers", "2025-11-25", []string{"MCP_TEST_TOKEN=" + authStaticToken}, []string{"--manifest", lockedHeaders}, false},
		{"oauth-discovery", "2025-11-25", []string{"MCP_TEST_SECRET=" + authClientSecret},
			[]string{"--manifest", lockedPlain, "--oauth-client-id", authClientID, "--oauth-client-secret-env", "MCP_TEST_SECRET"}, true},
		{"oauth-token-url", "2026-07-28", []string{"MCP_TEST_SECRET=" + authClientSecret},
			[]string{"--manifest", lockedPlain, "--oauth-client-id", authClientID, "--oauth-client-secret-env", "MCP_TEST_SECRET", "--oauth-token-url", as.TokenURL}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := as.Issued()
			r := runWithEnv(t, tc.env, append([]string{"run", "--spec", tc.spec}, tc.args...)...)
			t.Logf("exit %d in %s, %d tokens issued", r.code, r.elapsed.Round(time.Millisecond), as.Issued()-before)
			if r.code != 0 {
				t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			got := verdicts(r.mustReport(t), "SECURITY-AUTH-REQUIRED", "SECURITY-AUTH-EVERY-REQUEST")
			var diff []string
			for k, want := range baseline[tc.spec] {
				if got[k] != want {
					diff = append(diff, fmt.Sprintf("%s: %s, unprotected %s", k, got[k], want))
				}
			}
			sort.Strings(diff)
			if len(diff) > 0 || len(got) != len(baseline[tc.spec]) {
				t.Errorf("%d checks, unprotected %d; verdicts that differ:\n  %s", len(got), len(baseline[tc.spec]), strings.Join(diff, "\n  "))
			}
			if tc.name == "manifest-headers" {
				for _, id := range []string{"SECURITY-AUTH-REQUIRED", "SECURITY-AUTH-EVERY-REQUEST"} {
					c := r.check(t, id)
					if c.Status != reports.Pass {
						t.Errorf("%s with requiresAuth: %s %q, want PASS", id, c.Status, c.Reason)
					}
				}
			}
			if tc.oauth {
				n := as.Issued() - before
				if n < 2 && r.elapsed > 3*time.Second {
					t.Errorf("%d tokens in a %s run of 2 s tokens: not refreshed", n, r.elapsed)
				}
				for _, res := range as.Resources()[before:] {
					if res != locked {
						t.Errorf("token asked for resource %q, want %s", res, locked)
					}
				}
				if tc.name == "oauth-discovery" && !strings.Contains(r.stderr, "token endpoint "+as.TokenURL) {
					t.Errorf("stderr does not say which token endpoint was discovered:\n%s", r.stderr)
				}
			}
			assertNoSecret(t, r, append([]string{authStaticToken, authClientSecret}, as.Tokens()...)...)
		})
	}
}

// TestAuthRedactsPrincipalsAndEchoes: the reference's own target checks
// SECURITY-SESSION-BINDING with two principals' Authorization headers
// and SECURITY-AUTH-REQUIRED with an invalid token; with every transcript
// kept (-v), none of the credentials appear.
func TestAuthRedactsPrincipalsAndEchoes(t *testing.T) {
	limitParallel(t)
	r := runWithEnv(t, nil, "run", "--label-filter", "transport:http", "--spec", "2025-11-25", "--focus", "SECURITY-(SESSION-BINDING|AUTH-REQUIRED)",
		"--mutant", "session-unbound")
	r.mustReport(t)
	if c := r.check(t, "SECURITY-SESSION-BINDING"); c.Status != reports.Warn || len(c.Transcript) == 0 {
		t.Fatalf("SECURITY-SESSION-BINDING: %s (%d entries), want WARN with its transcript", c.Status, len(c.Transcript))
	}
	redacted := false
	for _, e := range r.check(t, "SECURITY-SESSION-BINDING").Transcript {
		if e.HTTP != nil && len(e.HTTP.Header["Authorization"]) > 0 {
			redacted = e.HTTP.Header["Authorization"][0] == reports.Redacted
		}
	}
	if !redacted {
		t.Error("no redacted Authorization header in the transcript of SECURITY-SESSION-BINDING")
	}
	assertNoSecret(t, r, "mcp-conform-principal-a", "mcp-conform-principal-b", suites.ReferenceToken, "mcp-conform-invalid-token")
}

// TestAuthUsage: credentials need an HTTP target, and a secret given in
// the environment must be set; no error quotes a value.
func TestAuthUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"run", "--stdio", "mcp-conform fixture", "--header", "Authorization: Bearer " + authStaticToken},
		{"run", "--header", "Authorization: Bearer " + authStaticToken},
		{"run", "--url", "http://127.0.0.1:1/mcp", "--header-env", "Authorization=MCP_CONFORM_UNSET_VAR"},
		{"run", "--url", "http://127.0.0.1:1/mcp", "--oauth-client-id", "x"},
		{"run", "--url", "http://127.0.0.1:1/mcp", "--header", "Bad Name: " + authStaticToken},
		{"init", "--stdio", "mcp-conform fixture", "--header", "Authorization: Bearer " + authStaticToken},
		{"proxy", "--header", "Authorization: Bearer " + authStaticToken, "--", "true"},
	} {
		r := runCLI(t, 30*time.Second, args...)
		if r.code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", args, r.code, r.stderr)
		}
		if strings.Contains(r.stdout+r.stderr, authStaticToken) {
			t.Errorf("%v: the output quotes the secret:\n%s", args, r.stderr)
		}
	}
}

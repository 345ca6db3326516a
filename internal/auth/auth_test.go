package auth_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/fixtures"
	"github.com/mcp-conform/mcp-conform/internal/auth"
	"github.com/mcp-conform/mcp-conform/internal/auth/authtest"
)

func TestBearerChallenge(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want map[string]string
		ok   bool
	}{
		{`Bearer resource_metadata="https://x/.well-known/oauth-protected-resource", scope="files:read"`,
			map[string]string{"resource_metadata": "https://x/.well-known/oauth-protected-resource", "scope": "files:read"}, true},
		{`Basic realm="a, b", Bearer error="invalid_token", resource_metadata="u"`, map[string]string{"error": "invalid_token", "resource_metadata": "u"}, true},
		{`bearer scope=read`, map[string]string{"scope": "read"}, true},
		{`Bearer realm="say \"hi\""`, map[string]string{"realm": `say "hi"`}, true},
		{`Bearer`, map[string]string{}, true},
		{`Basic realm="x"`, nil, false},
		{``, nil, false},
	} {
		got, ok := auth.BearerChallenge(tc.in)
		if ok != tc.ok || len(got) != len(tc.want) {
			t.Errorf("BearerChallenge(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
			continue
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("BearerChallenge(%q)[%s] = %q, want %q", tc.in, k, got[k], v)
			}
		}
	}
}

// TestApply: headers are added when absent, a check's own header is
// kept, and the Anonymous marker strips itself and adds nothing.
func TestApply(t *testing.T) {
	c := &auth.Credentials{Header: http.Header{"Authorization": {"Bearer run"}, "X-Tenant": {"t1"}}}
	h := http.Header{}
	if err := c.Apply(context.Background(), "http://x/mcp", h); err != nil {
		t.Fatal(err)
	}
	if h.Get("Authorization") != "Bearer run" || h.Get("X-Tenant") != "t1" {
		t.Errorf("added %v", h)
	}
	h = http.Header{"Authorization": {"Bearer principal-b"}}
	_ = c.Apply(context.Background(), "http://x/mcp", h)
	if h.Get("Authorization") != "Bearer principal-b" || h.Get("X-Tenant") != "t1" {
		t.Errorf("a check's own Authorization was not kept: %v", h)
	}
	h = http.Header{auth.Anonymous: {"1"}, "Accept": {"x"}}
	_ = c.Apply(context.Background(), "http://x/mcp", h)
	if len(h) != 1 || h.Get("Accept") != "x" {
		t.Errorf("anonymous request got %v, want only Accept", h)
	}
	var none *auth.Credentials
	h = http.Header{auth.Anonymous: {"1"}}
	if err := none.Apply(context.Background(), "http://x/mcp", h); err != nil || len(h) != 0 {
		t.Errorf("nil credentials: %v, %v", h, err)
	}
	if got := c.Names(); strings.Join(got, ",") != "Authorization,X-Tenant" {
		t.Errorf("Names() = %v", got)
	}
}

func TestFromEnv(t *testing.T) {
	env := map[string]string{"TOK": "Bearer abc", "BAD": "a\nb"}
	get := func(k string) string { return env[k] }
	h, err := auth.FromEnv([]string{"Authorization=TOK"}, get)
	if err != nil || h.Get("Authorization") != "Bearer abc" {
		t.Fatalf("FromEnv = %v, %v", h, err)
	}
	for _, bad := range []string{"Authorization", "=TOK", "Authorization=UNSET", "X=BAD"} {
		_, err := auth.FromEnv([]string{bad}, get)
		if err == nil {
			t.Errorf("FromEnv(%q): no error", bad)
		} else if strings.Contains(err.Error(), "abc") || strings.Contains(err.Error(), "a\nb") {
			t.Errorf("FromEnv(%q) error quotes a value: %v", bad, err)
		}
	}
}

// protected starts the reference server over HTTP as an OAuth resource
// server of as (introspection), listing as's issuer in its metadata.
func protected(t *testing.T, as *authtest.Server, servers ...string) string {
	t.Helper()
	h, err := fixtures.NewHTTPHandler(fixtures.HTTPOptions{Introspection: as.IntrospectURL, AuthorizationServers: servers})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Close()
		_ = h.(interface{ Close() error }).Close()
	})
	return srv.URL + "/mcp"
}

func startAS(t *testing.T, o authtest.Options) *authtest.Server {
	t.Helper()
	as, err := authtest.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = as.Close() })
	return as
}

// TestDiscover follows the discovery of the authorization page against
// the reference server: the 401 names the metadata, which names the
// authorization server, whose metadata gives the token endpoint; an
// issuer with a path is found by path insertion.
func TestDiscover(t *testing.T) {
	for _, path := range []string{"", "/tenant1"} {
		t.Run("issuer path="+path, func(t *testing.T) {
			as := startAS(t, authtest.Options{ClientID: "c", ClientSecret: "s", IssuerPath: path})
			ep := protected(t, as, as.Issuer)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			d, err := auth.Discover(ctx, http.DefaultClient, ep)
			if err != nil {
				t.Fatal(err)
			}
			if !d.FromChallenge || d.ResourceMetadata != strings.TrimSuffix(ep, "/mcp")+"/.well-known/oauth-protected-resource/mcp" {
				t.Errorf("metadata %q (from the challenge: %v)", d.ResourceMetadata, d.FromChallenge)
			}
			if d.Issuer != as.Issuer || d.TokenEndpoint != as.TokenURL || d.Resource != ep {
				t.Errorf("discovered %+v; want issuer %s, token endpoint %s, resource %s", d, as.Issuer, as.TokenURL, ep)
			}
		})
	}
}

// TestDiscoverRejects: metadata whose issuer is not the one asked, and a
// server without protected-resource metadata, are errors that say so.
func TestDiscoverRejects(t *testing.T) {
	as := startAS(t, authtest.Options{ClientID: "c", ClientSecret: "s"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The metadata lists the issuer with a trailing slash: the document's
	// issuer (without) is not identical, so it must not be used.
	ep := protected(t, as, as.Issuer+"/")
	if _, err := auth.Discover(ctx, http.DefaultClient, ep); err == nil || !strings.Contains(err.Error(), "not used") {
		t.Errorf("issuer mismatch: %v", err)
	}
	// Static tokens only: a 401 without resource_metadata, no metadata.
	h, _ := fixtures.NewHTTPHandler(fixtures.HTTPOptions{Tokens: []string{"static-token-1234"}})
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer h.(interface{ Close() error }).Close()
	_, err := auth.Discover(ctx, http.DefaultClient, srv.URL+"/mcp")
	if err == nil || !strings.Contains(err.Error(), "oauth-protected-resource/mcp") || !strings.Contains(err.Error(), "--oauth-token-url") {
		t.Errorf("no metadata: %v", err)
	}
}

// TestOAuthRefresh: the token source asks for the endpoint as the
// resource, reuses a token while it is valid, and fetches a new one
// before it expires; the reference accepts each.
func TestOAuthRefresh(t *testing.T) {
	as := startAS(t, authtest.Options{ClientID: "cid", ClientSecret: "sec", Lifetime: 2 * time.Second})
	ep := protected(t, as, as.Issuer)
	var seen []string
	o := &auth.OAuth{ClientID: "cid", ClientSecret: "sec", OnToken: func(tok string) { seen = append(seen, tok) }}
	creds := &auth.Credentials{OAuth: o}
	hc := &http.Client{Transport: creds.Transport(nil), Timeout: 10 * time.Second}
	ping := func() int {
		req, _ := http.NewRequest(http.MethodPost, ep, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "server/discover")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := ping(); s != http.StatusOK {
		t.Fatalf("first request: HTTP %d", s)
	}
	if s := ping(); s != http.StatusOK || as.Issued() != 1 {
		t.Fatalf("second request: HTTP %d, %d tokens issued (want the first reused)", s, as.Issued())
	}
	// Past the early refresh (lifetime 2s − 1s), a new token is used.
	time.Sleep(1200 * time.Millisecond)
	if s := ping(); s != http.StatusOK || as.Issued() != 2 {
		t.Fatalf("after 1.2s: HTTP %d, %d tokens issued, want a second one", s, as.Issued())
	}
	if len(seen) != 2 {
		t.Errorf("OnToken saw %d tokens, want 2", len(seen))
	}
	for _, r := range as.Resources() {
		if r != ep {
			t.Errorf("token asked for resource %q, want %s", r, ep)
		}
	}
	if as.Refused() != 0 {
		t.Errorf("the server refused %d tokens", as.Refused())
	}
	// A wrong secret is an error naming the token endpoint, not the secret.
	bad := &auth.OAuth{ClientID: "cid", ClientSecret: "wrong-secret-value", TokenURL: as.TokenURL}
	_, err := bad.Token(context.Background(), ep)
	if err == nil || strings.Contains(err.Error(), "wrong-secret-value") {
		t.Errorf("bad secret: %v", err)
	}
}

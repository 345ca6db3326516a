// Package authtest is a small OAuth 2.1 authorization server for tests: a
// real HTTP server on loopback that publishes its metadata (RFC 8414),
// issues short-lived client-credentials access tokens (RFC 6749 §4.4) for
// the resource asked (RFC 8707), and answers token introspection (RFC
// 7662), through which the reference server (fixtures.HTTPOptions.
// Introspection) accepts only the tokens it issued, for itself, until they
// expire. Tests use it to prove that mcp-conform discovers, fetches and
// refreshes tokens; it is not a general authorization server.
package authtest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Options configure a Server.
type Options struct {
	// ClientID and ClientSecret are the one client it knows.
	ClientID, ClientSecret string
	// Lifetime is how long a token lives (expires_in); default 3 s.
	Lifetime time.Duration
	// IssuerPath is the issuer's path ("" or e.g. "/tenant1"): the
	// metadata is then served at /.well-known/oauth-authorization-server/tenant1.
	IssuerPath string
	// Scope, when set, is the only scope granted (a request asking for
	// another is refused with invalid_scope).
	Scope string
}

// Server is a running authorization server.
type Server struct {
	// Issuer is its issuer identifier; TokenURL and IntrospectURL its
	// endpoints.
	Issuer, TokenURL, IntrospectURL string

	opts Options
	srv  *http.Server
	ln   net.Listener

	mu        sync.Mutex
	tokens    map[string]grant
	issued    int
	resources []string
	scopes    []string
	refused   int
}

type grant struct {
	resource string
	expiry   time.Time
	scope    string
}

// Start starts a server on a free loopback port. Close it.
func Start(opts Options) (*Server, error) {
	if opts.Lifetime <= 0 {
		opts.Lifetime = 3 * time.Second
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	base := "http://" + ln.Addr().String()
	s := &Server{
		Issuer: base + opts.IssuerPath, TokenURL: base + opts.IssuerPath + "/token", IntrospectURL: base + opts.IssuerPath + "/introspect",
		opts: opts, ln: ln, tokens: map[string]grant{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server"+opts.IssuerPath, s.metadata)
	mux.HandleFunc("POST "+opts.IssuerPath+"/token", s.token)
	mux.HandleFunc("POST "+opts.IssuerPath+"/introspect", s.introspect)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

// Issued is how many tokens it issued.
func (s *Server) Issued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.issued
}

// Tokens are the access tokens it issued, in no order.
func (s *Server) Tokens() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.tokens))
	for t := range s.tokens {
		out = append(out, t)
	}
	return out
}

// Resources are the resource parameters of the token requests, in order.
func (s *Server) Resources() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.resources...)
}

// Scopes are the scope parameters of the token requests, in order.
func (s *Server) Scopes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.scopes...)
}

// Refused is how many introspections found a token inactive (unknown,
// expired, or for another resource).
func (s *Server) Refused() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

func (s *Server) metadata(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                s.Issuer,
		"token_endpoint":                        s.TokenURL,
		"introspection_endpoint":                s.IntrospectURL,
		"grant_types_supported":                 []string{"client_credentials"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post"},
	})
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request")
		return
	}
	id, secret, ok := r.BasicAuth()
	if ok {
		// RFC 6749 §2.3.1: form-urlencoded before Basic encoding.
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	switch {
	case r.PostForm.Get("grant_type") != "client_credentials":
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type")
		return
	case id != s.opts.ClientID || secret != s.opts.ClientSecret:
		oauthError(w, http.StatusUnauthorized, "invalid_client")
		return
	}
	scope := r.PostForm.Get("scope")
	if s.opts.Scope != "" && scope != "" && scope != s.opts.Scope {
		oauthError(w, http.StatusBadRequest, "invalid_scope")
		return
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	tok := "at-" + hex.EncodeToString(b)
	resource := r.PostForm.Get("resource")
	s.mu.Lock()
	s.tokens[tok] = grant{resource: resource, expiry: time.Now().Add(s.opts.Lifetime), scope: scope}
	s.issued++
	s.resources = append(s.resources, resource)
	s.scopes = append(s.scopes, scope)
	s.mu.Unlock()
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": tok, "token_type": "Bearer", "expires_in": int(s.opts.Lifetime / time.Second), "scope": scope,
	})
}

func (s *Server) introspect(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request")
		return
	}
	tok := r.PostForm.Get("token")
	s.mu.Lock()
	g, ok := s.tokens[tok]
	active := ok && time.Now().Before(g.expiry)
	if !active {
		s.refused++
	}
	s.mu.Unlock()
	if !active {
		writeJSON(w, http.StatusOK, map[string]any{"active": false})
		return
	}
	out := map[string]any{"active": true, "client_id": s.opts.ClientID, "exp": g.expiry.Unix(), "token_type": "Bearer"}
	if g.resource != "" {
		out["aud"] = g.resource
	}
	if g.scope != "" {
		out["scope"] = g.scope
	}
	writeJSON(w, http.StatusOK, out)
}

func oauthError(w http.ResponseWriter, status int, code string) {
	writeJSON(w, status, map[string]any{"error": code})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// TrimBearer returns the token of an "Authorization: Bearer T" value.
func TrimBearer(v string) (string, bool) {
	scheme, tok, ok := strings.Cut(v, " ")
	return strings.TrimSpace(tok), ok && strings.EqualFold(scheme, "Bearer")
}

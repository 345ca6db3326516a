// Package auth holds the credentials mcp-conform sends to an HTTP target:
// fixed headers (--header, --header-env, the manifest's headers:) and an
// OAuth 2.1 client-credentials access token (--oauth-client-id …), fetched
// with golang.org/x/oauth2 from a token endpoint given or discovered from
// the server's protected-resource metadata (RFC 9728, RFC 8414), and
// refreshed before it expires.
//
// Every request the harness and its fault proxy send to the target goes
// through Credentials.Apply (the proxy calls it on each upstream request;
// wires that reach the target directly use Credentials.Transport), so a
// check body never handles a credential. A request that must reach the
// server without them (SECURITY-AUTH-REQUIRED) carries the Anonymous
// header, which Apply removes instead of adding anything.
//
//	flags / manifest ─▶ Credentials{Header, OAuth}
//	proxy upstream request ─┐
//	direct wire (Transport) ┴▶ Apply: Anonymous? strip : add what is missing
//	OAuth.Token(endpoint) ─▶ discover (once per endpoint) ─▶ clientcredentials ─▶ ReuseTokenSource
package auth

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/mcp-conform/mcp-conform/internal/httpheader"
)

// Anonymous is the request header a check sets on a request it sends on
// purpose without the run's credentials. Apply removes it and adds nothing;
// the server never sees it.
const Anonymous = "X-Mcp-Conform-Anonymous"

// Credentials are what every request to one HTTP target carries. The zero
// value (and nil) carries nothing. A Credentials is safe for concurrent use
// once built; do not modify Header afterwards.
type Credentials struct {
	// Header holds fixed headers, each set on a request that does not
	// already carry that header (a check sending another principal's
	// Authorization keeps it).
	Header http.Header
	// OAuth, when set, gives the Authorization: Bearer token of every
	// request that has no Authorization of its own.
	OAuth *OAuth
}

// Empty reports whether c adds nothing to a request.
func (c *Credentials) Empty() bool {
	return c == nil || (len(c.Header) == 0 && c.OAuth == nil)
}

// With returns credentials holding c's and then over's headers (a name in
// over replaces c's), and over's OAuth if set, else c's. Neither is
// modified.
func (c *Credentials) With(over *Credentials) *Credentials {
	out := &Credentials{Header: http.Header{}}
	for _, src := range []*Credentials{c, over} {
		if src == nil {
			continue
		}
		for k, vs := range src.Header {
			out.Header[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
		}
		if src.OAuth != nil {
			out.OAuth = src.OAuth
		}
	}
	if len(out.Header) == 0 {
		out.Header = nil
	}
	return out
}

// Names lists the header names c sets, sorted (Authorization when OAuth is
// set): the names whose values a transcript must hide.
func (c *Credentials) Names() []string {
	if c == nil {
		return nil
	}
	var out []string
	for k := range c.Header {
		out = append(out, http.CanonicalHeaderKey(k))
	}
	if c.OAuth != nil && c.Header.Get("Authorization") == "" {
		out = append(out, "Authorization")
	}
	sort.Strings(out)
	return out
}

// Apply adds c's headers to a request about to leave for the target at
// endpoint (the MCP endpoint URL, the audience of an OAuth token): each
// header the request does not carry yet, and Authorization from OAuth when
// it has none. A request carrying Anonymous loses that header and
// gets nothing. ctx bounds a token fetch.
func (c *Credentials) Apply(ctx context.Context, endpoint string, h http.Header) error {
	if _, ok := h[Anonymous]; ok {
		h.Del(Anonymous)
		return nil
	}
	if c == nil {
		return nil
	}
	for k, vs := range c.Header {
		if _, present := h[http.CanonicalHeaderKey(k)]; present {
			continue
		}
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	if c.OAuth != nil && h.Get("Authorization") == "" {
		tok, err := c.OAuth.Token(ctx, endpoint)
		if err != nil {
			return err
		}
		h.Set("Authorization", tok.Type()+" "+tok.AccessToken)
	}
	return nil
}

// Transport returns a RoundTripper that applies c to every request before
// base sends it (base nil: http.DefaultTransport). The endpoint of a
// request is its URL without query or fragment.
func (c *Credentials) Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{c: c, base: base}
}

type transport struct {
	c    *Credentials
	base http.RoundTripper
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context()) // a RoundTripper must not modify the request
	if err := t.c.Apply(req.Context(), Endpoint(req), r.Header); err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	return t.base.RoundTrip(r)
}

// Endpoint is the endpoint URL of a request: scheme, host and path.
func Endpoint(req *http.Request) string {
	u := *req.URL
	u.RawQuery, u.Fragment, u.RawFragment, u.User = "", "", "", nil
	return u.String()
}

// FromEnv reads --header-env values: NAME=VAR sets header NAME to the value
// of the environment variable VAR. A variable that is unset or empty is an
// error (naming the variable, never a value).
func FromEnv(specs []string, getenv func(string) string) (http.Header, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	h := http.Header{}
	for _, s := range specs {
		name, v, ok := strings.Cut(s, "=")
		name, v = strings.TrimSpace(name), strings.TrimSpace(v)
		if !ok || name == "" || v == "" {
			return nil, fmt.Errorf("--header-env %q: want NAME=ENVVAR (e.g. Authorization=MCP_TOKEN)", s)
		}
		val := getenv(v)
		if val == "" {
			return nil, fmt.Errorf("--header-env %s=%s: the environment variable %s is not set", name, v, v)
		}
		n, value, err := httpheader.Parse(name + ": " + val)
		if err != nil {
			return nil, fmt.Errorf("--header-env %s=%s: %w", name, v, err)
		}
		h.Add(n, value)
	}
	return h, nil
}

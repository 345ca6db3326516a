package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Discovery is what the discovery of an MCP server's authorization
// server found.
type Discovery struct {
	// ResourceMetadata is the URL the protected-resource metadata came
	// from; FromChallenge says it was named by the 401's WWW-Authenticate.
	ResourceMetadata string
	FromChallenge    bool
	// Resource is the resource identifier the token is asked for: the
	// metadata's resource, else the endpoint's canonical URI.
	Resource string
	// Issuer is the authorization server chosen (the first listed),
	// Metadata the URL its metadata came from, TokenEndpoint its token
	// endpoint.
	Issuer, Metadata, TokenEndpoint string
	// Scopes are the scopes to ask for: the challenge's scope, else the
	// metadata's scopes_supported.
	Scopes []string
}

// maxDoc bounds a metadata document.
const maxDoc = 1 << 20

// Discover finds the token endpoint of the MCP server at endpoint as the
// authorization page says a client does (2025-06-18 and 2025-11-25
// basic/authorization.mdx; 2026-07-28 basic/authorization/
// authorization-server-discovery.mdx):
//
//  1. send an MCP request without a token; a 401 whose WWW-Authenticate
//     (Bearer) names resource_metadata gives the metadata URL, and its
//     scope the scopes to ask for;
//  2. otherwise try the well-known URIs, at the endpoint's path first,
//     then at the root: /.well-known/oauth-protected-resource/PATH, then
//     /.well-known/oauth-protected-resource (RFC 9728);
//  3. from the metadata's authorization_servers (the first), fetch the
//     authorization server metadata: for an issuer with a path,
//     /.well-known/oauth-authorization-server/PATH,
//     /.well-known/openid-configuration/PATH, PATH/.well-known/openid-configuration;
//     without one, /.well-known/oauth-authorization-server then
//     /.well-known/openid-configuration (RFC 8414);
//  4. reject a document whose issuer is not the one the URL was built
//     from, or protected-resource metadata whose resource is not this
//     endpoint (RFC 9728 §3.3), and take token_endpoint.
func Discover(ctx context.Context, hc *http.Client, endpoint string) (*Discovery, error) {
	ep, err := url.Parse(endpoint)
	if err != nil || ep.Scheme == "" || ep.Host == "" {
		return nil, fmt.Errorf("oauth discovery: %q is not an absolute URL", endpoint)
	}
	d := &Discovery{}
	var tried []string
	var candidates []string
	challengeScope := ""
	status, ch, err := challenge(ctx, hc, endpoint)
	switch {
	case err != nil:
		tried = append(tried, fmt.Sprintf("POST %s without a token: %v", endpoint, err))
	case ch["resource_metadata"] != "":
		candidates = append(candidates, ch["resource_metadata"])
		d.FromChallenge = true
		challengeScope = ch["scope"]
	default:
		tried = append(tried, fmt.Sprintf("POST %s without a token: HTTP %d, no WWW-Authenticate resource_metadata", endpoint, status))
		if status == http.StatusUnauthorized {
			challengeScope = ch["scope"]
		}
	}
	if !d.FromChallenge {
		root := &url.URL{Scheme: ep.Scheme, Host: ep.Host}
		if p := strings.TrimSuffix(ep.EscapedPath(), "/"); p != "" {
			candidates = append(candidates, root.String()+"/.well-known/oauth-protected-resource"+p)
		}
		candidates = append(candidates, root.String()+"/.well-known/oauth-protected-resource")
	}
	var prm struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
		ScopesSupported      []string `json:"scopes_supported"`
	}
	found := false
	for _, u := range candidates {
		err := getJSON(ctx, hc, u, &prm)
		if err != nil {
			tried = append(tried, fmt.Sprintf("GET %s: %v", u, err))
			if d.FromChallenge {
				break // the server named it: no guessing past it
			}
			continue
		}
		if len(prm.AuthorizationServers) == 0 {
			tried = append(tried, fmt.Sprintf("GET %s: no authorization_servers", u))
			continue
		}
		d.ResourceMetadata, found = u, true
		break
	}
	if !found {
		return nil, fmt.Errorf("oauth discovery for %s found no protected-resource metadata (%s): give --oauth-token-url", endpoint, strings.Join(tried, "; "))
	}
	if prm.Resource != "" && !resourceCovers(prm.Resource, endpoint) {
		return nil, fmt.Errorf("oauth discovery: the protected-resource metadata at %s is for resource %q, not %s (RFC 9728 §3.3: such metadata must not be used)", d.ResourceMetadata, prm.Resource, endpoint)
	}
	d.Resource = canonicalResource(endpoint)
	if prm.Resource != "" {
		d.Resource = prm.Resource
	}
	if challengeScope != "" {
		d.Scopes = strings.Fields(challengeScope)
	} else if len(prm.ScopesSupported) > 0 {
		d.Scopes = prm.ScopesSupported
	}
	d.Issuer = prm.AuthorizationServers[0]
	iss, err := url.Parse(d.Issuer)
	if err != nil || iss.Scheme == "" || iss.Host == "" {
		return nil, fmt.Errorf("oauth discovery: authorization server %q (from %s) is not an absolute URL", d.Issuer, d.ResourceMetadata)
	}
	tried = tried[:0]
	for _, u := range asMetadataURLs(iss) {
		var asm struct {
			Issuer        string `json:"issuer"`
			TokenEndpoint string `json:"token_endpoint"`
		}
		if err := getJSON(ctx, hc, u, &asm); err != nil {
			tried = append(tried, fmt.Sprintf("GET %s: %v", u, err))
			continue
		}
		if asm.Issuer != d.Issuer {
			// 2026-07-28: "the issuer value in the document MUST be
			// identical to the issuer identifier used to construct the
			// well-known URL. If they differ, the client MUST NOT use the
			// metadata."
			tried = append(tried, fmt.Sprintf("GET %s: issuer %q is not %q (not used)", u, asm.Issuer, d.Issuer))
			continue
		}
		if asm.TokenEndpoint == "" {
			tried = append(tried, fmt.Sprintf("GET %s: no token_endpoint", u))
			continue
		}
		d.Metadata, d.TokenEndpoint = u, asm.TokenEndpoint
		return d, nil
	}
	return nil, fmt.Errorf("oauth discovery: no usable metadata for authorization server %s (%s): give --oauth-token-url", d.Issuer, strings.Join(tried, "; "))
}

// asMetadataURLs are the authorization server metadata URLs to try for an
// issuer, in the authorization page's order.
func asMetadataURLs(iss *url.URL) []string {
	root := (&url.URL{Scheme: iss.Scheme, Host: iss.Host}).String()
	p := strings.TrimSuffix(iss.EscapedPath(), "/")
	if p == "" {
		return []string{root + "/.well-known/oauth-authorization-server", root + "/.well-known/openid-configuration"}
	}
	return []string{
		root + "/.well-known/oauth-authorization-server" + p,
		root + "/.well-known/openid-configuration" + p,
		root + p + "/.well-known/openid-configuration",
	}
}

// resourceCovers reports whether a protected-resource metadata's resource
// identifies endpoint: the same canonical URI, or a prefix of its path (a
// server identified by its origin).
func resourceCovers(resource, endpoint string) bool {
	r, e := canonicalResource(resource), canonicalResource(endpoint)
	return r == e || strings.HasPrefix(e, r+"/")
}

// challenge sends an MCP ping without credentials and returns the status
// and, for a 401, the parameters of its Bearer challenge.
func challenge(ctx context.Context, hc *http.Client, endpoint string) (int, map[string]string, error) {
	body := []byte(`{"jsonrpc":"2.0","id":"mcp-conform-oauth-discovery","method":"ping"}`)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDoc))
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		return resp.StatusCode, nil, nil
	}
	for _, v := range resp.Header.Values("WWW-Authenticate") {
		if ps, ok := BearerChallenge(v); ok {
			return resp.StatusCode, ps, nil
		}
	}
	return resp.StatusCode, nil, nil
}

// getJSON fetches a metadata document into v.
func getJSON(ctx context.Context, hc *http.Client, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxDoc+1))
	switch {
	case err != nil:
		return err
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	case len(b) > maxDoc:
		return errors.New("document over 1 MiB")
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	}
	return nil
}

// BearerChallenge parses one WWW-Authenticate value (RFC 9110 §11.6.1)
// and returns the auth-params of its Bearer challenge, names in lower
// case, quoted strings unquoted. ok is false when no challenge of the
// value is Bearer. A value may hold several challenges, separated by
// commas like their parameters: a token that is not followed by "=" starts
// the next challenge.
func BearerChallenge(v string) (map[string]string, bool) {
	p := &challengeParser{s: v}
	var params map[string]string
	inBearer, found := false, false
	for {
		p.skip(" \t,")
		if p.done() {
			break
		}
		tok := p.token()
		if tok == "" {
			p.i++ // a stray character
			continue
		}
		p.skip(" \t")
		if p.peek() == '=' {
			p.i++
			p.skip(" \t")
			val := ""
			if p.peek() == '"' {
				val = p.quoted()
			} else {
				val = p.token68()
			}
			if inBearer {
				params[strings.ToLower(tok)] = val
			}
			continue
		}
		// A new challenge: its scheme, then perhaps a token68.
		inBearer = strings.EqualFold(tok, "Bearer")
		if inBearer && !found {
			found, params = true, map[string]string{}
		} else if inBearer {
			inBearer = false // only the first Bearer challenge counts
		}
	}
	return params, found
}

type challengeParser struct {
	s string
	i int
}

func (p *challengeParser) done() bool { return p.i >= len(p.s) }

func (p *challengeParser) peek() byte {
	if p.done() {
		return 0
	}
	return p.s[p.i]
}

func (p *challengeParser) skip(set string) {
	for !p.done() && strings.IndexByte(set, p.s[p.i]) >= 0 {
		p.i++
	}
}

// token reads an RFC 9110 token.
func (p *challengeParser) token() string {
	start := p.i
	for !p.done() && isTchar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

// token68 reads a token68 or token value (up to a comma or blank).
func (p *challengeParser) token68() string {
	start := p.i
	for !p.done() && p.s[p.i] != ',' && p.s[p.i] != ' ' && p.s[p.i] != '\t' {
		p.i++
	}
	return p.s[start:p.i]
}

// quoted reads a quoted-string (the opening quote at p.i).
func (p *challengeParser) quoted() string {
	p.i++
	var b strings.Builder
	for !p.done() {
		c := p.s[p.i]
		p.i++
		switch c {
		case '\\':
			if !p.done() {
				b.WriteByte(p.s[p.i])
				p.i++
			}
		case '"':
			return b.String()
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isTchar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// DefaultEarlyRefresh is how long before its expiry an access token is
// replaced by a new one (OAuth.EarlyRefresh when zero): a request never
// leaves with a token about to expire on its way.
const DefaultEarlyRefresh = time.Second

// OAuth is an OAuth 2.1 client-credentials client (RFC 6749 §4.4 as OAuth
// 2.1 keeps it) for the MCP endpoints it is asked tokens for. It discovers
// the token endpoint of each endpoint once (unless TokenURL is set), asks
// for a token with the endpoint as the RFC 8707 resource, reuses it until
// EarlyRefresh before it expires, then fetches a new one: a long run
// outlives any token. It is safe for concurrent use; set the fields before
// the first Token.
type OAuth struct {
	// ClientID and ClientSecret are the client's credentials (sent as the
	// token endpoint prefers: HTTP Basic, or the form body).
	ClientID, ClientSecret string
	// TokenURL is the token endpoint; empty: discovered from the MCP
	// server's protected-resource metadata (Discover).
	TokenURL string
	// Scopes are the scopes asked for. Nil: the scope of the server's 401
	// challenge, else the metadata's scopes_supported, else none (the
	// authorization page's scope selection strategy).
	Scopes []string
	// HTTPClient sends the discovery and token requests; nil: one with a
	// 10 s timeout.
	HTTPClient *http.Client
	// EarlyRefresh is DefaultEarlyRefresh when zero.
	EarlyRefresh time.Duration
	// OnToken, when set, is called with every access token fetched (the
	// CLI adds it to the secrets reports hide).
	OnToken func(accessToken string)
	// Log, when set, receives one line per discovery and per token fetched
	// (URLs and expiry, never a secret).
	Log func(format string, args ...any)

	mu  sync.Mutex
	per map[string]*tokenSource
}

// tokenSource is the reused token source of one endpoint.
type tokenSource struct {
	mu   sync.Mutex // held while it is built (discovery)
	src  oauth2.TokenSource
	disc *Discovery
}

// Token returns a valid access token for endpoint, fetching (and, the
// first time, discovering) as needed. ctx bounds the discovery; the token
// requests themselves are bounded by the HTTP client's timeout.
func (o *OAuth) Token(ctx context.Context, endpoint string) (*oauth2.Token, error) {
	key := canonicalResource(endpoint)
	o.mu.Lock()
	if o.per == nil {
		o.per = map[string]*tokenSource{}
	}
	ts := o.per[key]
	if ts == nil {
		ts = &tokenSource{}
		o.per[key] = ts
	}
	o.mu.Unlock()

	ts.mu.Lock()
	if ts.src == nil {
		if err := o.build(ctx, ts, endpoint); err != nil {
			ts.mu.Unlock()
			return nil, err
		}
	}
	src := ts.src
	ts.mu.Unlock()
	tok, err := src.Token()
	if err != nil {
		return nil, fmt.Errorf("oauth: client-credentials token for %s: %w", endpoint, err)
	}
	return tok, nil
}

// Discovered returns what discovery found for endpoint (nil when the token
// URL was given, or before the first Token).
func (o *OAuth) Discovered(endpoint string) *Discovery {
	o.mu.Lock()
	ts := o.per[canonicalResource(endpoint)]
	o.mu.Unlock()
	if ts == nil {
		return nil
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.disc
}

func (o *OAuth) client() *http.Client {
	if o.HTTPClient != nil {
		return o.HTTPClient
	}
	return &http.Client{Timeout: 10 * time.Second}
}

func (o *OAuth) logf(format string, args ...any) {
	if o.Log != nil {
		o.Log(format, args...)
	}
}

// build discovers (when needed) and makes the endpoint's token source.
func (o *OAuth) build(ctx context.Context, ts *tokenSource, endpoint string) error {
	if o.ClientID == "" {
		return errors.New("oauth: no client id")
	}
	hc := o.client()
	tokenURL, scopes, resource := o.TokenURL, o.Scopes, canonicalResource(endpoint)
	if tokenURL == "" {
		d, err := Discover(ctx, hc, endpoint)
		if err != nil {
			return err
		}
		ts.disc = d
		tokenURL, resource = d.TokenEndpoint, d.Resource
		if scopes == nil {
			scopes = d.Scopes
		}
		o.logf("oauth: %s: token endpoint %s of %s (protected-resource metadata %s)", endpoint, d.TokenEndpoint, d.Issuer, d.ResourceMetadata)
	}
	cc := &clientcredentials.Config{
		ClientID: o.ClientID, ClientSecret: o.ClientSecret, TokenURL: tokenURL, Scopes: scopes,
		// RFC 8707: the token is asked for this MCP server (the
		// authorization page: "MUST be included in both authorization
		// requests and token requests").
		EndpointParams: url.Values{"resource": {resource}},
	}
	early := o.EarlyRefresh
	if early <= 0 {
		early = DefaultEarlyRefresh
	}
	cctx := context.WithValue(context.Background(), oauth2.HTTPClient, hc)
	ts.src = oauth2.ReuseTokenSourceWithExpiry(nil, &notifying{src: cc.TokenSource(cctx), o: o, url: tokenURL}, early)
	return nil
}

// notifying reports each token its source fetches.
type notifying struct {
	src oauth2.TokenSource
	o   *OAuth
	url string
}

func (n *notifying) Token() (*oauth2.Token, error) {
	tok, err := n.src.Token()
	if err != nil {
		return nil, err
	}
	if n.o.OnToken != nil {
		n.o.OnToken(tok.AccessToken)
		if tok.RefreshToken != "" {
			n.o.OnToken(tok.RefreshToken)
		}
	}
	exp := "no expiry"
	if !tok.Expiry.IsZero() {
		exp = "expires in " + time.Until(tok.Expiry).Round(time.Millisecond).String()
	}
	n.o.logf("oauth: new access token from %s (%s)", n.url, exp)
	return tok, nil
}

// canonicalResource is the canonical URI of an MCP server (the
// authorization page, RFC 8707 §2): lower-case scheme and host, no
// fragment, no query, no trailing slash.
func canonicalResource(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return endpoint
	}
	u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	u.RawQuery, u.Fragment, u.RawFragment, u.User = "", "", "", nil
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	return u.String()
}

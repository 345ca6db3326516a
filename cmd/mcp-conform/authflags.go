package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/spf13/pflag"

	"github.com/mcp-conform/mcp-conform/internal/auth"
	"github.com/mcp-conform/mcp-conform/internal/httpheader"
	"github.com/mcp-conform/mcp-conform/reports"
)

// authFlags are the credentials for an HTTP target that run, init and
// proxy share: fixed headers (given, or read from the environment) and an
// OAuth 2.1 client-credentials client.
type authFlags struct {
	headers, headerEnv []string
	clientID           string
	secretEnv          string
	tokenURL           string
	scopes             []string
}

func (a *authFlags) register(fl *pflag.FlagSet, what string) {
	fl.StringArrayVar(&a.headers, "header", nil, "'Name: value' header sent with every HTTP request "+what+" (repeatable); its value is redacted from every report and transcript")
	fl.StringArrayVar(&a.headerEnv, "header-env", nil, "NAME=ENVVAR: header NAME sent with every HTTP request "+what+", its value read from the environment variable ENVVAR (repeatable; e.g. Authorization=MCP_AUTH holding 'Bearer …'), so that secrets stay off the command line")
	fl.StringVar(&a.clientID, "oauth-client-id", "", "OAuth 2.1 client-credentials client id: every HTTP request carries 'Authorization: Bearer TOKEN', the token fetched (and refreshed before it expires) from the token endpoint")
	fl.StringVar(&a.secretEnv, "oauth-client-secret-env", "", "environment variable holding the OAuth client secret (with --oauth-client-id)")
	fl.StringVar(&a.tokenURL, "oauth-token-url", "", "OAuth token endpoint (default: discovered from the server's protected-resource metadata, RFC 9728, and its authorization server's metadata, RFC 8414)")
	fl.StringArrayVar(&a.scopes, "oauth-scope", nil, "scope to ask for (repeatable; default: the scope of the server's 401 challenge, else the metadata's scopes_supported)")
}

// set reports whether any credential flag was given.
func (a authFlags) set() bool {
	return len(a.headers) > 0 || len(a.headerEnv) > 0 || a.clientID != "" || a.secretEnv != "" || a.tokenURL != "" || len(a.scopes) > 0
}

// credentials builds the credentials the flags give (nil: none), and adds
// every secret of them to reports.Secrets. log, when set, receives the
// OAuth client's discovery and token lines.
func (a authFlags) credentials(log io.Writer) (*auth.Credentials, error) {
	if !a.set() {
		return nil, nil
	}
	h, err := httpheader.ParseAll(a.headers)
	if err != nil {
		return nil, err
	}
	fromEnv, err := auth.FromEnv(a.headerEnv, os.Getenv)
	if err != nil {
		return nil, err
	}
	if h == nil {
		h = http.Header{}
	}
	for k, vs := range fromEnv {
		h[k] = vs // --header-env replaces a --header of the same name
	}
	for k, vs := range h {
		reports.Secrets.AddHeader(k)
		reports.Secrets.Add(vs...)
	}
	c := &auth.Credentials{Header: h}
	if len(h) == 0 {
		c.Header = nil
	}
	switch {
	case a.clientID == "" && (a.secretEnv != "" || a.tokenURL != "" || len(a.scopes) > 0):
		return nil, errors.New("--oauth-client-secret-env, --oauth-token-url and --oauth-scope need --oauth-client-id")
	case a.clientID == "":
		return c, nil
	case a.secretEnv == "":
		return nil, errors.New("--oauth-client-id needs --oauth-client-secret-env VAR (the client secret, read from the environment)")
	}
	secret := os.Getenv(a.secretEnv)
	if secret == "" {
		return nil, fmt.Errorf("--oauth-client-secret-env %s: the environment variable %s is not set", a.secretEnv, a.secretEnv)
	}
	reports.Secrets.Add(secret)
	reports.Secrets.AddHeader("Authorization")
	o := &auth.OAuth{ClientID: a.clientID, ClientSecret: secret, TokenURL: a.tokenURL,
		OnToken: func(tok string) { reports.Secrets.Add(tok) }}
	for _, s := range a.scopes {
		o.Scopes = append(o.Scopes, strings.Fields(s)...)
	}
	if log != nil {
		var mu sync.Mutex
		o.Log = func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintln(log, reports.Secrets.String(fmt.Sprintf(format, args...)))
		}
	}
	c.OAuth = o
	return c, nil
}

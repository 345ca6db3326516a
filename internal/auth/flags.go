package auth

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/mcp-conform/mcp-conform/internal/httpheader"
)

// Flags are the credential flags of an HTTP target that run, init, review
// and proxy share: fixed headers (--header, or --header-env read from the
// environment) and an OAuth 2.1 client-credentials client (--oauth-…).
type Flags struct {
	Headers, HeaderEnv []string
	ClientID           string
	SecretEnv          string
	TokenURL           string
	Scopes             []string
}

// Redactor is where the secrets of the credentials are registered so that
// no report or log line shows them (reports.Secrets).
type Redactor interface {
	Add(secrets ...string)
	AddHeader(names ...string)
	String(s string) string
}

// Set reports whether any credential flag was given.
func (a Flags) Set() bool {
	return len(a.Headers) > 0 || len(a.HeaderEnv) > 0 || a.ClientID != "" || a.SecretEnv != "" || a.TokenURL != "" || len(a.Scopes) > 0
}

// Credentials builds the credentials the flags give (nil: none), and adds
// every secret of them to secrets. log, when set, receives the OAuth
// client's discovery and token lines, redacted.
func (a Flags) Credentials(log io.Writer, secrets Redactor) (*Credentials, error) {
	if !a.Set() {
		return nil, nil
	}
	h, err := httpheader.ParseAll(a.Headers)
	if err != nil {
		return nil, err
	}
	fromEnv, err := FromEnv(a.HeaderEnv, os.Getenv)
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
		secrets.AddHeader(k)
		secrets.Add(vs...)
	}
	c := &Credentials{Header: h}
	if len(h) == 0 {
		c.Header = nil
	}
	switch {
	case a.ClientID == "" && (a.SecretEnv != "" || a.TokenURL != "" || len(a.Scopes) > 0):
		return nil, errors.New("--oauth-client-secret-env, --oauth-token-url and --oauth-scope need --oauth-client-id")
	case a.ClientID == "":
		return c, nil
	case a.SecretEnv == "":
		return nil, errors.New("--oauth-client-id needs --oauth-client-secret-env VAR (the client secret, read from the environment)")
	}
	secret := os.Getenv(a.SecretEnv)
	if secret == "" {
		return nil, fmt.Errorf("--oauth-client-secret-env %s: the environment variable %s is not set", a.SecretEnv, a.SecretEnv)
	}
	secrets.Add(secret)
	secrets.AddHeader("Authorization")
	o := &OAuth{ClientID: a.ClientID, ClientSecret: secret, TokenURL: a.TokenURL,
		OnToken: func(tok string) { secrets.Add(tok) }}
	for _, s := range a.Scopes {
		o.Scopes = append(o.Scopes, strings.Fields(s)...)
	}
	if log != nil {
		var mu sync.Mutex
		o.Log = func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintln(log, secrets.String(fmt.Sprintf(format, args...)))
		}
	}
	c.OAuth = o
	return c, nil
}

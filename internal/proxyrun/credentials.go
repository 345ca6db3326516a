package proxyrun

import (
	"errors"
	"io"
	"net/http"

	"github.com/mcp-conform/mcp-conform/internal/auth"
)

// SetCredentials makes the proxy send c upstream (Authorize) and redact
// their header names (Redact). Credentials need an HTTP upstream: without
// Upstream it is a *UsageError. Nil or empty credentials change nothing.
func (o *Options) SetCredentials(c *auth.Credentials) error {
	if c.Empty() {
		return nil
	}
	if o.Upstream == "" {
		return &UsageError{Err: errors.New("proxy: --header, --header-env and --oauth-… need --url")}
	}
	o.Redact = c.Names()
	o.Authorize = func(req *http.Request) error { return c.Apply(req.Context(), auth.Endpoint(req), req.Header) }
	return nil
}

// UseCredentials builds the command line's credentials (build, its log
// receiving the OAuth client's lines) and sets them (SetCredentials). A
// credential flag that cannot be used is bad usage.
func (o *Options) UseCredentials(build func(log io.Writer) (*auth.Credentials, error), log io.Writer) error {
	c, err := build(log)
	if err != nil {
		return &UsageError{Err: err}
	}
	return o.SetCredentials(c)
}

package proxyrun

import (
	"errors"
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

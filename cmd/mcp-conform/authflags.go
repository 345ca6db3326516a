package main

import (
	"io"

	"github.com/spf13/pflag"

	"github.com/mcp-conform/mcp-conform/internal/auth"
	"github.com/mcp-conform/mcp-conform/reports"
)

// authFlags are the credentials for an HTTP target that run, init, review
// and proxy share (auth.Flags).
type authFlags struct{ auth.Flags }

func (a *authFlags) register(fl *pflag.FlagSet, what string) {
	fl.StringArrayVar(&a.Headers, "header", nil, "'Name: value' header sent with every HTTP request "+what+" (repeatable); its value is redacted from every report and transcript")
	fl.StringArrayVar(&a.HeaderEnv, "header-env", nil, "NAME=ENVVAR: header NAME sent with every HTTP request "+what+", its value read from the environment variable ENVVAR (repeatable; e.g. Authorization=MCP_AUTH holding 'Bearer …'), so that secrets stay off the command line")
	fl.StringVar(&a.ClientID, "oauth-client-id", "", "OAuth 2.1 client-credentials client id: every HTTP request carries 'Authorization: Bearer TOKEN', the token fetched (and refreshed before it expires) from the token endpoint")
	fl.StringVar(&a.SecretEnv, "oauth-client-secret-env", "", "environment variable holding the OAuth client secret (with --oauth-client-id)")
	fl.StringVar(&a.TokenURL, "oauth-token-url", "", "OAuth token endpoint (default: discovered from the server's protected-resource metadata, RFC 9728, and its authorization server's metadata, RFC 8414)")
	fl.StringArrayVar(&a.Scopes, "oauth-scope", nil, "scope to ask for (repeatable; default: the scope of the server's 401 challenge, else the metadata's scopes_supported)")
}

// credentials builds the flags' credentials (nil: none), their secrets
// added to reports.Secrets.
func (a authFlags) credentials(log io.Writer) (*auth.Credentials, error) {
	return a.Credentials(log, reports.Secrets)
}

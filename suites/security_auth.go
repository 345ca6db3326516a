package suites

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/internal/auth"
	"github.com/mcp-conform/mcp-conform/reports"
)

// The authorization pages: one per 2025 version, a folder in 2026-07-28.
const (
	authLegacy = "specification/VERSION/basic/authorization.mdx"
	authModern = "specification/2026-07-28/basic/authorization/index.mdx"
)

const authClause = "Invalid or expired tokens MUST receive a HTTP 401 response. " +
	"Servers MUST return appropriate HTTP status codes for authorization errors: 401 Unauthorized, " +
	"\"Authorization required or token invalid\"."

var checkAuthRequired = register(&Check{
	ID:    "SECURITY-AUTH-REQUIRED",
	Title: "a request without a valid token is refused with 401",
	How: "Needs the manifest's requiresAuth: true. Connects with the run's credentials (--header, --header-env, " +
		"the manifest's headers:, --oauth-…), then sends two requests without them: one with no Authorization at all (an initialize for a new " +
		"session in 2025, server/discover in 2026-07-28), one with a bearer token no authorization server issued " +
		"(a ping in the session the credentials opened; server/discover). Each must get HTTP 401.",
	Rules: merge(
		sameRule(Rule{Level: reports.Must, Spec: authLegacy, Clause: authClause}, legacyVersions...),
		map[string]Rule{v20260728: {Level: reports.Must, Spec: authModern, Clause: authClause}},
	),
	Transports: []string{viaHTTP},
})

func registerSecurityAuth() {
	ginkgo.Describe("SECURITY authorization", ginkgo.Label("area:security"), func() {
		define(checkAuthRequired, authRequired)
		define(checkAuthEveryRequest, authEveryRequest)
		define(checkTokenAudience, tokenAudience)
	})
}

func authRequired(h *H) {
	if !h.Target().RequiresAuth {
		h.Skip("the target manifest does not declare requiresAuth: true (authorization is optional in MCP: whether this server requires it is unknown)")
	}
	c := h.ConnectHTTP() // with the run's credentials: they work
	modern := c.W.Session().Era == clients.EraModern
	for _, try := range []struct {
		what    string
		header  http.Header
		session bool
	}{
		// A new session (2025) or a request (2026) with no credential.
		{"no Authorization header", nil, false},
		// A request in the session the run's credentials opened.
		{"an invalid bearer token", http.Header{"Authorization": {"Bearer " + unique("mcp-conform-invalid-token")}}, true},
	} {
		hd := http.Header{auth.Anonymous: {"1"}} // the proxy adds none of the run's credentials
		for k, v := range try.header {
			hd[k] = v
		}
		var body []byte
		switch {
		case modern:
			hd.Set("Mcp-Protocol-Version", c.W.Session().Version)
			hd.Set("Mcp-Method", "server/discover")
			body, _ = json.Marshal(request(unique("auth"), "server/discover", map[string]any{"_meta": modernMeta(c.W.Session().Version)}))
		case try.session:
			for k, v := range sessionHeaders(c, c.W.SessionID()) {
				hd[k] = v
			}
			body, _ = json.Marshal(request(unique("auth"), "ping", nil))
		default:
			body, _ = json.Marshal(request(unique("auth"), "initialize", map[string]any{
				"protocolVersion": c.W.Session().Version, "capabilities": map[string]any{},
				"clientInfo": map[string]any{"name": "mcp-conform", "version": clients.DefaultClientVersion},
			}))
		}
		resp, raw := rawBody(h, c, body, hd)
		if resp.StatusCode != http.StatusUnauthorized {
			what := ": " + string(raw)
			switch {
			case resp.StatusCode/100 == 2:
				what = " (it was served: the transcript holds the answer)"
			case len(raw) > 300:
				what = fmt.Sprintf(" (a %d-byte body, in the transcript)", len(raw))
			}
			h.Failf("a request with %s (and none of the run's credentials) got HTTP %d, want 401%s", try.what, resp.StatusCode, what)
		}
		h.Notef("a request with %s got 401 (WWW-Authenticate: %q)", try.what, resp.Header.Get("WWW-Authenticate"))
	}
}

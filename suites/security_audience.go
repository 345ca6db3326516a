package suites

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/internal/auth"
	"github.com/mcp-conform/mcp-conform/reports"
)

// sec#8: a token that was not issued for this server is refused. Which
// token was issued for another resource is not visible on the wire: the
// manifest declares one (foreignAuth), and the check judges against that
// declaration.

const audienceClause = "MCP servers MUST NOT accept any tokens that were not explicitly issued for the MCP server. " +
	"[authorization] MCP servers MUST validate that access tokens were issued specifically for them as the intended audience"

var checkTokenAudience = register(&Check{
	ID:    "SECURITY-TOKEN-AUDIENCE",
	Title: "a token issued for another resource (another audience) is refused with 401",
	How: "Needs the manifest's foreignAuth: the headers of a credential the target's authorization server issued for " +
		"another resource (its operator vouches for that; the wire cannot tell). Opens a session with the run's " +
		"credentials, then sends with the foreign credential instead (none of the run's): a new session's initialize " +
		"(server/discover in 2026-07-28) and the barrier request in the run's session. Each must get HTTP 401: a 2xx means " +
		"the token was accepted. The level comes from the specification's sentence; which token is foreign comes from the " +
		"manifest's declaration.",
	Rules: merge(
		sameRule(Rule{Level: reports.Must, Spec: bestPractices, Also: []string{authLegacy}, Clause: audienceClause}, legacyVersions...),
		sameRule(Rule{Level: reports.Must, Spec: bestPractices, Also: []string{authModern}, Clause: audienceClause}, v20260728),
	),
	Transports: []string{viaHTTP},
	Clauses:    []string{"sec#8"},
})

func tokenAudience(h *H) {
	foreign := h.Target().ForeignAuth
	if len(foreign) == 0 {
		h.Skip("the target manifest declares no foreignAuth (a credential issued for another resource): which token is foreign is not visible on the wire")
	}
	c := h.ConnectHTTP() // with the run's credentials: they work
	s := c.W.Session()
	names := make([]string, 0, len(foreign))
	for k := range foreign {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, try := range []struct {
		what    string
		session bool
	}{
		{"a new session's first request", false},
		{"a request in the run's session", true},
	} {
		hd := http.Header{auth.Anonymous: {"1"}} // the proxy adds none of the run's credentials
		for _, k := range names {
			hd.Set(k, foreign[k])
		}
		var body []byte
		switch {
		case s.Era == clients.EraModern:
			hd.Set("Mcp-Protocol-Version", s.Version)
			hd.Set("Mcp-Method", "server/discover")
			body, _ = json.Marshal(request(unique("aud"), "server/discover", map[string]any{"_meta": modernMeta(s.Version)}))
		case try.session:
			for k, v := range sessionHeaders(c, c.W.SessionID()) {
				hd[k] = v
			}
			body, _ = json.Marshal(request(unique("aud"), "ping", nil))
		default:
			body, _ = json.Marshal(request(unique("aud"), "initialize", map[string]any{
				"protocolVersion": s.Version, "capabilities": map[string]any{},
				"clientInfo": map[string]any{"name": "mcp-conform", "version": clients.DefaultClientVersion},
			}))
		}
		resp, raw := rawBody(h, c, body, hd)
		if resp.StatusCode == http.StatusUnauthorized {
			h.Notef("%s with the foreign credential (%s) got 401", try.what, strings.Join(names, ", "))
			continue
		}
		what := ""
		switch {
		case resp.StatusCode/100 == 2:
			what = " (the token was accepted: the transcript holds the answer)"
		case len(raw) > 0 && len(raw) <= 300:
			what = ": " + string(raw)
		}
		h.Failf("%s with the manifest's foreignAuth credential (issued for another resource) got HTTP %d, want 401%s", try.what, resp.StatusCode, what)
	}
}

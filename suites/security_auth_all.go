package suites

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/internal/auth"
	"github.com/mcp-conform/mcp-conform/reports"
)

// sec#3: the security best practices' "MCP servers that implement
// authorization MUST verify all inbound requests", judged on every method
// and HTTP verb a client uses, not only on the first request of a session
// (SECURITY-AUTH-REQUIRED).

const authAllClause = "MCP servers that implement authorization MUST verify all inbound requests. " +
	"[authorization] Invalid or expired tokens MUST receive a HTTP 401 response."

// authSessionClause is sec#4, the sentence after sec#3's in the 2025
// guides: a 2025 probe carries the authorized session's id, so serving it
// without a token takes the session for the credential.
const authSessionClause = "MCP servers that implement authorization MUST verify all inbound requests. " +
	"MCP Servers MUST NOT use sessions for authentication. " +
	"[authorization] Invalid or expired tokens MUST receive a HTTP 401 response."

var checkAuthEveryRequest = register(&Check{
	ID:    "SECURITY-AUTH-EVERY-REQUEST",
	Title: "every request, of every method and HTTP verb, without a valid token is refused with 401",
	How: "Needs the manifest's requiresAuth: true. Opens a session with the run's credentials, then sends without them " +
		"(once with no Authorization at all, once with a bearer token no authorization server issued) each of: the " +
		"era's barrier request (ping in the session, server/discover in 2026-07-28), tools/list and a tools/call of a tool " +
		"name no server has (when the server declared tools), a notification POST (2025: notifications/roots/list_changed " +
		"in the session), and in 2025 a GET of the session's standalone stream and a DELETE of the session (last). " +
		"Each must get HTTP 401: a 2xx (or any other answer) means the request was not verified. In 2026-07-28 a GET " +
		"or DELETE has no MCP meaning and is answered 405 by a server that serves none; 401 or 405 both serve nothing there. " +
		"In 2025 every probe carries the Mcp-Session-Id of the session the run's credentials opened: one served without a " +
		"valid token also means the session was taken for authentication (MUST NOT use sessions for authentication).",
	Rules: merge(
		sameRule(Rule{Level: reports.Must, Spec: bestPractices, Also: []string{authLegacy}, Clause: authSessionClause}, legacyVersions...),
		sameRule(Rule{Level: reports.Must, Spec: bestPractices, Also: []string{authModern}, Clause: authAllClause}, v20260728),
	),
	Transports: []string{viaHTTP},
	Clauses:    []string{"sec#3", "sec#4"},
})

// authProbe is one request sent without the run's credentials.
type authProbe struct {
	what string
	verb string // http.MethodPost unless GET or DELETE
	body []byte // POST body
	// header is added to the credential header of the try.
	header http.Header
	// also names the statuses besides 401 that serve nothing.
	also []int
}

func authEveryRequest(h *H) {
	if !h.Target().RequiresAuth {
		h.Skip("the target manifest does not declare requiresAuth: true (authorization is optional in MCP: whether this server requires it is unknown)")
	}
	c := h.ConnectHTTP() // with the run's credentials: they work
	s := c.W.Session()
	probes := authProbes(s, c.W.SessionID(), c)
	inSession := s.Era != clients.EraModern && c.W.SessionID() != ""
	sent := 0
	for _, cred := range []struct {
		what   string
		header http.Header
	}{
		{"no Authorization header", nil},
		{"an invalid bearer token", http.Header{"Authorization": {"Bearer " + unique("mcp-conform-invalid-token")}}},
	} {
		for _, p := range probes {
			hd := http.Header{auth.Anonymous: {"1"}} // the proxy adds none of the run's credentials
			for k, v := range cred.header {
				hd[k] = v
			}
			for k, v := range p.header {
				hd[k] = v
			}
			var status int
			var raw []byte
			if p.verb == http.MethodPost {
				resp, b := rawBody(h, c, p.body, hd)
				status, raw = resp.StatusCode, b
			} else {
				if p.verb == http.MethodGet {
					hd.Set("Accept", "text/event-stream")
				}
				status = rawRequest(h, c, p.verb, hd)
			}
			sent++
			if status == http.StatusUnauthorized || containsInt(p.also, status) {
				h.Notef("%s with %s got %d", p.what, cred.what, status)
				continue
			}
			what := ""
			switch {
			case status/100 == 2 && inSession:
				what = " (it was served: the transcript holds the answer; it carried the Mcp-Session-Id of the session the run's " +
					"credentials opened, so the session stood in for the credential: MUST NOT use sessions for authentication)"
			case status/100 == 2:
				what = " (it was served: the transcript holds the answer)"
			case len(raw) > 0 && len(raw) <= 300:
				what = ": " + string(raw)
			}
			h.Failf("%s with %s (and none of the run's credentials) got HTTP %d, want 401%s", p.what, cred.what, status, what)
		}
	}
	h.Notef("%d requests without a valid token, each refused", sent)
}

// authProbes are the requests of every method and verb the era has, in
// the session sid (2025).
func authProbes(s clients.Session, sid string, c *HConn) []authProbe {
	var caps map[string]json.RawMessage
	_ = json.Unmarshal(s.Capabilities, &caps)
	_, tools := caps["tools"]
	modern := s.Era == clients.EraModern
	post := func(method string, params map[string]any, notification bool) authProbe {
		msg := request(unique("auth"), method, modernParams(s, params))
		if notification {
			delete(msg, "id")
		}
		body, _ := json.Marshal(msg)
		hd := sessionHeaders(c, sid)
		if modern {
			hd = http.Header{"Mcp-Protocol-Version": {s.Version}, "Mcp-Method": {method}}
			if name, ok := params["name"].(string); ok {
				hd.Set("Mcp-Name", name)
			}
		}
		what := "a " + method + " request"
		if notification {
			what = "a " + method + " notification"
		}
		return authProbe{what: what, verb: http.MethodPost, body: body, header: hd}
	}
	var ps []authProbe
	ps = append(ps, post(barrierMethod(s), nil, false))
	if tools {
		ps = append(ps, post("tools/list", nil, false),
			post("tools/call", map[string]any{"name": "mcp-conform-no-such-tool-" + strings.ToLower(unique("t")), "arguments": map[string]any{}}, false))
	}
	if modern {
		for _, verb := range []string{http.MethodGet, http.MethodDelete} {
			ps = append(ps, authProbe{what: "a " + verb, verb: verb,
				header: http.Header{"Mcp-Protocol-Version": {s.Version}}, also: []int{http.StatusMethodNotAllowed}})
		}
		return ps
	}
	ps = append(ps, post("notifications/roots/list_changed", nil, true),
		authProbe{what: "a GET of the session's stream", verb: http.MethodGet, header: sessionHeaders(c, sid)},
		// Last: a DELETE that is served ends the session.
		authProbe{what: "a DELETE of the session", verb: http.MethodDelete, header: sessionHeaders(c, sid)})
	return ps
}

// containsInt reports whether xs holds x.
func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

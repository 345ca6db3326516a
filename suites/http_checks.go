package suites

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/reports"
)

const securityLegacy = "specification/VERSION/basic/transports.mdx"

var (
	checkSSEHeaders = register(&Check{
		ID:    "SSE-HEADERS",
		Title: "event streams carry X-Accel-Buffering: no (and Content-Type text/event-stream)",
		How: "Calls the slow role and reads the response head of its event stream. A buffering reverse proxy holds a " +
			"stream without X-Accel-Buffering: no, and the client sees nothing until the end. Cache-Control: no-cache is " +
			"reported when missing, never graded: no version asks for it. 2026-07-28 asks for X-Accel-Buffering (SHOULD); the " +
			"2025 versions name no header, so there the same header is mcp-conform's reading of good practice (SHOULD at most).",
		Rules: merge(
			sameRule(Rule{Level: reports.Should, Spec: httpLegacy, Source: reports.SourceReading, Also: []string{httpModern},
				Clause: "mcp-conform's reading for the 2025 versions, which name no header: a server that initiates an SSE stream sends X-Accel-Buffering: no so that intermediaries do not buffer it, as 2026-07-28 asks (\"When initiating an SSE stream, servers SHOULD include the X-Accel-Buffering: no header in the HTTP response.\")."},
				legacyVersions...),
			map[string]Rule{"2026-07-28": {Level: reports.Should, Spec: httpModern,
				Clause: "When initiating an SSE stream, servers SHOULD include the X-Accel-Buffering: no header in the HTTP response."}},
		),
		Transports: []string{"http"},
		Roles:      []string{"slow"},
	})
	checkSSEHeartbeat = register(&Check{
		ID:    "SSE-HEARTBEAT",
		Title: "a silent event stream carries comment keep-alives",
		How: "Calls the silent role (a call that sends nothing for longer than the server's keep-alive interval) and " +
			"counts SSE comment blocks on its stream before the response. No version has a SHOULD for it: 2026-07-28 says servers " +
			"\"are encouraged\" to send keep-alives on long-lived streams, so the check is mcp-conform's reading of good practice and WARNs at most.",
		Rules: merge(
			sameRule(Rule{Level: reports.Should, Spec: httpLegacy, Source: reports.SourceReading,
				Clause: "mcp-conform's reading (2025, which says nothing of keep-alives): long silent streams carry SSE comments so intermediaries and idle timeouts do not close them."},
				legacyVersions...),
			map[string]Rule{"2026-07-28": {Level: reports.Should, Spec: httpModern, Source: reports.SourceReading,
				Clause: "For long-lived streams [...] servers are encouraged to periodically emit an SSE comment line (a line beginning with a colon, e.g. :\\r\\n) as a keep-alive. (\"Encouraged\" is no RFC 2119 keyword: mcp-conform's reading grades it as a SHOULD at most.)"}},
		),
		Transports: []string{"http"},
		Roles:      []string{"silent"},
	})
	checkSessionRequired = register(&Check{
		ID:         "SESSION-REQUIRED",
		Title:      "a request without the session id is rejected with 400",
		How:        "In a 2025 session, POSTs ping without Mcp-Session-Id and expects 400 Bad Request.",
		Rules:      sameRule(Rule{Level: reports.Should, Spec: httpLegacy, Clause: "Servers that require a session ID SHOULD respond to requests without an MCP-Session-Id header (other than initialization) with HTTP 400 Bad Request."}, legacyVersions...),
		Transports: []string{"http"},
	})
	checkSessionUnknown = register(&Check{
		ID:    "SESSION-UNKNOWN-404",
		Title: "a session id the server never issued gets 404, after which a new initialize works",
		How: "POSTs ping with a session id the server never issued and expects 404 Not Found, then initializes a new session and " +
			"pings in it. The specification's 404 MUST is for a session the server terminated; an id it never issued is not in " +
			"that sentence, so a status other than 404 WARNs (mcp-conform's reading: to the server it is as good as terminated, " +
			"and 404 is what sends a client to re-initialize). Serving the request (2xx) WARNs too; a failed re-initialization FAILs.",
		Rules: sameRule(Rule{Level: reports.Should, Spec: httpLegacy, Source: reports.SourceReading,
			Clause: "mcp-conform's reading of \"The server MAY terminate the session at any time, after which it MUST respond to requests containing that session ID with HTTP 404 Not Found. When a client receives HTTP 404 in response to a request containing an MCP-Session-Id, it MUST start a new session\": an id the server never issued gets the same 404."},
			legacyVersions...),
		Transports: []string{"http"},
	})
	checkSessionExpired = register(&Check{
		ID:    "SESSION-EXPIRED-404",
		Title: "a session idle past its declared TTL gets 404, after which a new initialize works",
		How: "Needs the manifest's sessionTTL. Initializes, stays idle for 1.5 × the TTL (expiry is a time contract: the one " +
			"wait in the catalog that is a clock), then pings with the session id and expects 404; then initializes again.",
		Rules: sameRule(Rule{Level: reports.Must, Spec: httpLegacy,
			Clause: "The server MAY terminate the session at any time, after which it MUST respond to requests containing that session ID with HTTP 404 Not Found."},
			legacyVersions...),
		Transports: []string{"http"},
	})
	checkSessionDelete = register(&Check{
		ID:         "SESSION-DELETE",
		Title:      "DELETE ends the session: its id then gets 404",
		How:        "Sends DELETE with the session id (405 means the server does not allow it: SKIP), then pings with the same id and expects 404.",
		Rules:      sameRule(Rule{Level: reports.Must, Spec: httpLegacy, Clause: "Clients [...] SHOULD send an HTTP DELETE to the MCP endpoint with the MCP-Session-Id header, to explicitly terminate the session. [...] after which it MUST respond to requests containing that session ID with HTTP 404 Not Found."}, legacyVersions...),
		Transports: []string{"http"},
	})
	checkSecurityOrigin = register(&Check{
		ID:    "SECURITY-ORIGIN",
		Title: "a foreign Origin is rejected on every method (POST, GET, DELETE): 403 where the version names it",
		How: "Sends the barrier request (POST), a GET of the standalone stream and a DELETE of the session, each with " +
			"Origin: http://evil.example. 2025-11-25 and 2026-07-28: each must get 403 Forbidden. 2025-06-18 only asks the " +
			"server to validate Origin on all incoming connections and names no status: any 4xx rejection passes there. A " +
			"DELETE that was not rejected must not have ended the session.",
		Rules: merge(
			sameRule(Rule{Level: reports.Must, Spec: securityLegacy, Clause: "Servers MUST validate the Origin header on all incoming connections to prevent DNS rebinding attacks. If the Origin header is present and invalid, servers MUST respond with HTTP 403 Forbidden."}, "2025-11-25"),
			sameRule(Rule{Level: reports.Must, Spec: securityLegacy, Clause: "Servers MUST validate the Origin header on all incoming connections to prevent DNS rebinding attacks"}, "2025-06-18"),
			map[string]Rule{"2026-07-28": {Level: reports.Must, Spec: httpModern, Clause: "Servers MUST validate the Origin header on all incoming connections to prevent DNS rebinding attacks. If the Origin header is present and invalid, servers MUST respond with HTTP 403 Forbidden."}},
		),
		Transports: []string{"http"},
	})
	checkSecurityVersion = register(&Check{
		ID:    "SECURITY-PROTOCOL-VERSION",
		Title: "an unsupported MCP-Protocol-Version gets 400",
		How:   "POSTs ping (server/discover with the matching _meta in 2026-07-28) with MCP-Protocol-Version: 1999-01-01 and expects 400 Bad Request.",
		Rules: merge(
			sameRule(Rule{Level: reports.Must, Spec: httpLegacy, Clause: "If the server receives a request with an invalid or unsupported MCP-Protocol-Version, it MUST respond with 400 Bad Request."}, legacyVersions...),
			map[string]Rule{"2026-07-28": {Level: reports.Must, Spec: httpModern, Also: []string{"specification/2026-07-28/basic/versioning.mdx"},
				Clause: "If the server does not implement the requested protocol version (whether the version is unknown to the server, or is a known version the server has chosen not to support), it MUST respond with 400 Bad Request and an UnsupportedProtocolVersionError listing its supported versions."}},
		),
		Transports: []string{"http"},
	})
)

func registerHTTPChecks() {
	ginkgo.Describe("SSE", ginkgo.Label("area:sse"), func() {
		define(checkSSEHeaders, sseHeaders)
		define(checkSSEHeartbeat, sseHeartbeat)
	})
	ginkgo.Describe("SESSION", ginkgo.Label("area:session"), func() {
		define(checkSessionRequired, sessionRequired)
		define(checkSessionUnknown, sessionUnknown)
		define(checkSessionExpired, sessionExpired)
		define(checkSessionDelete, sessionDelete)
	})
	ginkgo.Describe("SECURITY", ginkgo.Label("area:security"), func() {
		define(checkSecurityOrigin, securityOrigin)
		define(checkSecurityVersion, securityVersion)
	})
}

func sseHeaders(h *H) {
	c := h.ConnectHTTP()
	call := c.StartRole("slow", jsonrpc.StringID("sse-headers-1"), jsonrpc.StringID("sse-headers-token"), nil)
	c.Await(call, "the slow call")
	if !call.IsSSE() {
		h.Skip("the server answered tools/call with " + call.Header().Get("Content-Type") + ", not an event stream")
	}
	hd := call.Header()
	if !strings.Contains(strings.ToLower(strings.Join(hd.Values("Cache-Control"), ",")), "no-cache") {
		// No version asks for it: reported, not graded.
		h.Notef("no Cache-Control: no-cache on the event stream (got %s; no version of the specification asks for it)", q(hd.Values("Cache-Control")))
	}
	if !strings.EqualFold(strings.TrimSpace(hd.Get("X-Accel-Buffering")), "no") {
		h.Failf("the event stream lacks X-Accel-Buffering: no (got %s)", q(hd.Values("X-Accel-Buffering")))
	}
}

func q(v []string) string {
	if len(v) == 0 {
		return "none"
	}
	return "\"" + strings.Join(v, ", ") + "\""
}

func sseHeartbeat(h *H) {
	c := h.ConnectHTTP()
	call := c.StartRole("silent", jsonrpc.StringID("sse-heartbeat-1"), nil, nil)
	c.Await(call, "the silent call")
	if !call.IsSSE() {
		h.Skip("the server answered the silent call with " + call.Header().Get("Content-Type") + ", not an event stream")
	}
	comments := 0
	var first, last clients.StreamEvent
	for i, e := range call.StreamEvents() {
		if i == 0 {
			first = e
		}
		last = e
		if e.IsComment {
			comments++
		}
	}
	silent := last.At.Sub(call.HeaderAt())
	if comments == 0 {
		h.Failf("no SSE comment keep-alive during the %s the stream stayed silent (%d events, first %q)", silent.Round(1e6), len(call.StreamEvents()), strings.TrimSpace(string(first.Raw)))
	}
	h.Notef("%d keep-alive comment(s) in %s", comments, silent.Round(1e6))
}

// legacyOnly skips a check outside a 2025 session with a session id.
func legacySession(h *H, c *HConn) string {
	sid := c.W.SessionID()
	if sid == "" {
		h.Skip("the server assigned no Mcp-Session-Id at initialization: it does not use sessions")
	}
	return sid
}

// rawPing POSTs the era's barrier request (ping, or server/discover in
// 2026-07-28) with exactly these headers added to the session's.
func rawPing(h *H, c *HConn, header http.Header, meta map[string]any) (*http.Response, []byte) {
	var params map[string]any
	if meta != nil {
		params = map[string]any{"_meta": meta}
	}
	body, _ := json.Marshal(request("raw-ping", barrierMethod(c.W.Session()), params))
	return rawBody(h, c, body, header)
}

func sessionHeaders(c *HConn, sid string) http.Header {
	hd := http.Header{"Mcp-Protocol-Version": {c.W.Session().Version}}
	if sid != "" {
		hd["Mcp-Session-Id"] = []string{sid}
	}
	return hd
}

func sessionRequired(h *H) {
	c := h.ConnectHTTP()
	legacySession(h, c)
	resp, body := rawPing(h, c, sessionHeaders(c, ""), nil)
	if resp.StatusCode != http.StatusBadRequest {
		h.Failf("a request without Mcp-Session-Id got HTTP %d, want 400: %s", resp.StatusCode, clip(body))
	}
}

func sessionUnknown(h *H) {
	c := h.ConnectHTTP()
	legacySession(h, c)
	resp, body := rawPing(h, c, sessionHeaders(c, unique("mcp-conform-unknown-session")), nil)
	status := resp.StatusCode
	ctx, cancel := context.WithTimeout(h.ctx, h.cfg.StartTimeout)
	defer cancel()
	if _, err := c.W.Negotiate(ctx, h.Version()); err != nil {
		h.failServer("a new initialize after the request with an unknown session id failed: %v", err)
	}
	c.Ping("in the new session")
	if status != http.StatusNotFound {
		h.Failf("a request with a session id the server never issued got HTTP %d, want 404 (as for a terminated session): %s", status, clip(body))
	}
}

func sessionDelete(h *H) {
	c := h.ConnectHTTP()
	sid := legacySession(h, c)
	ctx, cancel := h.op()
	status, err := c.W.Delete(ctx)
	cancel()
	if err != nil {
		h.Failf("DELETE failed: %v", err)
	}
	if status == http.StatusMethodNotAllowed {
		h.Skip("the server answers DELETE with 405: it does not let clients end sessions (allowed)")
	}
	if status < 200 || status > 299 {
		h.Failf("DELETE of the session got HTTP %d", status)
	}
	resp, body := rawPing(h, c, sessionHeaders(c, sid), nil)
	if resp.StatusCode != http.StatusNotFound {
		h.Failf("after DELETE the session id still got HTTP %d, want 404: %s", resp.StatusCode, clip(body))
	}
}

func securityOrigin(h *H) {
	c := h.ConnectHTTP()
	const evil = "http://evil.example"
	// 2025-06-18 asks only that the server validate Origin: any 4xx
	// rejection keeps that MUST; later versions name 403.
	rejected := func(status int) bool { return status == http.StatusForbidden }
	want := "403"
	if h.Version() == "2025-06-18" {
		rejected = func(status int) bool { return status >= 400 && status < 500 }
		want = "a 4xx rejection"
	}
	sid := c.W.SessionID()
	hd := sessionHeaders(c, sid)
	hd["Origin"] = []string{evil}
	var meta map[string]any
	if c.W.Session().Era == clients.EraModern {
		hd["Mcp-Method"] = []string{"server/discover"}
		meta = modernMeta(c.W.Session().Version)
	}
	resp, body := rawPing(h, c, hd, meta)
	if !rejected(resp.StatusCode) {
		h.Failf("a POST with Origin %s got HTTP %d, want %s: %s", evil, resp.StatusCode, want, clip(body))
	}
	// "on all incoming connections": GET (the standalone stream) and
	// DELETE (ending the session) too.
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		mh := sessionHeaders(c, sid)
		mh["Origin"] = []string{evil}
		if method == http.MethodGet {
			mh["Accept"] = []string{"text/event-stream"}
		}
		status := rawRequest(h, c, method, mh)
		if !rejected(status) {
			h.Failf("a %s with Origin %s got HTTP %d, want %s", method, evil, status, want)
		}
	}
	if sid != "" {
		// The refused DELETE must not have ended the session.
		c.Ping("in the session after the refused DELETE")
	}
	h.Notef("POST, GET and DELETE with Origin %s were refused (%s)", evil, want)
}

// rawRequest sends a request of method with exactly these headers (and no
// body) through the connection's proxy, and returns the status; the body of
// a stream it opens is closed at once.
func rawRequest(h *H, c *HConn, method string, header http.Header) int {
	ctx, cancel := h.op()
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.Proxy.URL(), nil)
	if err != nil {
		h.Errorf("build %s request: %v", method, err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := rawClient.Do(req)
	if err != nil {
		h.failServer("%s failed: %v%s", method, err, c.exitHint())
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// rawClient sends the raw requests of the HTTP checks: no redirects
// followed, no idle connection kept between checks.
var rawClient = &http.Client{
	Transport:     &http.Transport{DisableKeepAlives: true, DisableCompression: true},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

func securityVersion(h *H) {
	c := h.ConnectHTTP()
	hd := sessionHeaders(c, c.W.SessionID())
	hd["Mcp-Protocol-Version"] = []string{"1999-01-01"}
	var meta map[string]any
	if c.W.Session().Era == clients.EraModern {
		hd["Mcp-Method"] = []string{"server/discover"}
		meta = modernMeta("1999-01-01")
	}
	resp, body := rawPing(h, c, hd, meta)
	if resp.StatusCode != http.StatusBadRequest {
		h.Failf("a request with MCP-Protocol-Version 1999-01-01 got HTTP %d, want 400: %s", resp.StatusCode, clip(body))
	}
}

func modernMeta(version string) map[string]any {
	return map[string]any{clients.MetaProtocolVersion: version, clients.MetaClientCapabilities: map[string]any{}}
}

func clip(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

func sessionExpired(h *H) {
	if h.target.SessionTTL == "" {
		h.Skip("the target manifest declares no sessionTTL: when its sessions expire is unknown")
	}
	ttl, _ := time.ParseDuration(h.target.SessionTTL)
	c := h.ConnectHTTP()
	sid := legacySession(h, c)
	idle := ttl * 3 / 2
	t := time.NewTimer(idle)
	select {
	case <-t.C:
	case <-h.ctx.Done():
		t.Stop()
		h.Errorf("interrupted while waiting for the session to expire")
	}
	resp, body := rawPing(h, c, sessionHeaders(c, sid), nil)
	if resp.StatusCode != http.StatusNotFound {
		h.Failf("after %s idle (sessionTTL %s) the session id got HTTP %d, want 404: %s", idle, ttl, resp.StatusCode, clip(body))
	}
	ctx, cancel := context.WithTimeout(h.ctx, h.cfg.StartTimeout)
	defer cancel()
	if _, err := c.W.Negotiate(ctx, h.Version()); err != nil {
		h.Failf("a new initialize after the expiry failed: %v", err)
	}
	c.Ping("in the new session")
}

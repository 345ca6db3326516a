package suites

import (
	"context"
	"net/http"
	"time"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/reports"
)

var checkSessionRequired = register(&Check{
	ID:         "SESSION-REQUIRED",
	Title:      "a request without the session id is rejected with 400",
	How:        "In a 2025 session, POSTs ping without Mcp-Session-Id and expects 400 Bad Request.",
	Rules:      sameRule(Rule{Level: reports.Should, Spec: httpLegacy, Clause: "Servers that require a session ID SHOULD respond to requests without an MCP-Session-Id header (other than initialization) with HTTP 400 Bad Request."}, legacyVersions...),
	Transports: []string{viaHTTP},
})

var checkSessionUnknown = register(&Check{
	ID:    "SESSION-UNKNOWN-404",
	Title: "a session id the server never issued gets 404, after which a new initialize works",
	How: "POSTs ping with a session id the server never issued and expects 404 Not Found, then initializes a new session and " +
		"pings in it. The specification's 404 MUST is for a session the server terminated; an id it never issued is not in " +
		"that sentence, so a status other than 404 WARNs (mcp-conform's reading: to the server it is as good as terminated, " +
		"and 404 is what sends a client to re-initialize). Serving the request (2xx) WARNs too; a failed re-initialization FAILs.",
	Rules: sameRule(Rule{Level: reports.Should, Spec: httpLegacy, Source: reports.SourceReading,
		Clause: "mcp-conform's reading of \"The server MAY terminate the session at any time, after which it MUST respond to requests containing that session ID with HTTP 404 Not Found. When a client receives HTTP 404 in response to a request containing an MCP-Session-Id, it MUST start a new session\": an id the server never issued gets the same 404."},
		legacyVersions...),
	Transports: []string{viaHTTP},
})

var checkSessionExpired = register(&Check{
	ID:    "SESSION-EXPIRED-404",
	Title: "a session idle past its declared TTL gets 404, after which a new initialize works",
	How: "Needs the manifest's sessionTTL. Initializes, stays idle for 1.5 × the TTL (expiry is a time contract: the one " +
		"wait in the catalog that is a clock), then pings with the session id and expects 404; then initializes again.",
	Rules: sameRule(Rule{Level: reports.Must, Spec: httpLegacy,
		Clause: "The server MAY terminate the session at any time, after which it MUST respond to requests containing that session ID with HTTP 404 Not Found."},
		legacyVersions...),
	Transports: []string{viaHTTP},
})

var checkSessionDelete = register(&Check{
	ID:         "SESSION-DELETE",
	Title:      "DELETE ends the session: its id then gets 404",
	How:        "Sends DELETE with the session id (405 means the server does not allow it: SKIP), then pings with the same id and expects 404.",
	Rules:      sameRule(Rule{Level: reports.Must, Spec: httpLegacy, Clause: "Clients [...] SHOULD send an HTTP DELETE to the MCP endpoint with the MCP-Session-Id header, to explicitly terminate the session. [...] after which it MUST respond to requests containing that session ID with HTTP 404 Not Found."}, legacyVersions...),
	Transports: []string{viaHTTP},
})

func registerSession() {
	ginkgo.Describe("SESSION", ginkgo.Label("area:session"), func() {
		define(checkSessionRequired, sessionRequired)
		define(checkSessionUnknown, sessionUnknown)
		define(checkSessionExpired, sessionExpired)
		define(checkSessionDelete, sessionDelete)
	})
}

// legacyOnly skips a check outside a 2025 session with a session id.
func legacySession(h *H, c *HConn) string {
	sid := c.W.SessionID()
	if sid == "" {
		h.Skip("the server assigned no Mcp-Session-Id at initialization: it does not use sessions")
	}
	return sid
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
	ctx, cancel := context.WithTimeout(h.Ctx(), h.Cfg().StartTimeout)
	defer cancel()
	if _, err := c.W.Negotiate(ctx, h.Version()); err != nil {
		h.FailServer("a new initialize after the request with an unknown session id failed: %v", err)
	}
	c.Ping("in the new session")
	if status != http.StatusNotFound {
		h.Failf("a request with a session id the server never issued got HTTP %d, want 404 (as for a terminated session): %s", status, clip(body))
	}
}

func sessionDelete(h *H) {
	c := h.ConnectHTTP()
	sid := legacySession(h, c)
	ctx, cancel := h.Op()
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

func sessionExpired(h *H) {
	if h.Target().SessionTTL == "" {
		h.Skip("the target manifest declares no sessionTTL: when its sessions expire is unknown")
	}
	ttl, _ := time.ParseDuration(h.Target().SessionTTL)
	c := h.ConnectHTTP()
	sid := legacySession(h, c)
	idle := ttl * 3 / 2
	t := time.NewTimer(idle)
	select {
	case <-t.C:
	case <-h.Ctx().Done():
		t.Stop()
		h.Errorf("interrupted while waiting for the session to expire")
	}
	resp, body := rawPing(h, c, sessionHeaders(c, sid), nil)
	if resp.StatusCode != http.StatusNotFound {
		h.Failf("after %s idle (sessionTTL %s) the session id got HTTP %d, want 404: %s", idle, ttl, resp.StatusCode, clip(body))
	}
	ctx, cancel := context.WithTimeout(h.Ctx(), h.Cfg().StartTimeout)
	defer cancel()
	if _, err := c.W.Negotiate(ctx, h.Version()); err != nil {
		h.Failf("a new initialize after the expiry failed: %v", err)
	}
	c.Ping("in the new session")
}

package suites

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/procnet"
	"github.com/mcp-conform/mcp-conform/reports"
)

var checkSecurityOrigin = register(&Check{
	ID:    "SECURITY-ORIGIN",
	Title: "a foreign Origin is rejected on every method (POST, GET, DELETE): 403 where the version names it",
	How: "Sends the barrier request (POST), a GET of the standalone stream and a DELETE of the session, each with " +
		"Origin: http://evil.example. 2025-11-25 and 2026-07-28: each must get 403 Forbidden. 2025-06-18 only asks the " +
		"server to validate Origin on all incoming connections and names no status: any 4xx rejection passes there. A " +
		"DELETE that was not rejected must not have ended the session.",
	Rules: merge(
		sameRule(Rule{Level: reports.Must, Spec: securityLegacy, Clause: "Servers MUST validate the Origin header on all incoming connections to prevent DNS rebinding attacks. If the Origin header is present and invalid, servers MUST respond with HTTP 403 Forbidden."}, v20251125),
		sameRule(Rule{Level: reports.Must, Spec: securityLegacy, Clause: "Servers MUST validate the Origin header on all incoming connections to prevent DNS rebinding attacks"}, v20250618),
		map[string]Rule{v20260728: {Level: reports.Must, Spec: httpModern, Clause: "Servers MUST validate the Origin header on all incoming connections to prevent DNS rebinding attacks. If the Origin header is present and invalid, servers MUST respond with HTTP 403 Forbidden."}},
	),
	Transports: []string{viaHTTP},
})

var checkSecurityVersion = register(&Check{
	ID:    "SECURITY-PROTOCOL-VERSION",
	Title: "an unsupported MCP-Protocol-Version gets 400",
	How:   "POSTs ping (server/discover with the matching _meta in 2026-07-28) with MCP-Protocol-Version: 1999-01-01 and expects 400 Bad Request.",
	Rules: merge(
		sameRule(Rule{Level: reports.Must, Spec: httpLegacy, Clause: "If the server receives a request with an invalid or unsupported MCP-Protocol-Version, it MUST respond with 400 Bad Request."}, legacyVersions...),
		map[string]Rule{v20260728: {Level: reports.Must, Spec: httpModern, Also: []string{"specification/2026-07-28/basic/versioning.mdx"},
			Clause: "If the server does not implement the requested protocol version (whether the version is unknown to the server, or is a known version the server has chosen not to support), it MUST respond with 400 Bad Request and an UnsupportedProtocolVersionError listing its supported versions."}},
	),
	Transports: []string{viaHTTP},
})

// Session id sampling of SECURITY-SESSION-ENTROPY.
const (
	sessionSamples = 8
	minSessionBits = 96
	// predictableBits: ids that vary in fewer estimated bits than this
	// between samples are a counter or a clock, i.e. deterministic.
	predictableBits = 32
)

var checkSessionEntropy = register(&Check{
	ID:    "SECURITY-SESSION-ENTROPY",
	Title: "session ids are visible ASCII, non-deterministic, never repeat, and are not guessable",
	How: fmt.Sprintf("Initializes %d sessions and looks at their Mcp-Session-Id values: each must be visible ASCII "+
		"(0x21-0x7E, a MUST: FAIL); the characters that vary between them are estimated in bits (positions that vary × bits "+
		"of the smallest usual alphabet — digits, hex, alphanumeric, base64 — holding them). Fewer than %d bits is a counter "+
		"or a clock: the ids are deterministic, which the security best practices' MUST forbids (FAIL). Fewer than %d bits, "+
		"or two equal ids, WARNs (secure random number generators, globally unique: SHOULD).",
		sessionSamples+1, predictableBits, minSessionBits),
	Rules: sameRule(Rule{Level: reports.Must, Spec: bestPractices, Also: []string{httpLegacy},
		Clause: "MCP servers MUST use secure, non-deterministic session IDs. Generated session IDs (e.g., UUIDs) SHOULD use secure random number generators. [transports.mdx] The session ID SHOULD be globally unique and cryptographically secure (e.g., a securely generated UUID, a JWT, or a cryptographic hash). The session ID MUST only contain visible ASCII characters (ranging from 0x21 to 0x7E)."},
		legacyVersions...),
	Transports: []string{viaHTTP},
})

var checkSessionReuse = register(&Check{
	ID:    "SECURITY-SESSION-REUSE",
	Title: "the id of a deleted or expired session is never handed out again",
	How: "Initializes and DELETEs sessions, and (when the manifest declares a sessionTTL of at most 5s) lets one expire, " +
		"then initializes more sessions: none may get an id that was used before.",
	Rules: sameRule(Rule{Level: reports.Should, Spec: httpLegacy,
		Clause: "The session ID SHOULD be globally unique and cryptographically secure: an id reused after its session ended sends a client that still holds it into someone else's session."},
		legacyVersions...),
	Transports: []string{viaHTTP},
})

var checkSessionBinding = register(&Check{
	ID:    "SECURITY-SESSION-BINDING",
	Title: "a session created under one credential is not served to another",
	How: "Needs the manifest's auth: header sets of two principals. Initializes a session with the first principal's " +
		"headers, pings in it as that principal (must work), then pings with the same session id as the second " +
		"principal: the server must refuse (a 4xx status), not serve it.",
	Rules: sameRule(Rule{Level: reports.Should, Spec: bestPractices,
		Clause: "MCP Servers MUST NOT use sessions for authentication. [...] MCP servers SHOULD bind session IDs to user-specific information."},
		legacyVersions...),
	Transports: []string{viaHTTP},
})

var checkLoopbackBind = register(&Check{
	ID:    "SECURITY-LOOPBACK-BIND",
	Title: "a server the harness starts listens on loopback only",
	How: "When the harness starts the HTTP server itself (the manifest has a command), reads /proc/net/tcp and " +
		"/proc/net/tcp6 for the listening sockets on the endpoint's port held by the server's process group, reports " +
		"their addresses, and flags any that is not loopback (0.0.0.0, ::, or an interface address).",
	Rules: merge(
		sameRule(Rule{Level: reports.Should, Spec: securityLegacy,
			Clause: "When running locally, servers SHOULD bind only to localhost (127.0.0.1) rather than all network interfaces (0.0.0.0)."},
			legacyVersions...),
		map[string]Rule{v20260728: {Level: reports.Should, Spec: httpModern,
			Clause: "When running locally, servers SHOULD bind only to localhost (127.0.0.1) rather than all network interfaces (0.0.0.0)."}},
	),
	Transports: []string{viaHTTP},
})

func registerSecurityHTTP() {
	ginkgo.Describe("SECURITY", ginkgo.Label("area:security"), func() {
		define(checkSecurityOrigin, securityOrigin)
		define(checkSecurityVersion, securityVersion)
	})
}

func registerSecurity() {
	ginkgo.Describe("SECURITY sessions and binding", ginkgo.Label("area:security"), func() {
		define(checkSessionEntropy, sessionEntropy)
		define(checkSessionReuse, sessionReuse)
		define(checkSessionBinding, sessionBinding)
		define(checkLoopbackBind, loopbackBind)
	})
}

func securityOrigin(h *H) {
	c := h.ConnectHTTP()
	const evil = "http://evil.example"
	// 2025-06-18 asks only that the server validate Origin: any 4xx
	// rejection keeps that MUST; later versions name 403.
	rejected := func(status int) bool { return status == http.StatusForbidden }
	want := "403"
	if h.Version() == v20250618 {
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

// newSession initializes a new session with a raw POST carrying extra
// headers (a principal's credential) and returns its Mcp-Session-Id.
func newSession(h *H, c *HConn, extra map[string]string) string {
	v := c.W.Session().Version
	body, _ := json.Marshal(request(unique("init"), "initialize", map[string]any{
		"protocolVersion": v,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "mcp-conform", "version": clients.DefaultClientVersion},
	}))
	hd := http.Header{"Mcp-Protocol-Version": {v}}
	for k, val := range extra {
		hd.Set(k, val)
	}
	resp, raw := rawBody(h, c, body, hd)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		h.Errorf("initialize a new session: HTTP %d, Mcp-Session-Id %q: %s", resp.StatusCode, sid, clip(raw))
	}
	// The lifecycle's next step, so that the session is ready for use.
	note, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	hd.Set("Mcp-Session-Id", sid)
	rawBody(h, c, note, hd)
	return sid
}

// endSession sends DELETE for sid and returns the status.
func endSession(h *H, c *HConn, sid string) int {
	w := clients.NewHTTPWire(c.Proxy.URL(), clients.HTTPOptions{ClientName: "mcp-conform"})
	defer w.Close()
	w.SetSession(c.W.Session())
	w.SetSessionID(sid)
	ctx, cancel := h.Op()
	defer cancel()
	status, err := w.Delete(ctx)
	if err != nil {
		h.FailServer("DELETE session %s: %v%s", sid, err, c.ExitHint())
	}
	return status
}

func sessionEntropy(h *H) {
	c := h.ConnectHTTP()
	ids := []string{legacySession(h, c)}
	for range sessionSamples {
		ids = append(ids, newSession(h, c, nil))
	}
	for _, id := range ids {
		if i := strings.IndexFunc(id, func(r rune) bool { return r < 0x21 || r > 0x7e }); i >= 0 {
			h.FailMust("session id %q holds %q at byte %d, outside visible ASCII 0x21-0x7E (a MUST of transports.mdx)", id, id[i:i+1], i)
		}
	}
	bits, alphabet := estimateBits(ids)
	sample := strings.Join(ids[:3], ", ")
	if bits < predictableBits {
		h.FailMust("session ids carry about %.0f bits (want ≥ %d): %d of %d characters vary between %d samples, alphabet %s; e.g. %s — "+
			"a counter or a clock, not the secure, non-deterministic ids the security best practices require (MUST)",
			bits, minSessionBits, varying(ids), len(ids[0]), len(ids), alphabet, sample)
	}
	seen := map[string]int{}
	for i, id := range ids {
		if j, dup := seen[id]; dup {
			h.Warnf("sessions %d and %d got the same id %q (session ids SHOULD be globally unique)", j+1, i+1, id)
		}
		seen[id] = i
	}
	if bits < minSessionBits {
		h.Warnf("session ids carry about %.0f bits (want ≥ %d): %d of %d characters vary between %d samples, alphabet %s; e.g. %s",
			bits, minSessionBits, varying(ids), len(ids[0]), len(ids), alphabet, sample)
	}
	h.Notef("%d session ids, about %.0f bits each (alphabet %s), e.g. %s", len(ids), bits, alphabet, sample)
}

// alphabets are the usual id alphabets, smallest first.
var alphabets = []struct {
	name  string
	chars string
}{
	{"digits", "0123456789"},
	{"hex", "0123456789abcdef"},
	{"HEX", "0123456789ABCDEF"},
	{"base32", "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"},
	{"base32 (lower case)", "abcdefghijklmnopqrstuvwxyz234567"},
	{"alphanumeric", "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"},
	{"base64", "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ+/-_="},
}

// varying counts the positions (up to the shortest id) at which the ids
// do not all agree.
func varying(ids []string) int {
	n := 0
	for i := range minLen(ids) {
		for _, id := range ids[1:] {
			if id[i] != ids[0][i] {
				n++
				break
			}
		}
	}
	return n
}

func minLen(ids []string) int {
	n := math.MaxInt
	for _, id := range ids {
		n = min(n, len(id))
	}
	if len(ids) == 0 {
		return 0
	}
	return n
}

// estimateBits estimates the entropy of ids drawn from one generator: the
// positions that vary between the samples times the bits of a character
// of the smallest usual alphabet holding every character seen there
// (visible ASCII, 94 characters, when none does). A counter or a clock
// varies in a few positions; 128 random bits in hex vary in all 32.
func estimateBits(ids []string) (float64, string) {
	var seen strings.Builder
	for i := range minLen(ids) {
		for _, id := range ids[1:] {
			if id[i] != ids[0][i] {
				for _, s := range ids {
					seen.WriteByte(s[i])
				}
				break
			}
		}
	}
	name, size := "visible ASCII", 94
	for _, a := range alphabets {
		ok := true
		for _, r := range seen.String() {
			if !strings.ContainsRune(a.chars, r) {
				ok = false
				break
			}
		}
		if ok {
			name, size = a.name, len(a.chars)
			break
		}
	}
	return float64(varying(ids)) * math.Log2(float64(size)), name
}

func sessionReuse(h *H) {
	const rounds = 4
	c := h.ConnectHTTP()
	legacySession(h, c)
	used := map[string]string{}
	fresh := func() string {
		sid := newSession(h, c, nil)
		if how, again := used[sid]; again {
			h.Failf("a new session got the id %q of a session %s before", sid, how)
		}
		used[sid] = "in use"
		return sid
	}
	for range rounds {
		sid := fresh()
		switch st := endSession(h, c, sid); {
		case st == http.StatusMethodNotAllowed:
			h.Skip("the server answers DELETE with 405: clients cannot end sessions")
		case st < 200 || st > 299:
			h.Errorf("DELETE of a new session got HTTP %d", st)
		}
		used[sid] = "deleted"
	}
	if ttl, err := time.ParseDuration(h.Target().SessionTTL); err == nil && ttl > 0 && ttl <= 5*time.Second {
		sid := fresh()
		used[sid] = "expired"
		// Expiry is a time contract (as SESSION-EXPIRED-404): the one
		// clock this check waits on.
		select {
		case <-time.After(ttl * 3 / 2):
		case <-h.Ctx().Done():
			h.Errorf("interrupted while waiting for a session to expire")
		}
	}
	for range rounds + 1 {
		fresh()
	}
	h.Notef("%d session ids, none reused", len(used))
}

func sessionBinding(h *H) {
	if len(h.Target().Auth) < 2 {
		h.Skip("the target manifest declares no credentials for two principals (auth): session binding cannot be tried")
	}
	a, b := h.Target().Auth[0], h.Target().Auth[1]
	c := h.ConnectHTTP()
	legacySession(h, c)
	sid := newSession(h, c, a)
	ping := func(principal map[string]string) (*http.Response, []byte) {
		hd := sessionHeaders(c, sid)
		for k, v := range principal {
			hd.Set(k, v)
		}
		return rawPing(h, c, hd, nil)
	}
	if resp, body := ping(a); resp.StatusCode != http.StatusOK {
		h.Errorf("the session does not work for the principal that created it: HTTP %d %s", resp.StatusCode, clip(body))
	}
	resp, body := ping(b)
	if resp.StatusCode < 400 || resp.StatusCode > 499 {
		h.Failf("session %s, created by the first principal, served a request with the second principal's credential: HTTP %d %s", sid, resp.StatusCode, clip(body))
	}
	h.Notef("another principal's request in the session got HTTP %d", resp.StatusCode)
	c.Ping("after the refused request")
}

func loopbackBind(h *H) {
	c := h.ConnectHTTP()
	c.Ping("on its endpoint")
	if c.Proc == nil {
		h.Skip("the harness did not start the server (the manifest has no command): where it listens is not for the harness to see")
	}
	u, err := url.Parse(c.Upstream)
	if err != nil {
		h.Errorf("target url %q: %v", c.Upstream, err)
	}
	if ip, err := netip.ParseAddr(u.Hostname()); (err != nil && u.Hostname() != "localhost") || (err == nil && !ip.IsLoopback()) {
		h.Skip(fmt.Sprintf("the endpoint %s is not on loopback: the server does not run locally", c.Upstream))
	}
	port, err := strconv.ParseUint(u.Port(), 10, 16)
	if err != nil {
		h.Errorf("target url %q has no port", c.Upstream)
	}
	all, err := procnet.Listening(uint16(port))
	if err != nil {
		h.Skip(fmt.Sprintf("cannot read the socket tables: %v", err))
	}
	own, err := procnet.GroupSockets(c.Proc.Pid())
	if err != nil {
		h.Skip(fmt.Sprintf("cannot read the server's file descriptors: %v", err))
	}
	var mine []procnet.Listener
	for _, l := range all {
		if own[l.Inode] {
			mine = append(mine, l)
		}
	}
	if len(mine) == 0 {
		if len(all) == 0 {
			h.Errorf("no listening socket on port %d, though the server answers there", port)
		}
		// Descriptors of another user's process are not readable: judge
		// the sockets on the port.
		h.Notef("the server's sockets could not be told apart; judging every listener on port %d", port)
		mine = all
	}
	var addrs, open []string
	for _, l := range mine {
		a := l.Addr.String()
		addrs = append(addrs, a)
		if !l.Loopback() {
			if l.Addr.Addr().IsUnspecified() {
				a += " (every interface)"
			}
			open = append(open, a)
		}
	}
	if len(open) > 0 {
		h.Failf("the server listens on %s, not only on loopback (all its listeners on port %d: %s)", strings.Join(open, ", "), port, strings.Join(addrs, ", "))
	}
	h.Notef("listening on %s", strings.Join(addrs, ", "))
}

package suites

// LIFECYCLE-VERSION-SAME: an initialize asking for a version the server
// supports is answered with that same version (lifecycle.mdx, "Version
// Negotiation"). Which versions a server supports is only what it says
// itself: the run's own version (the harness negotiated it: the server
// answered an initialize asking for it with it) and the 2025-era versions
// its server/discover lists in supportedVersions (2026-07-28
// server/discover.mdx: "Protocol versions the server supports"), when it
// answers server/discover at all.
//
//	harness ──server/discover (2026-07-28, a new connection)──▶ server
//	        ◀── supportedVersions [2026-07-28, 2025-11-25, 2025-06-18]
//	harness ──initialize {protocolVersion: X} (a new connection each)──▶ server
//	        ◀── result {protocolVersion: X}, for every supported X
//
// A manifest may also declare the versions the server supports
// (versions:, a declared contract): a 2025-only server says nothing of
// its versions on the wire, so only the declaration names a version it
// supports that it answers with another.
//
// The runner's version probe reads an initialize answered with another
// version as a refusal of the version asked, so the run never reaches a
// version the server answers that way: the check asks every version it
// knows the server supports on connections of its own.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/protocol"
	"github.com/mcp-conform/mcp-conform/reports"
)

var checkVersionSame = register(&Check{
	ID:    "LIFECYCLE-VERSION-SAME",
	Title: "an initialize asking for a version the server supports is answered with that same version",
	How: "2025 versions, stdio and Streamable HTTP. The versions the server supports are those it says it does: the run's " +
		"own version (the harness's initialize asking for it was answered with it) and every 2025-era version (" +
		strings.Join(initializeVersionsAll, ", ") + ") the supportedVersions of its server/discover lists (sent in 2026-07-28 " +
		"on a new connection before any initialize; an error, or no answer within the start timeout, lists none), and every " +
		"2025-era version the manifest's versions: declares (a declared contract). For each, " +
		"newest first, sends initialize asking for it on a new connection (stdio: a new server process; HTTP: a new " +
		"session): the result must name that same protocolVersion. An error, or a result naming another version, FAILs.",
	Rules: sameRule(Rule{Level: reports.Must, Spec: lifecyclePage,
		Clause: "If the server supports the requested protocol version, it MUST respond with the same version."},
		legacyVersions...),
	Transports: []string{viaStdio, viaHTTP},
	Clauses:    []string{"lc#3"},
})

// initializeVersionsAll are the versions initialize negotiates, newest
// first: initializeVersions and the first, 2024-11-05.
var initializeVersionsAll = append(slices.Clone(initializeVersions), "2024-11-05")

// supportedVersion is a version the server says it supports, and where it
// says so.
type supportedVersion struct{ version, why string }

func versionSame(h *H) {
	hc := lazyHTTP(h)
	ask := initAskerOn(h, hc)
	run := h.Version()
	known := []supportedVersion{{run, "the run negotiated it"}}
	listed, how := discoveredVersions(h, hc)
	h.Notef("server/discover: %s", how)
	for _, v := range listed {
		if v != run && slices.Contains(initializeVersionsAll, v) {
			known = append(known, supportedVersion{v, "its server/discover lists it"})
		}
	}
	for _, v := range h.Target().Versions {
		if !slices.ContainsFunc(known, func(k supportedVersion) bool { return k.version == v }) && slices.Contains(initializeVersionsAll, v) {
			known = append(known, supportedVersion{v, "the manifest declares it (versions:, a declared contract)"})
		}
	}
	slices.SortFunc(known, func(a, b supportedVersion) int { return strings.Compare(b.version, a.version) })
	var answered []string
	for _, s := range known {
		a, w := ask(s.version)
		if w != s.version {
			h.Failf("initialize asking for %s, a version the server supports (%s), got %s (protocolVersion %q), want a result naming %s: %s",
				s.version, s.why, a, w, s.version, clip(a.raw))
		}
		answered = append(answered, s.version)
	}
	h.Notef("initialize asking for each of %v was answered with that version", answered)
}

// discoveredVersions sends server/discover in 2026-07-28 on a connection
// nothing negotiated (stdio: a new server process; HTTP: a POST with no
// session) and returns the strings its result's supportedVersions lists,
// with what the answer was. An error, no answer within the start timeout
// (stdio: the process was just started), or a result without the list
// gives none.
func discoveredVersions(h *H, hc func() *HConn) ([]string, string) {
	const modern = v20260728
	params := map[string]any{"_meta": modernMeta(modern)}
	var a rpcAnswer
	switch h.Target().Via() {
	case protocol.TransportHTTP:
		a = modernPOST(h, hc(), "server/discover", params, http.Header{"Mcp-Protocol-Version": {modern}, "Mcp-Method": {"server/discover"}})
	case protocol.TransportStdio:
		c := h.ConnectBare()
		id := jsonrpc.StringID(unique("discover"))
		line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id.Raw(), "method": "server/discover", "params": params})
		from := c.W.Len()
		c.SendRaw(string(line))
		// The process was just started: its first answer gets the time
		// a server has to start and negotiate.
		d := h.Cfg().StartTimeout
		m, ok := c.WaitFirst(from, d, func(m clients.Message) bool { return m.Env.Kind.IsReply() && m.Env.ID == id })
		if !ok {
			return nil, fmt.Sprintf("not answered within %s (no versions listed)", d)
		}
		a = parseAnswer(0, m.Raw)
	default:
		h.Skip("the target is neither a stdio process nor a Streamable HTTP endpoint (" + h.Target().Transport + ")")
	}
	var r struct {
		SupportedVersions []any `json:"supportedVersions"`
	}
	if a.err != nil || json.Unmarshal(a.result, &r) != nil {
		return nil, a.String() + " (no versions listed)"
	}
	var out []string
	for _, v := range r.SupportedVersions {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out, fmt.Sprintf("supportedVersions %v", out)
}

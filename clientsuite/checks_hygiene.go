package clientsuite

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// ---- session hygiene (judged on the runs of every scenario) ----

var checkIDUnique = &Check{
	ID:    "CLIENT-ID-UNIQUE",
	Title: "request ids are never null and never reused (within a session; 2026: while a request with it awaits its response)",
	How:   "Every run: each request the client sends has an id that is not null and (2025) not used before in the session (the server process on stdio, the Mcp-Session-Id on HTTP), or (2026-07-28) not that of an earlier request still without a response.",
	Rules: merge(
		sameRule(spec("MUST NOT", "Unlike base JSON-RPC, the ID MUST NOT be null. The request ID MUST NOT have been previously used by the requestor within the same session.", pageBasic, "cl-basic#1", "cl-basic#2"), legacyVersions...),
		map[string]Rule{V20260728: spec("MUST NOT", "Unlike base JSON-RPC, the ID MUST NOT be null. The request ID MUST NOT match the ID of any other request the sender has issued and not yet received a response for.", strings.ReplaceAll(pageBasic, "VERSION", V20260728), "cl-basic#1", "cl-basic#3")},
	),
	Transports: allTransports,
	judge: func(r *Run) (Finding, string) {
		v := r.View()
		reqs := v.ClientRequests()
		used := map[string]map[jsonrpc.ID]*Msg{}
		for _, m := range reqs {
			if m.Env.ID == "null" {
				return Broken, fmt.Sprintf("request %s (%s) has the id null", m.Env.Method, where(m))
			}
			key := sessionKey(r, m)
			if used[key] == nil {
				used[key] = map[jsonrpc.ID]*Msg{}
			}
			if prev, ok := used[key][m.Env.ID]; ok {
				if isLegacy(r.Version) {
					return Broken, fmt.Sprintf("request %s (%s) reuses the id %s of %s (%s) in the same session", m.Env.Method, where(m), idText(m.Env.ID), prev.Env.Method, where(prev))
				}
				if _, answered := v.Reply(prev.Env.ID, prev.Index); !answered || replyIndex(v, prev) > m.Index {
					return Broken, fmt.Sprintf("request %s (%s) reuses the id %s of %s (%s), which had no response yet", m.Env.Method, where(m), idText(m.Env.ID), prev.Env.Method, where(prev))
				}
			}
			used[key][m.Env.ID] = m
		}
		return Held, fmt.Sprintf("%d requests, every id distinct and not null", len(reqs))
	},
}

func replyIndex(v *View, req *Msg) int {
	if m, ok := v.Reply(req.Env.ID, req.Index); ok {
		i, _ := m.Delivered()
		return i
	}
	return 1 << 30
}

func where(m *Msg) string {
	if m.Stream != "" {
		return m.Stream
	}
	return fmt.Sprintf("message %d", m.Seq)
}

var checkTokenUnique = &Check{
	ID:    "CLIENT-PROGRESS-TOKEN-UNIQUE",
	Title: "progress tokens are unique among the client's active requests",
	How: "Every run (tools-call makes two calls at once): a request may not carry the progress token of another request still active " +
		"(no response delivered, not cancelled, its 2026 stream not closed).",
	Rules: merge(
		sameRule(spec("MUST", "Progress tokens can be chosen by the sender using any means, but MUST be unique across all active requests.", pageProgress25, "cl-prg#1"), legacyVersions...),
		map[string]Rule{V20260728: spec("MUST", "Progress tokens can be chosen by the client using any means, but MUST be unique across all active requests.", pageProgress26, "cl-prg#1")},
	),
	Transports: allTransports,
	judge: func(r *Run) (Finding, string) {
		v := r.View()
		var withToken []*Msg
		for _, m := range v.ClientRequests() {
			if !m.Env.ProgressToken.IsZero() {
				withToken = append(withToken, m)
			}
		}
		for i, m := range withToken {
			for _, prev := range withToken[:i] {
				if prev.Env.ProgressToken == m.Env.ProgressToken && activeAt(r, prev, m.Index) {
					return Broken, fmt.Sprintf("request %s (%s, id %s) carries progress token %s, which request %s (id %s) still active uses",
						m.Env.Method, where(m), idText(m.Env.ID), m.Env.ProgressToken, prev.Env.Method, idText(prev.Env.ID))
				}
			}
		}
		if len(withToken) == 0 {
			return NotApplicable, "no request carried a progress token"
		}
		return Held, fmt.Sprintf("%d requests with progress tokens, none shared while active", len(withToken))
	},
}

// activeAt reports whether req was still active at entry index i: no
// reply delivered, no cancellation, its 2026 stream neither closed nor cut.
func activeAt(r *Run, req *Msg, i int) bool {
	v := r.View()
	if replyIndex(v, req) < i {
		return false
	}
	for _, c := range v.CancelsOf(req.Env.ID) {
		if c.Index < i {
			return false
		}
	}
	if r.Transport == HTTP && req.Stream != "" {
		// A request the proxy answered itself (404), or whose exchange got
		// an error status, ended there: it has no stream to come back on.
		if req.Stopped {
			return false
		}
		if h := v.RespHead[req.Stream]; h != nil && (h.Status < 200 || h.Status > 299) {
			return false
		}
	}
	if r.modernHTTP() && req.Stream != "" {
		if n, ok := v.ClientClosed(req.Stream); ok && n.Index < i {
			return false
		}
		if f, ok := cutOf(r, req.Stream); ok && f.Index < i {
			return false
		}
	}
	return true
}

var checkCancelValid = &Check{
	ID:    "CLIENT-CANCEL-VALID",
	Title: "cancellations name only requests the client sent and believes in progress",
	How:   "Every run: each notifications/cancelled names the id of an earlier request of the client, not one answered more than 1 s before.",
	Rules: merge(
		sameRule(spec("MUST", "Cancellation notifications MUST only reference requests that: Were previously issued in the same direction; Are believed to still be in-progress", pageCancel25, "cl-can#1"), legacyVersions...),
		map[string]Rule{V20260728: withTransports(spec("MUST", "Cancellation notifications MUST only reference requests that: Were previously issued by the client; Are believed to still be in-progress", pageCancel26, "cl-c26#2"), Stdio)},
	),
	Transports: allTransports,
	judge: func(r *Run) (Finding, string) {
		v := r.View()
		cs := v.Cancels()
		if len(cs) == 0 {
			return NotApplicable, "the client sent no notifications/cancelled"
		}
		for _, c := range cs {
			var req *Msg
			for _, m := range v.ClientRequests() {
				if m.Index < c.Index && m.Env.ID == c.Env.CancelledID {
					req = m
				}
			}
			if req == nil {
				return Broken, fmt.Sprintf("notifications/cancelled (%s) names request %s, which the client never sent", where(c), idText(c.Env.CancelledID))
			}
			if rep, ok := v.Reply(req.Env.ID, req.Index); ok {
				if i, _ := rep.Delivered(); i < c.Index && c.At-rep.At > r.slack(cancelGrace) {
					return Broken, fmt.Sprintf("notifications/cancelled for request %s came %s after its response had reached the client", idText(req.Env.ID), msOf(c.At-rep.At))
				}
			}
		}
		return Held, fmt.Sprintf("%d cancellation(s), each naming a request in flight", len(cs))
	},
}

var checkNoCancelInit = &Check{
	ID:    "CLIENT-NO-CANCEL-INITIALIZE",
	Title: "the client never cancels initialize",
	How: "initialize-timeout: the proxy holds the initialize response until the client cancels (or the run ends) against an initialize " +
		"timeout of 1 s: no notifications/cancelled may name an initialize request.",
	Rules:      sameRule(spec("MUST NOT", "The initialize request MUST NOT be cancelled by clients", pageCancel25, "cl-can#2"), legacyVersions...),
	Transports: allTransports,
	Scenario:   "initialize-timeout",
	judge: func(r *Run) (Finding, string) {
		v := r.View()
		inits := 0
		for _, m := range v.ClientRequests() {
			if m.Env.Method != "initialize" {
				continue
			}
			inits++
			if cs := v.CancelsOf(m.Env.ID); len(cs) > 0 {
				return Broken, fmt.Sprintf("the client cancelled initialize (id %s) %s after sending it", idText(m.Env.ID), msOf(cs[0].At-m.At))
			}
		}
		if inits == 0 {
			return Unjudgeable, "the client sent no initialize" + clientExit(r)
		}
		return Held, "initialize was not cancelled"
	},
}

var checkNoRequestBeforeInit = &Check{
	ID:    "CLIENT-NO-REQUEST-BEFORE-INIT",
	Title: "no request but ping before the initialize result (2025)",
	How: "Every run in 2025: between the start and the moment the initialize response reached the client, it sends no request other " +
		"than initialize and ping (a server/discover version probe before initialize is allowed: 2026-07-28 asks dual-era clients for it).",
	Rules:      sameRule(spec("SHOULD NOT", "The client SHOULD NOT send requests other than pings before the server has responded to the initialize request.", pageLifecycle, "cl-lc#3"), legacyVersions...),
	Transports: allTransports,
	judge: func(r *Run) (Finding, string) {
		v := r.View()
		reqs := v.ClientRequests()
		var init *Msg
		for _, m := range reqs {
			if m.Env.Method == "initialize" {
				init = m
				break
			}
		}
		if init == nil {
			return NotApplicable, "the client sent no initialize"
		}
		until := replyIndex(v, init)
		for _, m := range reqs {
			if m.Index >= until {
				break
			}
			switch {
			case m.Env.Method == "initialize", m.Env.Method == "ping":
			case m.Env.Method == "server/discover" && m.Index < init.Index:
			default:
				return Broken, fmt.Sprintf("the client sent %s (id %s) before the initialize result had reached it", m.Env.Method, idText(m.Env.ID))
			}
		}
		return Held, "nothing but initialize before its result"
	},
}

var checkVersionHeader = &Check{
	ID:    "CLIENT-PROTOCOL-VERSION-HEADER",
	Title: "every HTTP request after initialization carries MCP-Protocol-Version (2026: matching _meta)",
	How: "Every HTTP run: in 2025 each request after the initialize result reached the client (POST, GET, DELETE) carries " +
		"MCP-Protocol-Version with the negotiated version; in 2026-07-28 every POST carries it, equal to the body's " +
		"_meta io.modelcontextprotocol/protocolVersion.",
	Rules: merge(
		sameRule(spec("MUST", "If using HTTP, the client MUST include the MCP-Protocol-Version: <protocol-version> HTTP header on all subsequent requests to the MCP server", pageTransports, "cl-tr#12"), legacyVersions...),
		map[string]Rule{V20260728: spec("MUST", "Every POST request to the MCP endpoint MUST include an MCP-Protocol-Version header. The header value MUST match the io.modelcontextprotocol/protocolVersion field carried in the request body's _meta.", pageHTTP26, "cl-h#3", "cl-h#4")},
	),
	Transports: []string{HTTP},
	judge: func(r *Run) (Finding, string) {
		v := r.View()
		checked := 0
		if isLegacy(r.Version) {
			version, pending := "", -1
			for _, m := range v.Msgs {
				if m.Dir != faultproxy.ClientToServer || m.Synthetic {
					continue
				}
				if m.Env.Method == "initialize" {
					pending = replyIndex(v, m)
					if rep, ok := v.Reply(m.Env.ID, m.Index); ok {
						var ver string
						_ = json.Unmarshal(resultField(rep, "protocolVersion"), &ver)
						version = ver
					}
					continue
				}
				if version == "" || m.Index < pending {
					continue
				}
				checked++
				if got := m.Header.Get("MCP-Protocol-Version"); got != version {
					return Broken, fmt.Sprintf("%s %s (%s) carried MCP-Protocol-Version %q; the negotiated version is %s", m.HTTPMethod, m.Stream, describe(m), got, version)
				}
			}
		} else {
			for _, m := range v.Msgs {
				if m.Dir != faultproxy.ClientToServer || m.Synthetic || m.HTTPMethod != "POST" {
					continue
				}
				checked++
				got := m.Header.Get("MCP-Protocol-Version")
				if got == "" {
					return Broken, fmt.Sprintf("POST %s (%s) carried no MCP-Protocol-Version header", m.Stream, describe(m))
				}
				if mv := metaVersion(m); mv != "" && mv != got {
					return Broken, fmt.Sprintf("POST %s (%s): MCP-Protocol-Version %q, but _meta says %q", m.Stream, describe(m), got, mv)
				}
			}
		}
		if checked == 0 {
			return NotApplicable, "no HTTP request after initialization"
		}
		return Held, fmt.Sprintf("%d HTTP requests, each with the right MCP-Protocol-Version", checked)
	},
}

func describe(m *Msg) string {
	switch {
	case m.Env.Method != "":
		return m.Env.Method
	case m.Env.Kind.IsReply():
		return "a response"
	case m.HTTPMethod == "GET":
		return "GET stream"
	}
	return string(m.Env.Kind)
}

// mcpNameParam is the params member Mcp-Name mirrors.
var mcpNameParam = map[string]string{"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}

var checkMethodHeaders = &Check{
	ID:    "CLIENT-METHOD-HEADERS",
	Title: "2026-07-28 POSTs carry Mcp-Method (and Mcp-Name) matching the body",
	How: "Every HTTP run in 2026-07-28: each POSTed request or notification carries Mcp-Method equal to its method and, for tools/call, " +
		"prompts/get and resources/read, Mcp-Name equal to params.name (params.uri), Base64-sentinel decoded.",
	Rules:      map[string]Rule{V20260728: spec("MUST", "The client MUST include the request metadata headers on each POST request. [Mcp-Method on all requests; Mcp-Name on tools/call, resources/read, prompts/get] These headers are REQUIRED for compliance.", pageHTTP26, "cl-h#1", "cl-h#5")},
	Transports: []string{HTTP},
	judge: func(r *Run) (Finding, string) {
		checked := 0
		for _, m := range r.View().Msgs {
			if m.Dir != faultproxy.ClientToServer || m.Synthetic || m.HTTPMethod != "POST" {
				continue
			}
			if m.Env.Kind != jsonrpc.Request && m.Env.Kind != jsonrpc.Notification {
				continue
			}
			checked++
			if got := m.Header.Get("Mcp-Method"); got != m.Env.Method {
				return Broken, fmt.Sprintf("POST %s (%s) carried Mcp-Method %q", m.Stream, m.Env.Method, got)
			}
			if key, ok := mcpNameParam[m.Env.Method]; ok {
				var want string
				_ = json.Unmarshal(params(m)[key], &want)
				if got := decodeHeaderValue(m.Header.Get("Mcp-Name")); got != want {
					return Broken, fmt.Sprintf("POST %s (%s %q) carried Mcp-Name %q", m.Stream, m.Env.Method, want, m.Header.Get("Mcp-Name"))
				}
			}
		}
		if checked == 0 {
			return NotApplicable, "no POSTed request"
		}
		return Held, fmt.Sprintf("%d POSTs, each with matching Mcp-Method (and Mcp-Name)", checked)
	},
}

var checkPing = &Check{
	ID:    "CLIENT-PING-ANSWERED",
	Title: "a ping from the server is answered promptly with an empty result (2025)",
	How: "tools-call in 2025: the proxy sends the client a ping request (stdio: after notifications/initialized; HTTP: on the slow call's " +
		"response stream, before its first progress) and holds the results of the client's calls until the client answered it (5 s at most), " +
		"so that a client that shuts down as soon as its calls end has had the whole time to answer. The client must answer it with result {} within 5 s.",
	Rules:      sameRule(spec("MUST", "The receiver MUST respond promptly with an empty response", pagePing, "cl-ping#1"), legacyVersions...),
	Transports: allTransports,
	Scenario:   "tools-call",
	judge: func(r *Run) (Finding, string) {
		v := r.View()
		var ping *Msg
		for _, m := range v.Msgs {
			if m.Synthetic && m.Dir == faultproxy.ServerToClient && m.Env.Method == "ping" {
				ping = m
				break
			}
		}
		if ping == nil {
			return Unjudgeable, "the proxy never sent its ping (the client did not get as far as notifications/initialized, or a call's progress or answer)" + clientExit(r)
		}
		for _, m := range v.Msgs {
			if m.Dir != faultproxy.ClientToServer || !m.Env.Kind.IsReply() || m.Env.ID != ping.Env.ID {
				continue
			}
			if m.Env.Kind == jsonrpc.ErrorReply {
				return Broken, fmt.Sprintf("the client answered the ping with an error: %s", m.Body)
			}
			if canonical(m.Env.Result) != "{}" {
				return Broken, fmt.Sprintf("the client answered the ping with result %s, want {}", m.Env.Result)
			}
			if d := m.At - ping.At; d > pingPrompt {
				return Broken, fmt.Sprintf("the client answered the ping only %s later", msOf(d))
			}
			return Held, fmt.Sprintf("ping answered with {} after %s", msOf(m.At-ping.At))
		}
		return Broken, fmt.Sprintf("the client never answered the server's ping (id %s)", idText(ping.Env.ID))
	},
}

var checkStdioShutdown = &Check{
	ID:    "CLIENT-STDIO-SHUTDOWN",
	Title: "the client shuts a stdio server down by closing its stdin first",
	How: "Every stdio run: the server process (mcp-conform serve-scenario) records when its stdin closes and any signal it gets. " +
		"A signal (SIGTERM) before stdin closed, or a SIGKILL with stdin open, breaks the order. Runs the grader had to kill are not judged.",
	Rules: merge(
		sameRule(spec("SHOULD", "For the stdio transport, the client SHOULD initiate shutdown by: First, closing the input stream to the child process (the server); Waiting for the server to exit, or sending SIGTERM if the server does not exit within a reasonable time; Sending SIGKILL if the server does not exit within a reasonable time after SIGTERM", pageLifecycle, "cl-lc#8"), legacyVersions...),
		map[string]Rule{V20260728: spec("SHOULD", "The client SHOULD initiate shutdown by: Closing the input stream to the child process (the server). Waiting for the server to exit. If the server does not exit within a reasonable time, forcibly terminating the process", pageStdio26, "cl-st#6")},
	),
	Transports: []string{Stdio},
	judge: func(r *Run) (Finding, string) {
		if len(r.Clients) > 0 && r.Clients[0].Killed {
			return NotApplicable, "the grader ended the client at its deadline"
		}
		if r.Servers == 0 {
			return NotApplicable, "the client started no server"
		}
		closed := false
		for _, n := range r.View().Notes {
			switch {
			case strings.HasPrefix(n.Text, NoteServerStart):
				closed = false
			case strings.HasPrefix(n.Text, NoteStdinClosed):
				closed = true
			case strings.HasPrefix(n.Text, NoteSignal) && !closed:
				return Broken, strings.TrimPrefix(n.Text, "mcp-conform serve-scenario: ") + ": the client signalled the server before closing its stdin"
			case strings.HasPrefix(n.Text, NoteKilled) && !closed:
				return Broken, "the server process was killed (SIGKILL) with its stdin still open"
			}
		}
		return Held, fmt.Sprintf("stdin closed first (%d server process%s)", r.Servers, plural(r.Servers, "", "es"))
	},
}

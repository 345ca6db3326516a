package suites

// What the server may send before the client's initialized notification
// (lifecycle.mdx, "Initialization"): pings and logging only.
//
//	harness ──initialize {capabilities: {roots}}──▶ proxy ──▶ server
//	        ◀── result ───────────────────────────────────────┘
//	harness ──notifications/initialized──▶ proxy (held)
//	harness ──ping──▶ proxy ──▶ server
//	        ◀── ping result ── proxy releases initialized ──▶ server
//
// Until the ping's answer passes the proxy, the server cannot have
// received initialized: a request it sends in that window (other than
// ping) is one the sentence advises against. The client declares roots so
// that a roots/list would be a negotiated request: only its timing is
// judged here.

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/protocol"
	"github.com/mcp-conform/mcp-conform/reports"
)

var checkNoEarlyRequests = register(&Check{
	ID:    "LIFECYCLE-NO-EARLY-REQUESTS",
	Title: "the server sends no request but ping before it has received notifications/initialized",
	How: "2025 versions. Over stdio, starts the server without a handshake and sends initialize in the run's version " +
		"declaring the roots capability, then notifications/initialized, which the proxy holds until the server has " +
		"answered a ping sent after it. Until that answer the server has not received initialized: a request it sends " +
		"in that window other than ping WARNs (a ping from the server is answered; logging is a notification). Over " +
		"Streamable HTTP, opens a second session: initialize declaring roots (its response read to the result, whether a " +
		"JSON body or an event stream), the standalone GET stream (when offered), then a ping POSTed and answered, and only " +
		"then sends notifications/initialized: a request other than ping on the initialize stream, the GET stream or the " +
		"ping's stream until then WARNs. Either way the window ends at the answer to that ping: a request sent only later " +
		"is not waited for.",
	Rules: sameRule(Rule{Level: reports.Should, Spec: lifecyclePage,
		Clause: "The server SHOULD NOT send requests other than pings and logging before receiving the initialized notification."},
		legacyVersions...),
	Transports: []string{viaStdio, viaHTTP},
	Clauses:    []string{"lc#2"},
})

func noEarlyRequests(h *H) {
	if h.Target().Via() == protocol.TransportHTTP {
		noEarlyRequestsHTTP(h)
		return
	}
	pingID := jsonrpc.StringID(unique("before-initialized"))
	d := h.Cfg().OpTimeout
	c := h.ConnectBare(faultproxy.Rule{
		Name:  "hold-initialized-until-ping-answered",
		Match: faultproxy.Match{Dir: faultproxy.ClientToServer, Method: "notifications/initialized"},
		Fault: faultproxy.HoldUntil{Until: faultproxy.Match{Dir: faultproxy.ServerToClient, ID: pingID}, Max: d},
	})
	initID := jsonrpc.StringID(unique("init"))
	send := func(v map[string]any) {
		line, _ := json.Marshal(v)
		c.SendRaw(string(line))
	}
	send(map[string]any{"jsonrpc": "2.0", "id": initID.Raw(), "method": "initialize", "params": map[string]any{
		"protocolVersion": h.Version(),
		"capabilities":    map[string]any{"roots": map[string]any{}},
		"clientInfo":      map[string]any{"name": "mcp-conform", "version": clients.DefaultClientVersion},
	}})
	// Requests before the initialize result count too: the server has not
	// received initialized then either.
	early := func(m clients.Message) string {
		return fmt.Sprintf("the server sent a %s request before it received notifications/initialized (held by the proxy until the ping after it was answered): %s",
			m.Env.Method, clip(m.Raw))
	}
	from := 0
	await := func(id jsonrpc.ID, what string, d time.Duration) clients.Message {
		for {
			m, ok := c.WaitFirst(from, d, func(m clients.Message) bool {
				return m.Env.Kind == jsonrpc.Request || (m.Env.Kind.IsReply() && m.Env.ID == id)
			})
			if !ok {
				h.Failf("%s was not answered %s", what, c.Silence(d))
			}
			from = m.Seq + 1
			if m.Env.Kind != jsonrpc.Request {
				return m
			}
			if m.Env.Method != "ping" {
				h.Failf("%s", early(m))
			}
			ctx, cancel := h.Op()
			err := c.W.Reply(ctx, m.Env.ID, map[string]any{})
			cancel()
			if err != nil {
				h.FailServer("answer the server's ping: %v%s", err, c.ExitHint())
			}
		}
	}
	// The process was just started: its first answer gets the time a
	// server has to start and negotiate.
	if r := await(initID, "initialize", h.Cfg().StartTimeout); r.Env.Kind != jsonrpc.Response {
		h.Errorf("initialize in %s declaring roots was refused, the check cannot go on: %s", h.Version(), clip(r.Raw))
	}
	send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	send(map[string]any{"jsonrpc": "2.0", "id": pingID.Raw(), "method": "ping"})
	await(pingID, "the ping sent before notifications/initialized reached the server", d)
	h.Notef("no request but ping came before notifications/initialized was released")
}

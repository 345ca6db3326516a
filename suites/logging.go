package suites

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/reports"
)

const (
	loggingPage   = "specification/VERSION/server/utilities/logging.mdx"
	loggingModern = "specification/2026-07-28/server/utilities/logging.mdx"
	// metaLogLevel is the 2026-07-28 per-request log level of _meta.
	metaLogLevel = "io.modelcontextprotocol/logLevel"
)

// logLevels are the LoggingLevel values (RFC 5424), least severe first.
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// The LOGGING checks. The log role is a tool that sends notifications/message
// while it handles a call once the client asked for log messages (2025:
// logging/setLevel; 2026-07-28: _meta logLevel on the request).
var (
	checkLoggingCapability = register(&Check{
		ID:    "LOGGING-CAPABILITY",
		Title: "a server that sends notifications/message declares the logging capability",
		How: "Asks for log messages at debug (2025: logging/setLevel; 2026-07-28: _meta io.modelcontextprotocol/logLevel on the " +
			"call), calls the log role, then the barrier request, and judges every notifications/message the connection " +
			"carried against the capabilities of the handshake. No log message at all: SKIP (nothing to judge).",
		Rules: merge(
			sameRule(Rule{Level: reports.Must, Spec: loggingPage,
				Clause: "Servers that emit log message notifications MUST declare the logging capability"}, legacyVersions...),
			map[string]Rule{v20260728: {Level: reports.Must, Spec: loggingModern,
				Clause: "Servers that emit log message notifications MUST declare the logging capability"}},
		),
		Transports: []string{viaStdio, viaHTTP},
		Roles:      []string{"log"},
		Clauses:    []string{"log#1"},
	})
	checkLoggingInvalidLevel = register(&Check{
		ID:    "LOGGING-INVALID-LEVEL",
		Title: "an unknown log level gets the error -32602",
		How: "2025: sends logging/setLevel with a level that is not a LoggingLevel; 2026-07-28: sends the log role's call (tools/list " +
			"without one) with such a value in _meta io.modelcontextprotocol/logLevel. A result, or an error with another code, WARNs. " +
			"Then the barrier request. A server that does not declare logging: SKIP.",
		Rules: merge(
			sameRule(Rule{Level: reports.Should, Spec: loggingPage,
				Clause: "Servers SHOULD return standard JSON-RPC errors for common failure cases: Invalid log level: -32602 (Invalid params)"}, legacyVersions...),
			map[string]Rule{v20260728: {Level: reports.Should, Spec: loggingModern,
				Clause: "If the io.modelcontextprotocol/logLevel value carried in a request's _meta is not a recognized log level, the server SHOULD reject that request with a standard JSON-RPC error: Invalid log level: -32602 (Invalid params)"}},
		),
		Transports: []string{viaStdio, viaHTTP},
		Clauses:    []string{"log#2"},
	})
	checkLoggingLevelFilter = register(&Check{
		ID:    "LOGGING-LEVEL-FILTER",
		Title: "no log message below the level the client asked for",
		How: "Asks for debug and calls the log role to see the levels it logs at; then asks for the level just above the least " +
			"severe one seen (2025: logging/setLevel; 2026-07-28: _meta logLevel) and calls it again: a message below that level " +
			"WARNs. No log message at debug: SKIP. mcp-conform's reading (SHOULD): no sentence of the page says MUST.",
		Rules: merge(
			sameRule(Rule{Level: reports.Should, Spec: loggingPage, Source: reports.SourceReading,
				Clause: "To configure the minimum log level, clients MAY send a logging/setLevel request; [schema, SetLevelRequest.params.level] \"The server should send all logs at this level and higher (i.e., more severe)\"; [message flow] \"Only sends error level and above\" — mcp-conform's reading: nothing below the minimum level is sent."},
				legacyVersions...),
			map[string]Rule{v20260728: {Level: reports.Should, Spec: loggingModern, Source: reports.SourceReading,
				Clause: "When the field is present, the server MAY send notifications/message notifications at or above the requested level on the response stream of that request — mcp-conform's reading: nothing below the requested level is sent."}},
		),
		Transports: []string{viaStdio, viaHTTP},
		Roles:      []string{"log"},
	})
	checkLoggingNotRequested = register(&Check{
		ID:    "LOGGING-NOT-REQUESTED",
		Title: "2026-07-28: no notifications/message for a request without _meta logLevel",
		How: "Calls the log role without io.modelcontextprotocol/logLevel in _meta, then the barrier request (also without " +
			"it): any notifications/message on the connection FAILs. A server that does not declare logging: SKIP.",
		Rules: map[string]Rule{v20260728: {Level: reports.Must, Spec: loggingModern, Also: []string{"specification/2026-07-28/changelog.mdx"},
			Clause: "To receive log messages for a specific request, include io.modelcontextprotocol/logLevel in the request's _meta. The server MUST NOT emit notifications/message for a request that does not include this field."}},
		Transports: []string{viaStdio, viaHTTP},
		Roles:      []string{"log"},
		Clauses:    []string{"log#7"},
	})
	checkLoggingRequestScoped = register(&Check{
		ID:    "LOGGING-REQUEST-SCOPED",
		Title: "2026-07-28: no notifications/message on a subscriptions/listen stream or another request's stream",
		How: "Opens subscriptions/listen ({toolsListChanged: true}; an error answer or no acknowledgment: SKIP, the server does " +
			"not serve subscriptions), then calls the log role with _meta io.modelcontextprotocol/logLevel debug, then the " +
			"barrier request, and watches the listen stream 500 ms more. Over HTTP a notifications/message on the listen's SSE " +
			"stream, or on any stream but the call's own, FAILs. On stdio, where every message shares one channel, mcp-conform's " +
			"reading: a notifications/message carrying _meta io.modelcontextprotocol/subscriptionId (tied to the subscription, " +
			"not to the request) is on the listen stream and FAILs. No log message on the call's own stream: SKIP (nothing " +
			"delivered, so nothing to judge).",
		Rules: map[string]Rule{v20260728: {Level: reports.Must, Spec: loggingModern, Also: []string{subscriptionsModern},
			Clause: "notifications/message is request-scoped: the server MUST NOT deliver it on a subscriptions/listen stream or on any stream other than the one carrying the response to the request that set the log level."}},
		Transports: []string{viaStdio, viaHTTP},
		Roles:      []string{"log"},
		Clauses:    []string{"log#8"},
		Limits: map[string]string{"log#8": "the log role's messages while one subscriptions/listen is open; on stdio only those " +
			"tagged with a subscription id are told apart from the call's own (an untagged copy on the one channel cannot be)"},
	})
)

func registerLogging() {
	ginkgo.Describe("LOGGING", ginkgo.Label("area:logging"), func() {
		define(checkLoggingCapability, loggingCapability)
		define(checkLoggingInvalidLevel, loggingInvalidLevel)
		define(checkLoggingLevelFilter, loggingLevelFilter)
		define(checkLoggingNotRequested, loggingNotRequested)
		define(checkLoggingRequestScoped, loggingRequestScoped)
	})
}

// declaresLogging reports whether the capabilities list logging.
func declaresLogging(caps json.RawMessage) bool {
	var c map[string]json.RawMessage
	_ = json.Unmarshal(caps, &c)
	_, ok := c["logging"]
	return ok
}

// requireLogging skips a check on a server that does not declare logging.
func requireLogging(h *H, c msgConn) {
	if !declaresLogging(c.session().Capabilities) {
		h.Skip("the server does not declare the logging capability (capabilities " + clip(c.session().Capabilities) + "): no logging to judge")
	}
}

// logMessage is one notifications/message received.
type logMessage struct {
	level string
	m     clients.Message
}

// logMessagesSince returns the notifications/message from index from on.
func logMessagesSince(c msgConn, from int) []logMessage {
	var out []logMessage
	for _, m := range c.since(from) {
		if m.Env.Kind != jsonrpc.Notification || m.Env.Method != "notifications/message" {
			continue
		}
		var p struct {
			Level string `json:"level"`
		}
		_ = json.Unmarshal(m.Env.Params, &p)
		out = append(out, logMessage{level: p.Level, m: m})
	}
	return out
}

func logRank(level string) int { return slices.Index(logLevels, level) }

// startRequest sends a request with an explicit id on c (the modern _meta is
// merged into params by the wire).
func startRequest(h *H, c msgConn, id jsonrpc.ID, method string, params map[string]any) waiter {
	ctx, cancel := h.Op()
	defer cancel()
	var (
		w   waiter
		err error
	)
	switch x := c.(type) {
	case stdioMsg:
		w, err = x.W.Start(ctx, id, method, params)
	case *httpMsg:
		w, err = x.W.Start(h.Ctx(), id, method, params)
	default:
		h.Errorf("no request on a %T", c)
	}
	if err != nil {
		h.FailServer("send %s (id %s): %v%s", method, id, err, c.exitHint())
	}
	return w
}

// setLogLevel sends logging/setLevel (2025) and returns its answer.
func setLogLevel(h *H, c msgConn, level string) clients.Message {
	id := jsonrpc.StringID(unique("log-set-level"))
	return c.await(startRequest(h, c, id, "logging/setLevel", map[string]any{"level": level}), "logging/setLevel "+level)
}

// logRoleCall calls the log role asking for log messages at level ("": none
// asked for on the call; in 2025 the level in force is the session's),
// then the barrier; it returns the call's answer and the log messages the
// connection carried meanwhile.
func logRoleCall(h *H, c msgConn, level string) (clients.Message, []logMessage) {
	start := c.length()
	params := roleParams(h.Role("log"), nil)
	if level != "" && c.session().Era == clients.EraModern {
		params["_meta"] = map[string]any{metaLogLevel: level}
	}
	id := jsonrpc.StringID(unique("log-call"))
	resp := c.await(startRequest(h, c, id, "tools/call", params), "the log role's call")
	c.ping("after the log role's call")
	return resp, logMessagesSince(c, start)
}

// askLogging asks for log messages at level for the calls that follow: in
// 2025 with logging/setLevel (an error answer is returned as a reason), in
// 2026-07-28 on each call (nothing to do here).
func askLogging(h *H, c msgConn, level string) string {
	if c.session().Era == clients.EraModern {
		return ""
	}
	m := setLogLevel(h, c, level)
	if m.Env.Kind != jsonrpc.Response {
		return fmt.Sprintf("logging/setLevel %q was answered %s", level, clip(m.Raw))
	}
	return ""
}

func levelsOf(ms []logMessage) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.level
	}
	return out
}

func loggingCapability(h *H) {
	c := connectMsg(h)
	if why := askLogging(h, c, "debug"); why != "" {
		h.Notef("%s", why)
	}
	logRoleCall(h, c, "debug")
	all := logMessagesSince(c, 0)
	if len(all) == 0 {
		h.Skip("the server sent no notifications/message (logging asked for at debug, the log role called): nothing to judge")
	}
	if !declaresLogging(c.session().Capabilities) {
		h.Failf("the server sent %d notifications/message (first: %s) but its capabilities %s do not declare logging",
			len(all), clip(all[0].m.Raw), clip(c.session().Capabilities))
	}
	h.Notef("%d notifications/message (levels %s), logging declared", len(all), strings.Join(levelsOf(all), ", "))
}

const bogusLogLevel = "mcp-conform-not-a-level"

func loggingInvalidLevel(h *H) {
	c := connectMsg(h)
	requireLogging(h, c)
	var m clients.Message
	what := ""
	if c.session().Era == clients.EraModern {
		method, params := "tools/list", map[string]any{}
		if r, ok := h.Target().Roles["log"]; ok {
			method, params = "tools/call", roleParams(r, nil)
		}
		params["_meta"] = map[string]any{metaLogLevel: bogusLogLevel}
		what = fmt.Sprintf("%s with _meta %s %q", method, metaLogLevel, bogusLogLevel)
		m = c.await(startRequest(h, c, jsonrpc.StringID(unique("log-bogus")), method, params), what)
	} else {
		what = fmt.Sprintf("logging/setLevel %q", bogusLogLevel)
		m = setLogLevel(h, c, bogusLogLevel)
	}
	switch {
	case m.Env.Kind == jsonrpc.Response:
		h.Failf("%s was answered with a result (id %s), not the error -32602: %s", what, m.Env.ID, clip(m.Raw))
	case errorCode(m.Env.Error) != jsonrpc.CodeInvalidParams:
		h.Failf("%s got the error %s (id %s), want -32602", what, describeError(m.Env.Error), m.Env.ID)
	}
	c.ping("after an invalid log level")
	h.Notef("%s got -32602 (id %s)", what, m.Env.ID)
}

func loggingLevelFilter(h *H) {
	c := connectMsg(h)
	requireLogging(h, c)
	if why := askLogging(h, c, "debug"); why != "" {
		h.Skip(why + ": no level to filter by")
	}
	_, first := logRoleCall(h, c, "debug")
	if len(first) == 0 {
		h.Skip("the log role's call sent no notifications/message with logging at debug: nothing to filter")
	}
	least := len(logLevels)
	for _, m := range first {
		if r := logRank(m.level); r >= 0 && r < least {
			least = r
		}
	}
	if least >= len(logLevels)-1 {
		h.Skip(fmt.Sprintf("the log role logs only at %s: no level above it to filter by", strings.Join(levelsOf(first), ", ")))
	}
	min := logLevels[least+1]
	if why := askLogging(h, c, min); why != "" {
		h.Skip(why)
	}
	_, second := logRoleCall(h, c, min)
	for _, m := range second {
		if r := logRank(m.level); r >= 0 && r < least+1 {
			h.Failf("with the level set to %s the server sent a %s message: %s", min, m.level, clip(m.m.Raw))
		}
	}
	h.Notef("at debug the log role logged %s; at %s: %s (none below)", strings.Join(levelsOf(first), ", "), min, strings.Join(levelsOf(second), ", "))
}

func loggingNotRequested(h *H) {
	c := connectMsg(h)
	requireLogging(h, c)
	_, msgs := logRoleCall(h, c, "")
	if len(msgs) > 0 {
		h.Failf("the log role's call, without %s in _meta, was followed by %d notifications/message (first: %s)", metaLogLevel, len(msgs), clip(msgs[0].m.Raw))
	}
	h.Notef("no notifications/message for a call without %s", metaLogLevel)
}

func loggingRequestScoped(h *H) {
	c := connectMsg(h)
	id := jsonrpc.StringID(unique("listen-logs"))
	ack := openListen(h, c, id, map[string]any{"toolsListChanged": true})
	from := c.length()
	resp, _ := logRoleCall(h, c, "debug")
	oneChannel := c.sameStream(ack, resp)
	offStream := func(m clients.Message) bool {
		if m.Env.Kind != jsonrpc.Notification || m.Env.Method != "notifications/message" {
			return false
		}
		if oneChannel {
			return subscriptionOf(m) != ""
		}
		return !c.sameStream(resp, m)
	}
	if m, ok := c.waitFirst(from, filterGrace, offStream); ok {
		switch {
		case oneChannel:
			h.Failf("a notifications/message tagged with subscription %s (subscriptions/listen %s open) during the log role's call: %s", subscriptionOf(m), id, clip(m.Raw))
		case c.sameStream(ack, m):
			h.Failf("a notifications/message on the stream of subscriptions/listen %s during the log role's call: %s", id, clip(m.Raw))
		default:
			h.Failf("a notifications/message on another stream than the log role's call's (subscriptions/listen %s open): %s", id, clip(m.Raw))
		}
	}
	own := logMessagesSince(c, from)
	if len(own) == 0 {
		h.Skip(fmt.Sprintf("the log role's call (with %s debug) got no notifications/message: nothing delivered to judge", metaLogLevel))
	}
	h.Notef("%d notifications/message (levels %s) on the call's own stream, none on the stream of subscriptions/listen %s", len(own), strings.Join(levelsOf(own), ", "), id)
}

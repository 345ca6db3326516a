package suites

// HTTP-RESPONSE-CONTENT-TYPE: a POST carrying a JSON-RPC request is
// answered with Content-Type application/json or text/event-stream (2025
// transports.mdx, "Sending Messages to the Server" 5; 2026-07-28
// streamable-http.mdx, the same section, 6). Passive, like SCHEMA-VALID:
// it starts no server and sends nothing of its own; the harness judges the
// response head of every POST that carried a request, in every other check
// (internal/harness/content_type.go), and makes one result per transport
// and version when the report is built.

import (
	"github.com/mcp-conform/mcp-conform/internal/harness"
	"github.com/mcp-conform/mcp-conform/reports"
)

var checkResponseContentType = harness.ContentTypeCheck(register(&Check{
	ID:    "HTTP-RESPONSE-CONTENT-TYPE",
	Title: "a POST carrying a request is answered with Content-Type application/json or text/event-stream",
	How: "Over Streamable HTTP, every version. Runs in no spec of its own: in every other check, the response head of every " +
		"POST whose body was a JSON-RPC request (a method and an id; not a batch, a notification, a response or a body that is " +
		"not JSON-RPC) is read as the server sent it, before any fault of the proxy. Each such answer with a 2xx status must " +
		"carry Content-Type application/json or text/event-stream (parameters and case aside); any other media type, or none, " +
		"FAILs, even when the body is a JSON-RPC answer a client could read. An answer with an error status is not one the " +
		"sentence speaks of (the pages let a 4xx carry no body at all) and is not judged. Each offending answer is listed with " +
		"the check it came from, its stream and the request's method. With no request sent on Streamable HTTP it SKIPs.",
	Rules: merge(
		sameRule(Rule{Level: reports.Must, Spec: httpLegacy,
			Clause: "If the input is a JSON-RPC request, the server MUST either return Content-Type: text/event-stream, to initiate an SSE stream, or Content-Type: application/json, to return one JSON object."},
			legacyVersions...),
		map[string]Rule{v20260728: {Level: reports.Must, Spec: httpModern,
			Clause: "If the body is a JSON-RPC request, the server MUST return either Content-Type: application/json (a single JSON object) or Content-Type: text/event-stream (an SSE response stream)."}},
	),
	Transports: []string{viaHTTP},
	Clauses:    []string{"tr#10", "h#7"},
	Passive:    true,
}))

package suites

// HTTP-UTF8: every JSON-RPC message the server sends over Streamable HTTP
// is UTF-8 (2025 transports.mdx: "JSON-RPC messages MUST be UTF-8
// encoded"; on stdio ROBUST-STDOUT-CLEAN judges the same sentence).
// Passive, like SCHEMA-VALID: it starts no server and sends nothing of its
// own; the harness reads the bytes of every message the server sent in
// every other check (internal/harness/utf8_wire.go) and makes one result
// per transport and version when the report is built.

import (
	"github.com/mcp-conform/mcp-conform/internal/harness"
	"github.com/mcp-conform/mcp-conform/reports"
)

var checkHTTPUTF8 = harness.UTF8Check(register(&Check{
	ID:    "HTTP-UTF8",
	Title: "every JSON-RPC message the server sends over Streamable HTTP is UTF-8",
	How: "Over Streamable HTTP, in 2025-06-18 and 2025-11-25. Runs in no spec of its own: in every other check, every " +
		"JSON-RPC message the server sent — an application/json body, or the data of an SSE event on a POST or GET stream — " +
		"is read as the bytes that crossed, before any fault of the proxy and before a JSON parser (Go's reads a stray byte " +
		"as U+FFFD), and must be valid UTF-8. A message with a byte that does not begin a valid UTF-8 sequence FAILs, listed " +
		"with the check it came from, its stream and the offset. Messages the proxy wrote itself, the priming event and " +
		"comments (no message), and a body of an HTTP error status that is no JSON-RPC message (a plain-text error page) " +
		"are not judged. With no message received over Streamable HTTP it SKIPs.",
	Rules: sameRule(Rule{Level: reports.Must, Spec: httpLegacy,
		Clause: "JSON-RPC messages MUST be UTF-8 encoded."}, legacyVersions...),
	Transports: []string{viaHTTP},
	Clauses:    []string{"tr#1"},
	Passive:    true,
}))

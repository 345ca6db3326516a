package suites

import (
	"github.com/mcp-conform/mcp-conform/internal/harness"
	"github.com/mcp-conform/mcp-conform/reports"
)

// SCHEMA-VALID validates, passively, every message the server sent in
// every other check against the negotiated version's schema.json
// (internal/schema: compiled once per process): requests and notifications
// by their method, results by the method of the request they answer, plus
// the JSON-RPC rules the schema does not express (result xor error, error
// code and message, no id on a notification, a 2025 server request's id a
// string or an integer, not null, the 2026 reserved codes, every _meta key
// name well formed, no server request or notification that only a later version
// than the negotiated one defines). It
// starts no server: each check's transcript is walked when the check ends
// (the offending message is marked there by a note), and one SCHEMA-VALID
// result per transport and version is made when the report is built,
// listing every offending message with the check it came from, its JSON
// pointer and the complaint. The walk and the judgement are the harness's
// (internal/harness/schema_valid.go): they read every check's connections.
var checkSchemaValid = harness.SchemaCheck(register(&Check{
	ID:    "SCHEMA-VALID",
	Title: "every message the server sends is valid against the negotiated version's schema",
	How: "Runs in no spec of its own: every message the server sent in every other check, on every transport, " +
		"is validated against the vendored schema.json of the version that check negotiated (requests and notifications " +
		"by their method, results by the method of the request they answer, errors by their code), and against the JSON-RPC rules " +
		"the schema leaves out (result xor error, an integer code with a message, no id on a notification, in 2025 a " +
		"request id that is a string or an integer, never null, the reserved codes of 2026-07-28, and every key of every _meta object, at any depth, a well-formed name: an optional prefix of dot-separated labels (a letter first, a letter or digit last) and a slash, then a name beginning and ending with a letter or digit). A server request or notification that the negotiated version does not define but a later one does (2025-11-25's notifications/tasks/status in a 2025-06-18 session) FAILs: both parties MUST respect the negotiated protocol version. The answer to a client's batch is left to ROBUST-BATCH-REJECTED. Each offending message is listed with the check it came from, its JSON pointer and the " +
		"schema's complaint, and marked in that check's transcript. A SHOULD NOT rule alone (a code of the " +
		"-32000..-32019 range in 2026-07-28, or a 2026-07-28 result whose _meta lacks io.modelcontextprotocol/serverInfo) WARNs; " +
		"a 2026-07-28 result without resultType breaks its schema (MUST).",
	Rules: merge(sameRule(Rule{Level: reports.Must, Spec: indexPage,
		Clause: "All messages between MCP clients and servers MUST follow the JSON-RPC 2.0 specification. [...] " +
			"The full specification of the protocol is defined as a TypeScript schema. This is the source of truth for all " +
			"protocol messages and structures. [...] Notifications MUST NOT include an ID. [...] " + metaKeyClause},
		allVersions...),
		sameRule(Rule{Level: reports.Must, Spec: indexPage,
			Clause: "All messages between MCP clients and servers MUST follow the JSON-RPC 2.0 specification. [...] " +
				"The full specification of the protocol is defined as a TypeScript schema. This is the source of truth for all " +
				"protocol messages and structures. [...] Notifications MUST NOT include an ID. [...] The result MUST include a " +
				"resultType field to indicate the type of the result. [...] Servers SHOULD include the following " +
				"io.modelcontextprotocol/* field in every result's _meta, unless specifically configured not to do so, to " +
				"identify themselves without relying on any prior connection state: io.modelcontextprotocol/serverInfo [...] " + metaKeyClause}, v20260728)),
	Transports: []string{viaStdio, viaHTTP, viaWebSocket},
	Clauses:    []string{"basic#1", "basic#10", "basic#6", "basic#8", "basic#15", "basic#16", "basic#14", "basic#2", "basic#3", "basic#11", "lc#6", "basic#13", "basic#21"},
	Limits:     map[string]string{"lc#6": "a server request or notification that only a later version defines; capability use and later-version fields are not judged"},
	Passive:    true,
}))

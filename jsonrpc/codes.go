package jsonrpc

// Error codes of ErrorObject.Code. The first five are JSON-RPC 2.0's own
// (https://www.jsonrpc.org/specification §5.1) and MCP uses them in every
// version (2026-07-28 basic/index.mdx "Error Codes"); the MCP codes carry,
// in their comments, the versions that define them. Untyped, so that they
// fit ErrorObject.Code and any int.
const (
	// CodeParseError: invalid JSON was received.
	CodeParseError = -32700
	// CodeInvalidRequest: the JSON sent is not a valid Request object.
	CodeInvalidRequest = -32600
	// CodeMethodNotFound: the method does not exist or is not available
	// (MCP also: a capability that is not supported; on Streamable HTTP in
	// 2026-07-28 it goes with 404 Not Found).
	CodeMethodNotFound = -32601
	// CodeInvalidParams: invalid method parameters (MCP also: an unknown
	// tool, prompt or cursor; from 2026-07-28 a resource not found).
	CodeInvalidParams = -32602
	// CodeInternalError: internal JSON-RPC error.
	CodeInternalError = -32603

	// CodeResourceNotFound is resources/read's "resource not found" in
	// 2025-06-18 and 2025-11-25 (server/resources.mdx "Error Handling").
	// 2026-07-28 replaces it by CodeInvalidParams: servers MUST NOT emit
	// it, clients SHOULD still accept it (basic/index.mdx "Error Codes").
	CodeResourceNotFound = -32002
	// CodeURLElicitationRequired is URLElicitationRequiredError, 2025-11-25
	// only (client/elicitation.mdx); reserved, not to be emitted, in
	// 2026-07-28.
	CodeURLElicitationRequired = -32042
	// CodeHeaderMismatch is HeaderMismatchError (2026-07-28 and later;
	// basic/transports/streamable-http.mdx): HTTP headers that disagree
	// with the body. Drafts of 2026-07-28 numbered it -32001
	// (changelog.mdx).
	CodeHeaderMismatch = -32020
	// CodeMissingRequiredClientCapability is
	// MissingRequiredClientCapabilityError (2026-07-28 and later; -32003
	// in drafts), with data.requiredCapabilities.
	CodeMissingRequiredClientCapability = -32021
	// CodeUnsupportedProtocolVersion is UnsupportedProtocolVersionError
	// (2026-07-28 and later, basic/versioning.mdx; -32004 in drafts), with
	// data.supported.
	CodeUnsupportedProtocolVersion = -32022
)

// Codes no specification defines, which SDKs and our own mutants send.
// Receivers MUST NOT assume a meaning for the -32000…-32019 ones
// (2026-07-28 basic/index.mdx "Error Codes"); they are named so that the
// code saying which peer sends them can be found.
const (
	// CodeServerError is the top of the server-error range, which SDKs send
	// for a generic failure (the TypeScript SDK's ConnectionClosed, and its
	// HTTP "Bad Request" answers).
	CodeServerError = -32000
	// CodeSessionNotFound is what SDKs send with HTTP 404 for an unknown
	// Mcp-Session-Id in the legacy era.
	CodeSessionNotFound = -32001
	// CodeRequestCancelled is LSP's RequestCancelled: no MCP version defines
	// a response to a cancelled request (the receiver sends none); a server
	// that answers one anyway may use it.
	CodeRequestCancelled = -32800
)

// The ranges JSON-RPC 2.0 reserves, and MCP's split of the server-error
// range (2026-07-28 basic/index.mdx "Error Codes"), each from its Min to
// its Max, both included:
//   - Reserved: pre-defined errors; codes for purposes MCP does not define
//     SHOULD be allocated outside it.
//   - ServerError: JSON-RPC's implementation-defined server errors, which
//     MCP splits in two:
//   - MCPLegacyMin…ServerErrorMax, legacy: no new codes, no assumed meaning
//     (except CodeResourceNotFound);
//   - ServerErrorMin…MCPReservedMax, reserved for the MCP specification
//     (2026-07-28): implementations MUST NOT emit a code from it that the
//     specification does not define.
const (
	ReservedMin, ReservedMax       = -32768, -32000
	ServerErrorMin, ServerErrorMax = -32099, -32000
	MCPLegacyMin, MCPReservedMax   = -32019, -32020
)

// defined lists the codes JSON-RPC 2.0 or some MCP version defines, with
// the name the specification gives each.
var defined = []struct {
	code int
	name string
}{
	{CodeParseError, "ParseError"}, {CodeInvalidRequest, "InvalidRequest"},
	{CodeMethodNotFound, "MethodNotFound"}, {CodeInvalidParams, "InvalidParams"},
	{CodeInternalError, "InternalError"}, {CodeResourceNotFound, "ResourceNotFound"},
	{CodeURLElicitationRequired, "URLElicitationRequired"}, {CodeHeaderMismatch, "HeaderMismatch"},
	{CodeMissingRequiredClientCapability, "MissingRequiredClientCapability"},
	{CodeUnsupportedProtocolVersion, "UnsupportedProtocolVersion"},
}

// CodeName returns the specification's name for code ("ParseError",
// "HeaderMismatch", ...), or "" for a code neither JSON-RPC 2.0 nor any MCP
// version defines.
func CodeName(code int) string {
	for _, d := range defined {
		if d.code == code {
			return d.name
		}
	}
	return ""
}

// IsMCPReserved reports whether code is in the sub-range 2026-07-28 reserves
// for the MCP specification (-32099…-32020).
func IsMCPReserved(code int) bool { return code >= ServerErrorMin && code <= MCPReservedMax }

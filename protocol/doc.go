// Package protocol names what the MCP specification fixes and every part
// of mcp-conform shares: the protocol versions, in release order and with
// their era, the transports a target can speak, the reserved _meta keys
// and the Streamable HTTP header names.
//
// It imports nothing of ours and holds no behaviour beyond ordering and
// classifying these names, so the wire clients, the reference server, the
// fault proxy, the suites and the reports can all use it without importing
// each other. (The clients package is not the owner: the reference server
// and the proxy must not depend on a client; jsonrpc is not either: it is
// JSON-RPC 2.0, which knows nothing of MCP versions or transports.)
// JSON-RPC and MCP error codes live in jsonrpc, next to the error object
// they fill.
package protocol

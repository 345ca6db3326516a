package protocol

// Reserved _meta keys (2026-07-28 basic/index.mdx "Reserved keys";
// progressToken in every version). The io.modelcontextprotocol/ ones are
// modern only.
const (
	MetaProgressToken      = "progressToken"
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	// MetaServerInfo carries the server's Implementation in a
	// DiscoverResult's _meta.
	MetaServerInfo = "io.modelcontextprotocol/serverInfo"
	// MetaLogLevel sets the log level per request (server/utilities/logging.mdx).
	MetaLogLevel = "io.modelcontextprotocol/logLevel"
	// MetaSubscriptionID tags a notification with its subscription
	// (basic/patterns/subscriptions.mdx).
	MetaSubscriptionID = "io.modelcontextprotocol/subscriptionId"
)

// ExtensionTasks is the id of the official tasks extension, which holds
// tasks from 2026-07-28 on (changelog.mdx; core protocol in 2025-11-25).
const ExtensionTasks = "io.modelcontextprotocol/tasks"

// Header names of Streamable HTTP (basic/transports/streamable-http.mdx),
// in the case the specification writes them (HTTP header names are case
// insensitive).
const (
	HeaderProtocolVersion = "MCP-Protocol-Version"
	HeaderSessionID       = "Mcp-Session-Id" // legacy era only (2025-11-25 basic/transports.mdx)
	HeaderMethod          = "Mcp-Method"     // modern: every request
	HeaderName            = "Mcp-Name"       // modern: tools/call, prompts/get, resources/read
	HeaderLastEventID     = "Last-Event-ID"  // SSE resumption
)

package protocol

import "testing"

// TestNames pins each name to the text the specification writes
// (2026-07-28 basic/index.mdx "Reserved keys", streamable-http.mdx).
func TestNames(t *testing.T) {
	for got, want := range map[string]string{
		MetaProgressToken:      "progressToken",
		MetaProtocolVersion:    "io.modelcontextprotocol/protocolVersion",
		MetaClientCapabilities: "io.modelcontextprotocol/clientCapabilities",
		MetaClientInfo:         "io.modelcontextprotocol/clientInfo",
		MetaServerInfo:         "io.modelcontextprotocol/serverInfo",
		MetaLogLevel:           "io.modelcontextprotocol/logLevel",
		MetaSubscriptionID:     "io.modelcontextprotocol/subscriptionId",
		ExtensionTasks:         "io.modelcontextprotocol/tasks",
		HeaderProtocolVersion:  "MCP-Protocol-Version",
		HeaderSessionID:        "Mcp-Session-Id",
		HeaderMethod:           "Mcp-Method",
		HeaderName:             "Mcp-Name",
		HeaderLastEventID:      "Last-Event-ID",
	} {
		if got != want {
			t.Errorf("%q, want %q", got, want)
		}
	}
}

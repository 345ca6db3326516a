package jsonrpc

import "testing"

// TestCodes pins every named code to the number its specification gives
// (JSON-RPC 2.0 §5.1; the MCP schemas' const values in
// schema/2025-11-25 and schema/2026-07-28; 2026-07-28 basic/index.mdx).
func TestCodes(t *testing.T) {
	tests := []struct {
		code, want int
		name       string
		reserved   bool
	}{
		{CodeParseError, -32700, "ParseError", false},
		{CodeInvalidRequest, -32600, "InvalidRequest", false},
		{CodeMethodNotFound, -32601, "MethodNotFound", false},
		{CodeInvalidParams, -32602, "InvalidParams", false},
		{CodeInternalError, -32603, "InternalError", false},
		{CodeResourceNotFound, -32002, "ResourceNotFound", false},
		{CodeURLElicitationRequired, -32042, "URLElicitationRequired", true},
		{CodeHeaderMismatch, -32020, "HeaderMismatch", true},
		{CodeMissingRequiredClientCapability, -32021, "MissingRequiredClientCapability", true},
		{CodeUnsupportedProtocolVersion, -32022, "UnsupportedProtocolVersion", true},
		{CodeServerError, -32000, "", false},
		{CodeSessionNotFound, -32001, "", false},
		{CodeRequestCancelled, -32800, "", false},
		{-32099, -32099, "", true},
		{-32019, -32019, "", false},
		{-32100, -32100, "", false},
	}
	for _, tt := range tests {
		if tt.code != tt.want {
			t.Errorf("%s = %d, want %d", tt.name, tt.code, tt.want)
		}
		if got := CodeName(tt.code); got != tt.name {
			t.Errorf("CodeName(%d) = %q, want %q", tt.code, got, tt.name)
		}
		if got := IsMCPReserved(tt.code); got != tt.reserved {
			t.Errorf("IsMCPReserved(%d) = %v, want %v", tt.code, got, tt.reserved)
		}
	}
	if MCPLegacyMin != MCPReservedMax+1 || ServerErrorMax != ReservedMax {
		t.Error("the MCP sub-ranges do not tile the server-error range")
	}
}

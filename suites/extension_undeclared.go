package suites

// EXTENSION-UNDECLARED: 2026-07-28. A client that does not declare an
// extension the server supports gets core behaviour or a rejection
// (versioning.mdx, "Extensions"); a rejection because processing needs a
// capability the client did not declare is a MissingRequiredClientCapability
// error listing it, 400 over HTTP (basic/index.mdx).
//
//	harness ──tools/call of the task role, clientCapabilities {} ──▶ server
//	        ◀── a core result, or -32021 {requiredCapabilities} (HTTP 400);
//	            never a task (the extension's result)

import (
	"encoding/json"
	"net/http"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/protocol"
	"github.com/mcp-conform/mcp-conform/reports"
)

var checkExtensionUndeclared = register(&Check{
	ID:    "EXTENSION-UNDECLARED",
	Title: "2026-07-28: a client that does not declare the tasks extension gets core behaviour or -32021 listing the missing capability, never a task",
	How: "2026-07-28, stdio and Streamable HTTP, task role. Calls the task role's tool (a tool the manifest says runs as a " +
		"task) with a well-formed _meta whose clientCapabilities declare nothing (no io.modelcontextprotocol/tasks " +
		"extension). The server may revert to core behaviour (a result whose resultType is complete or input_required) " +
		"or reject the request; a task (resultType task, or a result carrying a task) is the extension's behaviour toward a " +
		"client that does not support it and FAILs. A rejection must be the MissingRequiredClientCapabilityError: code " +
		"-32021 whose data.requiredCapabilities is a non-empty object, over HTTP with status 400; another error code FAILs " +
		"(the role's arguments are valid, so the only thing missing is the capability).",
	Rules: map[string]Rule{v20260728: {Level: reports.Must, Spec: versioningModern, Also: []string{basicModern},
		Clause: "If one party supports an extension but the other does not, the supporting party MUST either revert to core protocol behavior or reject the request with an appropriate error. [...] (basic) A server MUST NOT rely on capabilities the client has not declared. If processing a request requires a capability the client did not include in io.modelcontextprotocol/clientCapabilities, the server MUST return a MissingRequiredClientCapabilityError (-32021) whose data.requiredCapabilities lists the missing capabilities. On HTTP, the response status MUST be 400 Bad Request."}},
	Transports: []string{viaStdio, viaHTTP},
	Roles:      []string{"task"},
	Clauses:    []string{"ver#4", "basic#20"},
})

func registerExtensionUndeclared() {
	ginkgo.Describe("VERSION extensions (2026-07-28)", ginkgo.Label("area:version"), func() {
		define(checkExtensionUndeclared, extensionUndeclared)
	})
}

func extensionUndeclared(h *H) {
	v := h.Version()
	r := h.Role("task")
	args := map[string]any{}
	for k, val := range r.Arguments {
		args[k] = val
	}
	params := map[string]any{"name": r.Tool, "arguments": args, "_meta": modernMeta(v)}
	var a rpcAnswer
	if h.Target().Via() == protocol.TransportHTTP {
		c, _ := modernHTTP(h)
		a = modernPOST(h, c, "tools/call", params, http.Header{"Mcp-Protocol-Version": {v}, "Mcp-Method": {"tools/call"},
			"Mcp-Name": {clients.EncodeHeaderValue(r.Tool)}})
	} else {
		a = rawModern(h, "tools/call", params, v)
	}
	switch {
	case a.result != nil:
		var res struct {
			ResultType string          `json:"resultType"`
			Task       json.RawMessage `json:"task"`
			TaskID     json.RawMessage `json:"taskId"`
		}
		_ = json.Unmarshal(a.result, &res)
		if res.ResultType == "task" || res.Task != nil || res.TaskID != nil {
			h.Failf("tools/call of %s from a client that declares no extension got a task (%s): the server used the tasks extension with a client that does not support it, instead of core behaviour or a rejection", r.Tool, clip(a.result))
		}
		h.Notef("reverted to core behaviour: a result of resultType %q", res.ResultType)
	case a.err == nil:
		h.Failf("tools/call of %s from a client that declares no extension got %s", r.Tool, a)
	case a.err.Code != jsonrpc.CodeMissingRequiredClientCapability:
		h.Failf("tools/call of %s from a client that declares no extension got %s, want core behaviour or a MissingRequiredClientCapabilityError (-32021)", r.Tool, a)
	default:
		var data struct {
			Required map[string]json.RawMessage `json:"requiredCapabilities"`
		}
		if len(a.err.Data) == 0 || json.Unmarshal(a.err.Data, &data) != nil || len(data.Required) == 0 {
			h.Failf("tools/call of %s got %s without data.requiredCapabilities listing the missing capabilities: %s", r.Tool, a, clip(a.raw))
		}
		if a.status != 0 && a.status != http.StatusBadRequest {
			h.Failf("tools/call of %s got %s: -32021, but over HTTP the status must be 400", r.Tool, a)
		}
		h.Notef("rejected: %s, requiredCapabilities %s", a, clip(a.err.Data))
	}
}

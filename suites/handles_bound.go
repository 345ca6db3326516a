package suites

// 2026-07-28 security best practices, "State Handle Hijacking": a state
// handle is no credential, and it belongs to the principal it was minted
// for.
//
//	principal A ──tools/call TOOL──▶ server ──▶ handle h
//	principal A ──tools/call USE {param: h}──▶ served
//	principal B ──tools/call USE {param: h}──▶ refused (SHOULD)
//	no credential ──tools/call USE {param: h}──▶ refused (MUST NOT, requiresAuth)

import (
	"encoding/json"
	"net/http"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/internal/auth"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/reports"
)

var checkHandleBound = register(&Check{
	ID:    "HANDLE-BOUND",
	Title: "2026-07-28: a state handle is bound to the principal it was minted for and is not a credential",
	How: "2026-07-28, Streamable HTTP; needs the manifest's handle role and the auth: credentials of two principals (the " +
		"level comes from those declared contracts). Calls the role's tool with the first principal's credential and reads " +
		"the handle from the structured result's member field; calls use with it as param as that principal (it must be " +
		"served: otherwise ERROR), then as the second principal: that call must be refused (an HTTP 4xx, a JSON-RPC error, " +
		"or a tool error result), else WARN (SHOULD bind handles to the authenticated user and reject any other principal). " +
		"With requiresAuth: true it also calls use with the handle and no credential at all: served FAILs (MUST NOT treat " +
		"possession of a state handle as authentication).",
	Rules: sameRule(Rule{Level: reports.Must, Spec: bestPractices,
		Clause: "MCP servers MUST NOT treat possession of a state handle as authentication. [...] MCP servers SHOULD bind handles server-side to the authenticated user"},
		v20260728),
	Transports: []string{viaHTTP},
	Roles:      []string{"handle"},
	Clauses:    []string{"sec#9", "sec#11"},
})

func registerHandlesBound() {
	ginkgo.Describe("SECURITY state handle binding (2026-07-28)", ginkgo.Label("area:security"), func() {
		define(checkHandleBound, handleBound)
	})
}

// handleCall is one 2026-07-28 tools/call of tool with args, sent with
// exactly the credential headers given (none: no credential), and its
// answer: the response to its id on the call's own stream, wherever it
// comes there (a server may send requests and notifications first), or,
// when none came, the HTTP status and the body that did.
func handleCall(h *H, c *HConn, tool string, args map[string]any, cred map[string]string) rpcAnswer {
	hd := http.Header{}
	if len(cred) == 0 {
		hd.Set(auth.Anonymous, "1") // the proxy adds none of the run's credentials
	}
	for k, val := range cred {
		hd.Set(k, val)
	}
	ctx, cancel := h.Op()
	defer cancel()
	call, err := c.W.StartHeader(ctx, jsonrpc.StringID(unique("handle")), "tools/call", map[string]any{"name": tool, "arguments": args}, hd)
	if err != nil {
		h.FailServer("tools/call of %s: %v%s", tool, err, c.ExitHint())
	}
	defer call.Close()
	m, err := call.Wait(ctx)
	if err != nil {
		return rpcAnswer{status: call.Status(), raw: call.Body()}
	}
	return parseAnswer(call.Status(), m.Raw)
}

// served reports whether a tools/call answer is a result that is not a
// tool error.
func served(a rpcAnswer) bool {
	if a.status/100 != 2 || a.err != nil || a.result == nil {
		return false
	}
	var r struct {
		IsError bool `json:"isError"`
	}
	_ = json.Unmarshal(a.result, &r)
	return !r.IsError
}

// refused reports whether a tools/call answer refuses the call: an HTTP
// 4xx, a JSON-RPC error, or a tool error result.
func refused(a rpcAnswer) bool {
	return a.status/100 == 4 || a.err != nil || (a.result != nil && !served(a))
}

func handleBound(h *H) {
	if len(h.Target().Auth) < 2 {
		h.Skip("the target manifest declares no credentials for two principals (auth): handle binding cannot be tried")
	}
	a, b := h.Target().Auth[0], h.Target().Auth[1]
	c, _ := modernHTTP(h)
	r := h.Role("handle")
	args := r.Arguments
	if args == nil {
		args = map[string]any{}
	}
	minted := handleCall(h, c, r.Tool, args, a)
	if !served(minted) {
		h.Errorf("the handle role's tool %s refused the first principal's call, so the check cannot run: %s", r.Tool, minted)
	}
	var out struct {
		Structured map[string]json.RawMessage `json:"structuredContent"`
	}
	var handle string
	if json.Unmarshal(minted.result, &out) != nil || json.Unmarshal(out.Structured[r.Field], &handle) != nil || handle == "" {
		h.Errorf("the result of %s has no string member %q (the handle role's field): %s", r.Tool, r.Field, clip(minted.raw))
	}
	use := map[string]any{r.Param: handle}
	if own := handleCall(h, c, r.Use, use, a); !served(own) {
		h.Errorf("%s refused the handle %q for the principal it was minted for, so the role does not work as declared: %s (%s)", r.Use, handle, own, clip(own.raw))
	}
	if h.Target().RequiresAuth {
		anon := handleCall(h, c, r.Use, use, nil)
		if served(anon) {
			h.FailMust("%s served the handle %q to a request with no credential at all: possession of a state handle was treated as authentication (%s)", r.Use, handle, clip(anon.raw))
		}
		if !refused(anon) {
			h.Errorf("%s with the handle %q and no credential got neither a result nor a refusal, so the check cannot judge it: %s (%s)", r.Use, handle, anon, clip(anon.raw))
		}
	}
	other := handleCall(h, c, r.Use, use, b)
	if served(other) {
		h.Warnf("%s served the first principal's handle %q to the second principal: handles are not bound to the authenticated user (%s)", r.Use, handle, clip(other.raw))
	}
	if !refused(other) {
		h.Errorf("%s with the handle %q as the second principal got neither a result nor a refusal, so the check cannot judge it: %s (%s)", r.Use, handle, other, clip(other.raw))
	}
	how := other.String()
	if other.err == nil && other.result != nil {
		how += " with isError: true (a tool error)"
	}
	h.Notef("the handle %q of the first principal: served to it; the second principal's call was refused: %s", handle, how)
}

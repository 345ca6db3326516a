package suites

// The second half of LIFECYCLE-INITIALIZE-INFO: the capabilities a server
// responds with are its own, so each one it declares whose feature has a
// method of its own is implemented — the method is not unknown to it
// (-32601 Method not found). What the method answers beyond that is its
// own check's business (TOOLS-*, LOGGING-*, PAGINATION-*).

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// capabilityMethod is a server capability and a request of its feature
// that any server declaring it implements.
type capabilityMethod struct {
	capability, method string
	params             map[string]any
}

// capabilityMethods are the 2025 server capabilities with a method of
// their own, each with harmless params (an error about them, e.g. an
// unknown prompt to complete, still shows the method implemented).
var capabilityMethods = []capabilityMethod{
	{"tools", "tools/list", map[string]any{}},
	{"prompts", "prompts/list", map[string]any{}},
	{"resources", "resources/list", map[string]any{}},
	{"logging", "logging/setLevel", map[string]any{"level": "error"}},
	{"completions", "completion/complete", map[string]any{
		"ref":      map[string]any{"type": "ref/prompt", "name": "mcp-conform-no-such-prompt"},
		"argument": map[string]any{"name": "mcp-conform", "value": ""}}},
	{"tasks.list", "tasks/list", map[string]any{}},
}

// declares reports whether capabilities hold the capability at path
// ("tools", "tasks.list").
func declares(caps json.RawMessage, path string) bool {
	for _, key := range strings.Split(path, ".") {
		var obj map[string]json.RawMessage
		if json.Unmarshal(caps, &obj) != nil {
			return false
		}
		v, ok := obj[key]
		if !ok {
			return false
		}
		caps = v
	}
	return true
}

// declaredImplemented FAILs a capability the negotiated session declares
// whose method the server answers with -32601 Method not found; it returns
// the methods it asked.
func declaredImplemented(h *H) []string {
	var asked []string
	onEither(h, func(r rpc) {
		for _, cm := range capabilityMethods {
			if !declares(r.sess.Capabilities, cm.capability) {
				continue
			}
			m := r.call(cm.method, cm.params, h.Cfg().OpTimeout)
			if e := m.Env.Error; e != nil && e.Code == jsonrpc.CodeMethodNotFound {
				h.Failf("the server declares the %s capability but answers %s, its method, with -32601 Method not found: the capability is not its own (%s)",
					cm.capability, cm.method, clip(m.Raw))
			}
			asked = append(asked, cm.method)
		}
	})
	return slices.Clip(asked)
}

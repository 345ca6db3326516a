package suites

// LIFECYCLE-INITIALIZE-INFO: the initialize result carries the server's
// own capabilities and information (lifecycle.mdx, "Initialization": "The
// server MUST respond with its own capabilities and information").
//
// The schema (InitializeResult) already requires capabilities and
// serverInfo with a name and a version (SCHEMA-VALID); what the sentence
// adds is "own": the objects are the server's, not the client's echoed
// back. The check sends an initialize whose clientInfo and capabilities
// are unmistakably its own (a unique name and version; an experimental
// capability under a unique key) and fails a result that hands them back.
// Then the capabilities declared must be implemented: a declared feature's
// method answered "Method not found" (lifecycle_capabilities.go).

import (
	"bytes"
	"encoding/json"

	"github.com/mcp-conform/mcp-conform/reports"
)

var checkInitializeInfo = register(&Check{
	ID:    "LIFECYCLE-INITIALIZE-INFO",
	Title: "the initialize result carries the server's own capabilities and serverInfo, not the client's",
	How: "2025 versions, stdio and Streamable HTTP. Sends initialize in the run's version on a new connection (stdio: a " +
		"new server process; HTTP: a new session) with a clientInfo of a unique name and version and client capabilities " +
		"(roots, sampling, elicitation) holding an experimental member under a unique key. The result must carry " +
		"capabilities (an object) and serverInfo (an object with string name and version), and neither may be the " +
		"client's handed back: a serverInfo with the client's unique name or version, or capabilities equal to the " +
		"client's or holding its unique experimental key, FAILs. Then, in a negotiated session, each capability the " +
		"server declares there whose feature has a method of its own (tools: tools/list, prompts: prompts/list, " +
		"resources: resources/list, logging: logging/setLevel, completions: completion/complete, tasks.list: tasks/list) is asked for once: " +
		"-32601 Method not found says the declared capability is not the server's own (FAIL); any other answer is " +
		"left to the feature's checks.",
	Rules: sameRule(Rule{Level: reports.Must, Spec: lifecyclePage,
		Clause: "The server MUST respond with its own capabilities and information"},
		legacyVersions...),
	Transports: []string{viaStdio, viaHTTP},
	Clauses:    []string{"lc#1"},
})

func initializeInfo(h *H) {
	tag := unique("client")
	clientInfo := map[string]any{"name": "mcp-conform-" + tag, "version": "0.0.0-" + tag}
	marker := "mcp-conform/" + tag
	caps := map[string]any{
		"roots":        map[string]any{"listChanged": true},
		"sampling":     map[string]any{},
		"elicitation":  map[string]any{},
		"experimental": map[string]any{marker: map[string]any{}},
	}
	v := h.Version()
	a := bareInitialize(h, lazyHTTP(h), map[string]any{"protocolVersion": v, "capabilities": caps, "clientInfo": clientInfo},
		"initialize asking for "+v)
	if a.err != nil || a.result == nil {
		h.Failf("initialize asking for %s got %s, want a result with the server's capabilities and serverInfo: %s", v, a, clip(a.raw))
	}
	var r struct {
		Capabilities json.RawMessage `json:"capabilities"`
		ServerInfo   json.RawMessage `json:"serverInfo"`
	}
	if json.Unmarshal(a.result, &r) != nil {
		h.Failf("the initialize result is not an object: %s", clip(a.raw))
	}
	var capObj map[string]json.RawMessage
	if len(r.Capabilities) == 0 || json.Unmarshal(r.Capabilities, &capObj) != nil || capObj == nil {
		h.Failf("the initialize result carries no capabilities object (%s): %s", rawOrNone(r.Capabilities), clip(a.raw))
	}
	var info struct {
		Name    any `json:"name"`
		Version any `json:"version"`
	}
	if len(r.ServerInfo) == 0 || json.Unmarshal(r.ServerInfo, &info) != nil || bytes.Equal(bytes.TrimSpace(r.ServerInfo), []byte("null")) {
		h.Failf("the initialize result carries no serverInfo object (%s): %s", rawOrNone(r.ServerInfo), clip(a.raw))
	}
	name, okName := info.Name.(string)
	version, okVersion := info.Version.(string)
	if !okName || !okVersion {
		h.Failf("the initialize result's serverInfo lacks a string name and version: %s", r.ServerInfo)
	}
	if name == clientInfo["name"] || version == clientInfo["version"] {
		h.Failf("the initialize result's serverInfo %s is the client's clientInfo handed back (name %q, version %q), not the server's own information",
			r.ServerInfo, clientInfo["name"], clientInfo["version"])
	}
	sent, _ := json.Marshal(caps)
	if jsonEqual(sent, r.Capabilities) {
		h.Failf("the initialize result's capabilities %s are the client's capabilities handed back, not the server's own", r.Capabilities)
	}
	var exp map[string]json.RawMessage
	if raw, ok := capObj["experimental"]; ok && json.Unmarshal(raw, &exp) == nil {
		if _, echoed := exp[marker]; echoed {
			h.Failf("the initialize result's capabilities hold the client's own experimental capability %q (sent only by the client): %s", marker, r.Capabilities)
		}
	}
	h.Notef("serverInfo %s; capabilities %s", r.ServerInfo, clip(r.Capabilities))
	h.Notef("implemented, as declared: %v", declaredImplemented(h))
}

// rawOrNone names a raw JSON value, or "none" when it is absent.
func rawOrNone(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "none"
	}
	return string(raw)
}

// jsonEqual reports whether two JSON documents hold the same value.
func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

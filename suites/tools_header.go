package suites

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/mcp-conform/mcp-conform/reports"
)

// TOOLS-HEADER-SENSITIVE: 2026-07-28 tools.mdx, "x-mcp-header": a parameter
// mirrored into an Mcp-Param-{name} header is visible to every network
// intermediary, so a sensitive one is not marked (registered with the
// other TOOLS checks in tools_schema.go).
var checkToolsHeaderSensitive = register(&Check{
	ID:    "TOOLS-HEADER-SENSITIVE",
	Title: "2026-07-28: no tool marks a sensitive parameter (password, API key, token, PII) with x-mcp-header",
	How: "Lists every tool (following nextCursor) and reads the properties of each inputSchema reachable from its root " +
		"through properties (nested objects included) that carry an x-mcp-header annotation. One whose property name or " +
		"header name names a secret or personal data — a word of password, passwd, secret, token, api key, apikey, " +
		"credential, authorization, cookie, session, private key, access key, ssn, email, phone, credit card, card number (split on _, -, . and " +
		"camelCase) — or whose schema says format: password or writeOnly: true WARNs, the tool and property named. " +
		"No x-mcp-header at all: PASS, noted.",
	Rules: map[string]Rule{v20260728: {Level: reports.Should, Spec: toolsModern,
		Clause: "Server developers SHOULD NOT mark sensitive parameters (passwords, API keys, tokens, PII) with x-mcp-header, as header values are visible to network intermediaries."}},
	Transports: []string{viaStdio, viaHTTP},
	Clauses:    []string{"tl#16"},
	Limits:     map[string]string{"tl#16": "sensitive is read from the parameter's and header's names and format: password / writeOnly"},
})

// sensitiveWords are the words (of a name split into words) that make a
// parameter sensitive; sensitivePairs the two-word ones.
var (
	sensitiveWords = map[string]bool{
		"password": true, "passwd": true, "passphrase": true, "secret": true, "token": true, "apikey": true,
		"credential": true, "credentials": true, "authorization": true, "cookie": true, "session": true,
		"ssn": true, "email": true, "phone": true,
	}
	sensitivePairs = map[string]bool{"api key": true, "private key": true, "access key": true, "credit card": true, "card number": true}
	camelBoundary  = regexp.MustCompile(`([a-z0-9])([A-Z])`)
)

// sensitiveName reports whether a parameter or header name names a secret
// or personal data, and the word that does.
func sensitiveName(name string) (string, bool) {
	s := camelBoundary.ReplaceAllString(name, "$1 $2")
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return r == '_' || r == '-' || r == '.' || r == ' ' })
	for i, w := range words {
		if sensitiveWords[w] {
			return w, true
		}
		if i+1 < len(words) && sensitivePairs[w+" "+words[i+1]] {
			return w + " " + words[i+1], true
		}
	}
	return "", false
}

// headerParam is one property annotated with x-mcp-header.
type headerParam struct {
	path, header string
	schema       map[string]json.RawMessage
}

// headerParams lists the properties of schema reachable through
// properties (nested objects too) that carry x-mcp-header.
func headerParams(prefix string, raw json.RawMessage, depth int) []headerParam {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if depth > 8 || json.Unmarshal(raw, &s) != nil {
		return nil
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []headerParam
	for _, n := range names {
		var p map[string]json.RawMessage
		if json.Unmarshal(s.Properties[n], &p) != nil {
			continue
		}
		path := n
		if prefix != "" {
			path = prefix + "." + n
		}
		if h, ok := p["x-mcp-header"]; ok {
			var header string
			_ = json.Unmarshal(h, &header)
			out = append(out, headerParam{path: path, header: header, schema: p})
		}
		out = append(out, headerParams(path, s.Properties[n], depth+1)...)
	}
	return out
}

func toolsHeaderSensitive(h *H) {
	recallToolsList(h)
	onEither(h, func(r rpc) {
		tools := allTools(r.walkTools())
		var bad []string
		marked := 0
		for _, t := range tools {
			for _, p := range headerParams("", t.Def.InputSchema, 0) {
				marked++
				last := p.path[strings.LastIndex(p.path, ".")+1:]
				var format string
				var writeOnly bool
				_ = json.Unmarshal(p.schema["format"], &format)
				_ = json.Unmarshal(p.schema["writeOnly"], &writeOnly)
				why := ""
				if w, ok := sensitiveName(last); ok {
					why = fmt.Sprintf("its name has %q", w)
				} else if w, ok := sensitiveName(p.header); ok {
					why = fmt.Sprintf("its header name has %q", w)
				} else if format == "password" {
					why = "its schema says format: password"
				} else if writeOnly {
					why = "its schema says writeOnly: true"
				}
				if why != "" {
					bad = append(bad, fmt.Sprintf("tool %s marks the parameter %s with x-mcp-header %q (Mcp-Param-%s), and %s", t.Name, p.path, p.header, p.header, why))
				}
			}
		}
		if len(bad) > 0 {
			h.Warnf("%s: header values are visible to network intermediaries", strings.Join(bad, "; "))
		}
		if marked == 0 {
			h.Notef("no tool of %d marks a parameter with x-mcp-header", len(tools))
			return
		}
		h.Notef("%d parameters marked with x-mcp-header, none named as sensitive", marked)
	})
}

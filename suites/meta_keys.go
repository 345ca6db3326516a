package suites

// The _meta key names a server writes (basic/index.mdx, "_meta"), and in
// 2026-07-28 the extension identifiers it advertises, which follow the same
// rules (versioning.mdx, "Extensions").

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/internal/schema"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/reports"
)

const metaKeyClause = "Prefix: If specified, MUST be a series of labels separated by dots (.), followed by a slash (/). Labels MUST start with a letter and end with a letter or digit; interior characters can be letters, digits, or hyphens (-). [...] Name: Unless empty, MUST begin and end with an alphanumeric character ([a-z0-9A-Z])."

var checkMetaKeys = register(&Check{
	ID:    "SCHEMA-META-KEYS",
	Title: "every _meta key the server writes is a well-formed name (optional dotted-label prefix and slash, alphanumeric ends); 2026-07-28 extension identifiers too",
	How: "stdio and Streamable HTTP, every version. Over the handshake, a tools/list and (when the manifest declares the " +
		"slow role) a slow call with a progress token, reads every _meta object in every message the server sent, at any " +
		"depth, and judges each key: a prefix must be dot-separated labels (a letter first, a letter or digit last, " +
		"letters, digits and hyphens between) ending in a slash; a non-empty name must begin and end with a letter or " +
		"digit, with letters, digits, hyphens, underscores and dots between. In 2026-07-28 the keys of the server's " +
		"capabilities.extensions (extension identifiers) are judged by the same rules.",
	Rules: merge(
		sameRule(Rule{Level: reports.Must, Spec: basicLegacy, Clause: metaKeyClause}, legacyVersions...),
		map[string]Rule{v20260728: {Level: reports.Must, Spec: basicModern, Also: []string{versioningModern},
			Clause: metaKeyClause + " (versioning: Extension identifiers MUST follow the _meta key naming rules.)"}},
	),
	Transports: []string{viaStdio, viaHTTP},
	Clauses:    []string{"basic#11", "ver#3"},
	Limits:     map[string]string{"basic#11": "the messages of the handshake, a tools/list and a slow call"},
})

func registerMetaKeys() {
	ginkgo.Describe("SCHEMA _meta key names", ginkgo.Label("area:schema"), func() {
		define(checkMetaKeys, metaKeys)
	})
}

// metaKeyOK reports whether key is a well-formed _meta key name (the rule
// SCHEMA-VALID also applies to every message: internal/schema).
func metaKeyOK(key string) bool { return schema.MetaKeyOK(key) }

// badMetaKeys returns where a _meta object of v holds a malformed key
// ("at.path._meta: key"); the walk is SCHEMA-VALID's (internal/schema).
func badMetaKeys(v any) []string {
	var out []string
	schema.BadMetaKeys(v, func(path []any, key string) {
		at := ""
		for _, e := range path {
			switch e := e.(type) {
			case string:
				at += "." + e
			case int:
				at += fmt.Sprintf("[%d]", e)
			}
		}
		out = append(out, fmt.Sprintf("%s._meta: %q", at, key))
	})
	return out
}

func metaKeys(h *H) {
	c := connectMsg(h)
	var w interface {
		Call(ctx context.Context, method string, params map[string]any) (clients.Message, error)
	}
	switch m := c.(type) {
	case stdioMsg:
		w = m.W
	case *httpMsg:
		w = m.W
	}
	ctx, cancel := h.Op()
	lm, err := w.Call(ctx, "tools/list", nil)
	cancel()
	switch {
	case err != nil:
		h.FailServer("tools/list got no answer: %v%s", err, c.exitHint())
	case lm.Env.Kind != jsonrpc.Response:
		// A server without tools may refuse it: the keys of its error
		// answer are judged with the rest.
		h.Notef("tools/list answered %s", clip(lm.Raw))
	}
	did := "the handshake and a tools/list"
	if h.Role("slow").Tool != "" {
		p := c.startRole("slow", jsonrpc.StringID(unique("meta-keys-call")), unique("meta-keys-tok"))
		c.await(p, "the slow call")
		did += " and a slow call"
	}
	var bad []string
	n := 0
	for _, m := range c.since(0) {
		var v any
		if m.Env.Kind == jsonrpc.Invalid || json.Unmarshal(m.Raw, &v) != nil {
			continue
		}
		n++
		for _, b := range badMetaKeys(v) {
			bad = append(bad, fmt.Sprintf("%s (in %s)", strings.TrimPrefix(b, "."), metaWhere(m)))
		}
	}
	if s := c.session(); s.Era == clients.EraModern && len(s.Capabilities) > 0 {
		var caps struct {
			Extensions map[string]json.RawMessage `json:"extensions"`
		}
		if json.Unmarshal(s.Capabilities, &caps) == nil {
			ids := make([]string, 0, len(caps.Extensions))
			for id := range caps.Extensions {
				ids = append(ids, id)
			}
			slices.Sort(ids)
			for _, id := range ids {
				if !metaKeyOK(id) {
					bad = append(bad, fmt.Sprintf("extension identifier %q (server/discover capabilities.extensions)", id))
				}
			}
		}
	}
	if len(bad) > 0 {
		if len(bad) > 5 {
			bad = append(bad[:5], fmt.Sprintf("and %d more", len(bad)-5))
		}
		h.Failf("%d malformed _meta key name(s): %s", len(bad), strings.Join(bad, "; "))
	}
	h.Notef("every _meta key of %d messages (%s) well formed", n, did)
}

// metaWhere names a message for a report: its method or the id it answers.
func metaWhere(m clients.Message) string {
	if m.Env.Kind.IsReply() {
		return "the answer to " + m.Env.ID.String()
	}
	return m.Env.Method
}

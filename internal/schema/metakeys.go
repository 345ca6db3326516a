package schema

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// The _meta key names of basic/index.mdx ("_meta", "General fields"): an
// optional prefix of dot-separated labels (a letter first, a letter or
// digit last, letters, digits and hyphens between) and a slash, then a
// name that, unless empty, begins and ends with a letter or digit (letters,
// digits, hyphens, underscores and dots between). No version's schema.json
// expresses it (its _meta is an object of any keys).
var (
	metaLabel = `[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?`
	metaKeyRE = regexp.MustCompile(`^(?:` + metaLabel + `(?:\.` + metaLabel + `)*/)?(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?$`)
)

// MetaKeyOK reports whether key is a well-formed _meta key name.
func MetaKeyOK(key string) bool { return metaKeyRE.MatchString(key) }

// metaKeyRules returns a violation of basic#11 (MUST) for each malformed
// key of each _meta object in v (a decoded message), at any depth, in a
// stable order.
func metaKeyRules(v any) []Violation {
	var out []Violation
	BadMetaKeys(v, func(path []any, key string) {
		ptr := ""
		for _, e := range path {
			switch e := e.(type) {
			case string:
				ptr += "/" + escapePointer(e)
			case int:
				ptr += fmt.Sprintf("/%d", e)
			}
		}
		out = append(out, Violation{Pointer: ptr + "/_meta", Clause: "basic#11", Level: "MUST",
			Complaint: fmt.Sprintf("_meta key %q is not a well-formed name (an optional prefix of dot-separated labels, each a letter first and a letter or digit last, and a slash; a name beginning and ending with a letter or digit)", key)})
	})
	return out
}

// BadMetaKeys calls bad for each malformed key of each _meta object in v
// (a decoded JSON value), at any depth, in a stable order (member names
// sorted): path leads to the object that holds that _meta, each element a
// member name (string) or an array index (int).
func BadMetaKeys(v any, bad func(path []any, key string)) {
	walkMetaKeys(v, nil, bad)
}

func walkMetaKeys(v any, path []any, bad func([]any, string)) {
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if meta, ok := t[k].(map[string]any); ok && k == "_meta" {
				mk := make([]string, 0, len(meta))
				for key := range meta {
					mk = append(mk, key)
				}
				slices.Sort(mk)
				for _, key := range mk {
					if !MetaKeyOK(key) {
						bad(path, key)
					}
				}
			}
			walkMetaKeys(t[k], append(slices.Clip(path), k), bad)
		}
	case []any:
		for i, e := range t {
			walkMetaKeys(e, append(slices.Clip(path), i), bad)
		}
	}
}

// escapePointer escapes a member name for a JSON pointer (RFC 6901).
func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

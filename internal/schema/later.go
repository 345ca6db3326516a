package schema

import "slices"

// laterDefining returns the oldest protocol version newer than v's whose
// schema defines method as a server-to-client message of kind, or "" when
// none does: a server that sends it in v's session uses a later version's
// message (lifecycle.mdx, "Operation": both parties MUST respect the
// negotiated protocol version). The later schemas are compiled on first
// use only (For caches them).
func (v *Validator) laterDefining(method string, kind Kind) string {
	i := slices.Index(versions, v.version) // newest first
	for j := i - 1; j >= 0; j-- {
		lv, err := For(versions[j])
		if err != nil {
			continue
		}
		if m, ok := lv.methods[method]; ok && m.Kind == kind && m.FromServer {
			return versions[j]
		}
	}
	return ""
}

package suites

import "strings"

// sameRule gives one rule to every listed version.
func sameRule(r Rule, versions ...string) map[string]Rule {
	m := make(map[string]Rule, len(versions))
	for _, v := range versions {
		rr := r
		rr.Spec = strings.ReplaceAll(r.Spec, "VERSION", v)
		rr.Also = nil
		for _, a := range r.Also {
			rr.Also = append(rr.Also, strings.ReplaceAll(a, "VERSION", v))
		}
		m[v] = rr
	}
	return m
}

// merge joins rule maps.
func merge(ms ...map[string]Rule) map[string]Rule {
	out := map[string]Rule{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

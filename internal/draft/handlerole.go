package draft

import (
	"fmt"
	"strings"
)

// handleMissing is why a draft has no handle role.
const handleMissing = "no tool that is not read-only returns an id-like string (cart_id, workflow_id, handle ...) in its outputSchema " +
	"that a read-only tool takes back as a required argument of the same name; HANDLE-ENTROPY needs a state handle the server mints"

// idLike reports whether a property name looks like a minted handle.
func idLike(name string) bool {
	n := strings.ToLower(name)
	return strings.HasSuffix(n, "_id") || strings.HasSuffix(n, "id") || strings.Contains(n, "handle")
}

// handleCandidates are the pairs of a tool that is not read-only and whose
// outputSchema has an id-like string property, and a read-only tool that
// requires an argument of that name: a state handle minted by one and
// passed back to the other (2026-07-28 security best practices, "State
// Handle Hijacking"). The draft calls neither (minting is a write): a
// person confirms the choice.
func handleCandidates(tools []Tool) []*candidate {
	var cs []*candidate
	for _, mint := range tools {
		if mint.ReadOnly || mint.TaskSupport == "required" {
			continue
		}
		for _, out := range mint.Output {
			if out.Type != "string" || !idLike(out.Name) {
				continue
			}
			for _, use := range tools {
				in, ok := use.Prop(out.Name)
				if use.Name == mint.Name || !use.ReadOnly || !ok || !in.Required || in.Type != "string" {
					continue
				}
				c := &candidate{Proposal: &Proposal{Role: "handle", Tool: mint.Name, Field: out.Name, Use: use.Name, Param: out.Name, Enabled: true}, score: 1}
				c.Why = append(c.Why, fmt.Sprintf("not read-only; its outputSchema has the string %s, which the read-only %s requires as an argument", out.Name, use.Name))
				args, notes := fillRequired(mint)
				c.Arguments = args
				c.Check = append(c.Check, fmt.Sprintf("that %s mints a state handle in %s that %s takes back (the draft called neither); "+
					"HANDLE-ENTROPY calls %s nine times", mint.Name, out.Name, use.Name, mint.Name))
				c.Check = append(c.Check, notes...)
				cs = append(cs, c)
			}
		}
	}
	return best(cs)
}

package harness

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcp-conform/mcp-conform/reports"
)

// passiveGroup is the check runs a passive HTTP check (HTTP-UTF8,
// HTTP-RESPONSE-CONTENT-TYPE) judged in one transport, version and
// target, with the result they make: PASS under the check's rule there
// until a finding says otherwise.
type passiveGroup struct {
	runs []schemaRun
	res  reports.Check
}

// groupPassive groups the runs of check c that judged it (on) by
// transport, version and target, in the order they first came; a version
// without a rule of c gives no group.
func groupPassive(c *Check, runs []schemaRun, on func(schemaRun) bool) []passiveGroup {
	type key struct{ transport, version, target string }
	var order []key
	by := map[key][]schemaRun{}
	for _, r := range runs {
		if !on(r) || !slices.Contains(c.Transports, r.Transport) {
			continue
		}
		k := key{r.Transport, r.Version, r.Target}
		if _, seen := by[k]; !seen {
			order = append(order, k)
		}
		by[k] = append(by[k], r)
	}
	var out []passiveGroup
	for _, k := range order {
		rule, ok := c.RuleOn(k.transport, k.version)
		if !ok {
			continue
		}
		out = append(out, passiveGroup{runs: by[k], res: reports.Check{ID: c.ID, Title: c.Title, Level: rule.Level,
			Spec: rule.Pages(), Clause: rule.Clause, Source: rule.SourceOf(), Clauses: slices.Clone(c.Clauses),
			Transport: k.transport, ProtocolVersion: k.version, Status: reports.Pass}})
	}
	return out
}

// findingsReason is a FAIL's reason: the head, then the first five
// findings, and how many more the transcript lists.
func findingsReason(head string, lines []string) string {
	const show = 5
	shown := lines
	if len(shown) > show {
		shown = shown[:show]
	}
	r := head + ": " + strings.Join(shown, " | ")
	if len(lines) > show {
		r += fmt.Sprintf(" | ... and %d more (the transcript lists them all)", len(lines)-show)
	}
	return r
}

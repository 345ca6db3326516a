package draft

import "strings"

// logWords, in a tool's name, say it logs.
var logWords = []string{"log", "logs", "logging", "logger"}

// logMissing is why a draft has no log role.
const logMissing = "no read-only tool's name or description says it logs (log, logging, notifications/message ...); " +
	"the LOGGING checks need a call that sends notifications/message once the client asked for log messages"

// logCandidates are the read-only tools whose name or description says
// they log: the log role of the LOGGING checks is a tool that sends
// notifications/message while it handles a call once the client asked for
// log messages (2025: logging/setLevel; 2026-07-28: _meta logLevel), which
// tools/list does not tell. The draft calls none of them: a person
// confirms the choice.
func logCandidates(tools []Tool) []*candidate {
	var cs []*candidate
	for _, t := range tools {
		if !t.ReadOnlyHinted() || t.TaskSupport == "required" {
			continue
		}
		named := hasWord(words(t.Name), logWords...)
		described := hasWord(words(t.Description), logWords...) || strings.Contains(strings.ToLower(t.Description), "notifications/message")
		if !named && !described {
			continue
		}
		c := &candidate{Proposal: &Proposal{Role: "log", Tool: t.Name, Enabled: true}, score: 1}
		if named {
			c.score = 2
		}
		c.Why = append(c.Why, "annotated readOnlyHint: true", "its name or description says it logs")
		args, notes := fillRequired(t)
		c.Arguments = args
		c.Check = append(c.Check, "that a call sends notifications/message once the client asked for log messages (the draft did not call it)")
		c.Check = append(c.Check, notes...)
		cs = append(cs, c)
	}
	return best(cs)
}

package draft

import "strings"

// changeWords and toolWords, together in a tool's name, say it changes the
// tool list (change_tools, add_tool, toggle_tools ...).
var (
	changeWords = []string{"change", "changes", "add", "remove", "toggle", "register", "unregister", "enable", "disable", "install"}
	toolWords   = []string{"tool", "tools"}
)

// listChangedMissing is why a draft has no listChanged role.
const listChangedMissing = "no tool's name or description says it changes the tool list (change_tools, add_tool, notifications/tools/list_changed ...); " +
	"TOOLS-LIST-CHANGED and the SUBSCRIPTION checks of tools-list changes need a call that adds or removes a tool"

// listChangedCandidates are the tools whose name (a change word with a
// tool word) or description (notifications/tools/list_changed) says they
// change the tool list: the listChanged role is a tool whose call adds or
// removes a tool of tools/list, which the list does not tell. The draft
// calls none of them (a change of the list is not read-only): a person
// confirms the choice.
func listChangedCandidates(tools []Tool) []*candidate {
	var cs []*candidate
	for _, t := range tools {
		if t.TaskSupport == "required" {
			continue
		}
		w := words(t.Name)
		named := hasWord(w, changeWords...) && hasWord(w, toolWords...)
		described := strings.Contains(strings.ToLower(t.Description), "tools/list_changed")
		if !named && !described {
			continue
		}
		c := &candidate{Proposal: &Proposal{Role: "listChanged", Tool: t.Name, Enabled: true}, score: 1}
		if named {
			c.score = 2
		}
		c.Why = append(c.Why, "its name or description says it changes the tool list")
		args, notes := fillRequired(t)
		c.Arguments = args
		c.Check = append(c.Check, "that a call adds or removes a tool of tools/list for every client and sends "+
			"notifications/tools/list_changed (the draft did not call it; the checks call it twice, to restore the list)")
		c.Check = append(c.Check, notes...)
		cs = append(cs, c)
	}
	return best(cs)
}

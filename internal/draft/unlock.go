package draft

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mcp-conform/mcp-conform/protocol"
	"github.com/mcp-conform/mcp-conform/suites"
)

// CheckStatus is what a role set does for one check of the catalog.
type CheckStatus struct {
	// ID is the check's id; Roles the roles it needs.
	ID    string
	Roles []string
	// Unlocked is true when the target declares every role the check
	// needs.
	Unlocked bool
	// Missing lists the roles the target does not declare.
	Missing []string
	// Note says what else the check needs that a role set does not say
	// (a probe, restart, a version), or "".
	Note string
}

// Unlocked lists the ids of the checks of catalog that run on transport
// and need at least one role, all of which roles declares.
func Unlocked(catalog []*suites.Check, transport string, roles []string) []string {
	var out []string
	for _, c := range catalog {
		if len(c.Roles) == 0 || !slices.Contains(c.Transports, transport) {
			continue
		}
		if missing(c.Roles, roles) == nil {
			out = append(out, c.ID)
		}
	}
	return out
}

func missing(need, have []string) []string {
	var out []string
	for _, r := range need {
		if !slices.Contains(have, r) {
			out = append(out, r)
		}
	}
	return out
}

// Unlocks says, for each check of catalog that runs on the draft's
// transport and needs a role, whether the draft unlocks it, and what else
// it needs.
func (d *Draft) Unlocks(catalog []*suites.Check) []CheckStatus {
	roles := d.RoleSet()
	var out []CheckStatus
	for _, c := range catalog {
		if len(c.Roles) == 0 || !slices.Contains(c.Transports, d.Transport) {
			continue
		}
		st := CheckStatus{ID: c.ID, Roles: c.Roles, Missing: missing(c.Roles, roles)}
		st.Unlocked = st.Missing == nil
		if st.Unlocked {
			st.Note = d.beyondRoles(c)
		}
		out = append(out, st)
	}
	return out
}

// beyondRoles is what an unlocked check still needs that its roles do not
// say: read from what the checks' bodies SKIP on (see suites), by id.
func (d *Draft) beyondRoles(c *suites.Check) string {
	var notes []string
	if _, ok := c.Rules[d.Version]; d.Version != "" && !ok {
		notes = append(notes, fmt.Sprintf("not in %s, the version the server negotiated by default (run with --spec %s)", d.Version, c.Versions()[0]))
	}
	slow, flood := d.Proposal("slow"), d.Proposal("flood")
	switch c.ID {
	case "CANCEL-HTTP-CLOSE", "CANCEL-HTTP-DISCONNECT":
		if slow != nil && len(slow.Probe) == 0 {
			notes = append(notes, "SKIPs without a probe on the slow role (probe: {tool, tag})")
		}
	case "TIMEOUT-CANCEL-STOPS":
		if d.Transport == string(protocol.TransportHTTP) && slow != nil && len(slow.Probe) == 0 {
			notes = append(notes, "on HTTP in 2026-07-28 it SKIPs without a probe on the slow role")
		}
	case "FLOW-SERVER-BOUNDED":
		if flood != nil && len(flood.Probe) == 0 {
			notes = append(notes, "SKIPs without a probe on the flood role (probe: {tool, tag})")
		}
	case "IDEM-RESTART":
		if len(d.Command) == 0 || !d.Restart {
			notes = append(notes, "SKIPs without a command and restart: true")
		}
	}
	return strings.Join(notes, "; ")
}

// WriteSummary writes which checks the draft unlocks and which still SKIP
// for lack of a role, and why, for a person reading the terminal.
func (d *Draft) WriteSummary(w io.Writer, catalog []*suites.Check) error {
	sts := d.Unlocks(catalog)
	var unlocked, skipped []CheckStatus
	for _, s := range sts {
		if s.Unlocked {
			unlocked = append(unlocked, s)
		} else {
			skipped = append(skipped, s)
		}
	}
	free := 0
	for _, c := range catalog {
		if len(c.Roles) == 0 && slices.Contains(c.Transports, d.Transport) {
			free++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "roles drafted: %s\n", orDefault(strings.Join(d.RoleSet(), ", "), "none"))
	fmt.Fprintf(&b, "on %s: %d checks need no role; of the %d that need one, the draft unlocks %d and %d still SKIP\n",
		d.Transport, free, len(sts), len(unlocked), len(skipped))
	if len(unlocked) > 0 {
		b.WriteString("\nunlocked:\n")
		for _, s := range unlocked {
			line := fmt.Sprintf("  %-28s %s", s.ID, strings.Join(s.Roles, ", "))
			if s.Note != "" {
				line += "  (" + s.Note + ")"
			}
			b.WriteString(line + "\n")
		}
	}
	if len(skipped) > 0 {
		b.WriteString("\nstill SKIP, for lack of a role:\n")
		// One paragraph per missing role set: the reason once, its checks listed.
		var groups []string
		byGroup := map[string][]string{}
		for _, s := range skipped {
			g := strings.Join(s.Missing, ", ")
			if byGroup[g] == nil {
				groups = append(groups, g)
			}
			byGroup[g] = append(byGroup[g], s.ID)
		}
		for _, g := range groups {
			var why []string
			for _, r := range strings.Split(g, ", ") {
				why = append(why, d.whyNot(r))
			}
			fmt.Fprintf(&b, "  no %s role (%s): %s\n", g, strings.Join(byGroup[g], ", "), strings.Join(why, "; "))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// whyNot says why the draft declares no role.
func (d *Draft) whyNot(role string) string {
	if p := d.Proposal(role); p != nil {
		return fmt.Sprintf("%s is commented out (%s)", p.Tool, p.Disabled)
	}
	if m, ok := d.Missing[role]; ok {
		return m
	}
	return "not drafted"
}

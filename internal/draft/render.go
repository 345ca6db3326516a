package draft

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/mcp-conform/mcp-conform/protocol"
	"github.com/mcp-conform/mcp-conform/suites"
)

// commentWidth is where comment lines wrap.
const commentWidth = 100

// Render writes the draft as a target manifest (the YAML of DESIGN.md,
// read by suites.LoadManifest): a header comment, the target, and one
// entry per role with a comment saying why the tool was chosen, what the
// draft's calls showed and what to check by hand. Proposals the draft
// could not complete, and roles it found no candidate for, are written as
// commented-out templates.
func Render(d *Draft) []byte {
	var b bytes.Buffer
	w := &writer{b: &b}
	w.comment("", fmt.Sprintf("Target manifest drafted by `mcp-conform init` from the tools/list of %s (%s, protocol %s, %d tools).",
		orDefault(d.Server, d.Name), d.Transport, orDefault(d.Version, "unknown"), len(d.Tools)))
	w.comment("", "Review it before trusting a verdict: each role names a tool the checks call, with these arguments, many times. "+
		"Check the lines marked 'check:' by hand; `mcp-conform run --manifest FILE` runs the checks.")
	w.comment("", called(d))
	for _, n := range d.Notes {
		w.comment("", n)
	}
	if len(d.HeaderNames) > 0 {
		names := slices.Clone(d.HeaderNames)
		slices.Sort(names)
		w.comment("", fmt.Sprintf("init sent the header(s) %s (their values are not written here): the run needs them too.", strings.Join(names, ", ")))
	}
	fmt.Fprintf(&b, "name: %s\n", scalar(d.Name))
	fmt.Fprintf(&b, "transport: %s\n", d.Transport)
	if len(d.Command) > 0 {
		fmt.Fprintf(&b, "command: %s\n", flow(d.Command))
	}
	if d.URL != "" {
		fmt.Fprintf(&b, "url: %s\n", scalar(d.URL))
	}
	switch {
	case d.Transport == string(protocol.TransportStdio):
		w.comment("", "restart: the harness may stop the server and start it again (IDEM-RESTART). What a restarted server must "+
			"still know, it must keep where a new process finds it: give its storage here (env) if it is configurable; "+
			"set restart: false if stopping it is not safe.")
		fmt.Fprintf(&b, "restart: %t\n", d.Restart)
		b.WriteString("env: {}\n")
	default:
		w.comment("", "No command: the server is already running, so the harness cannot restart it (IDEM-RESTART and "+
			"SECURITY-LOOPBACK-BIND SKIP). To let it start the server, add command: [...] with {port} in it and in url, "+
			"and restart: true.")
	}
	if len(d.RoleSet()) == 0 {
		b.WriteString("roles: {}\n")
	} else {
		b.WriteString("roles:\n")
	}
	for _, role := range Roles {
		p := d.Proposal(role)
		switch {
		case p == nil:
			w.comment("  ", fmt.Sprintf("%s: not inferred: %s.", role, d.Missing[role]))
			w.template(role, nil, d)
		case !p.Enabled:
			w.comment("  ", fmt.Sprintf("%s: %s, commented out: %s.", role, p.Tool, p.Disabled))
			w.notes(p)
			w.template(role, p, d)
		default:
			w.comment("  ", fmt.Sprintf("%s: %s.", role, p.Tool))
			w.notes(p)
			w.role(p, "  ")
		}
	}
	return b.Bytes()
}

// called says which tools the draft called, for the header.
func called(d *Draft) string {
	if len(d.Called) == 0 {
		return fmt.Sprintf("init called no tool (allowed: %s).", d.Policy)
	}
	counts := map[string]int{}
	var order []string
	for _, c := range d.Called {
		if counts[c] == 0 {
			order = append(order, c)
		}
		counts[c]++
	}
	var parts []string
	for _, c := range order {
		s := c
		if counts[c] > 1 {
			s += fmt.Sprintf(" (%d calls)", counts[c])
		}
		parts = append(parts, s)
	}
	return fmt.Sprintf("init called %s (allowed: %s).", strings.Join(parts, ", "), d.Policy)
}

type writer struct{ b *bytes.Buffer }

// comment writes text as wrapped comment lines at indent; continuation
// lines are indented two more spaces.
func (w *writer) comment(indent, text string) {
	text = oneLine(text)
	first := true
	for text != "" {
		prefix := indent + "# "
		if !first {
			prefix = indent + "#   "
		}
		room := max(commentWidth-len(prefix), 40)
		line := text
		if len(line) > room {
			cut := strings.LastIndexByte(line[:room], ' ')
			if cut <= 0 {
				cut = room
			}
			line = line[:cut]
		}
		w.b.WriteString(strings.TrimRight(prefix+line, " ") + "\n")
		text = strings.TrimLeft(text[len(line):], " ")
		first = false
	}
}

// notes writes a proposal's reasons, observations and checks.
func (w *writer) notes(p *Proposal) {
	if len(p.Why) > 0 {
		w.comment("  ", "why: "+strings.Join(p.Why, "; ")+".")
	}
	for _, s := range p.Seen {
		w.comment("  ", "seen: "+s+".")
	}
	for _, s := range p.Check {
		w.comment("  ", "check: "+s+".")
	}
	if len(p.Others) > 0 {
		w.comment("  ", "other candidates: "+strings.Join(p.Others, ", ")+".")
	}
}

// role writes an enabled role's entry at indent.
func (w *writer) role(p *Proposal, indent string) {
	fmt.Fprintf(w.b, "%s%s:\n", indent, p.Role)
	fmt.Fprintf(w.b, "%s  tool: %s\n", indent, scalar(p.Tool))
	if p.Key != "" {
		fmt.Fprintf(w.b, "%s  key: %s\n", indent, scalar(p.Key))
	}
	if len(p.Arguments) > 0 {
		fmt.Fprintf(w.b, "%s  arguments: %s\n", indent, flow(p.Arguments))
	}
	if p.Field != "" {
		fmt.Fprintf(w.b, "%s  field: %s\n%s  use: %s\n%s  param: %s\n", indent, scalar(p.Field), indent, scalar(p.Use), indent, scalar(p.Param))
	}
	if len(p.Probe) > 0 {
		fmt.Fprintf(w.b, "%s  probe: %s\n", indent, flowFirst(p.Probe, "tool"))
	} else if p.ProbeNote != "" {
		fmt.Fprintf(w.b, "%s  # %s\n", indent, oneLine(p.ProbeNote))
	}
}

// template writes a role commented out: the proposal's values when there
// is one, else placeholders in the shape of DESIGN.md.
func (w *writer) template(role string, p *Proposal, d *Draft) {
	if p == nil {
		p = placeholder(role, d)
	}
	var inner bytes.Buffer
	(&writer{b: &inner}).role(p, "")
	for _, l := range strings.SplitAfter(inner.String(), "\n") {
		if l != "" {
			w.b.WriteString("  # " + l)
		}
	}
}

// placeholder is the template of a role the draft has no candidate for.
func placeholder(role string, d *Draft) *Proposal {
	p := &Proposal{Role: role, Tool: "TOOL"}
	switch role {
	case "slow":
		p.Arguments = map[string]any{"duration": 1}
	case "mutation":
		p.Key = "operation_key"
		p.Arguments = map[string]any{"title": "x"}
		p.Probe = map[string]any{"tool": "TOOL", "field": "executions"}
	case "lookup":
		if m := d.Proposal("mutation"); m != nil {
			p.Tool = "TOOL"
		}
	case "task":
		p.Arguments = map[string]any{"topic": "x"}
	case "handle":
		p.Field, p.Use, p.Param = "FIELD", "TOOL", "PARAM"
	case "flood":
		p.Arguments = map[string]any{"count": floodCount}
	case "silent":
		// The slow tool without a progress token is silent, if it sends
		// progress only for a token: a call longer than the keep-alive.
		if s := d.Proposal("slow"); s != nil && s.Enabled {
			p.Tool = s.Tool
			p.Arguments = s.Arguments
			if s.timing.timeArg != "" {
				for _, t := range d.Tools {
					if t.Name == s.Tool {
						p.Arguments, _ = s.timing.args(t, 2*slowTotal, 2)
					}
				}
			}
		}
	}
	return p
}

// flow renders v as one line of YAML flow style, keys sorted.
func flow(v any) string {
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		return fmt.Sprintf("%q", fmt.Sprint(v))
	}
	setFlow(&n)
	out, err := yaml.Marshal(&n)
	if err != nil {
		return fmt.Sprintf("%q", fmt.Sprint(v))
	}
	return strings.TrimSpace(string(out))
}

// flowFirst renders a map as flow, with the keys first leading and the
// rest sorted: {tool: x, field: y} reads better than sorted.
func flowFirst(m map[string]any, first ...string) string {
	keys := keysOf(m)
	slices.SortStableFunc(keys, func(a, b string) int {
		ia, ib := slices.Index(first, a), slices.Index(first, b)
		switch {
		case ia >= 0 && ib >= 0:
			return ia - ib
		case ia >= 0:
			return -1
		case ib >= 0:
			return 1
		}
		return 0
	})
	n := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
	for _, k := range keys {
		var kn, vn yaml.Node
		if kn.Encode(k) != nil || vn.Encode(m[k]) != nil {
			return flow(m)
		}
		n.Content = append(n.Content, &kn, &vn)
	}
	setFlow(n)
	out, err := yaml.Marshal(n)
	if err != nil {
		return flow(m)
	}
	return strings.TrimSpace(string(out))
}

func setFlow(n *yaml.Node) {
	switch {
	case n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode:
		n.Style = yaml.FlowStyle
	case n.Kind == yaml.ScalarNode && strings.IndexFunc(n.Value, unicode.IsControl) >= 0:
		// One line, always: a block scalar cannot sit in a flow map, nor
		// in a commented-out template.
		n.Style = yaml.DoubleQuotedStyle
	}
	for _, c := range n.Content {
		setFlow(c)
	}
}

// scalar renders a string as a YAML scalar (quoted when it must be).
func scalar(s string) string { return flow(s) }

// oneLine makes text safe inside a comment: no line breaks, no control
// characters.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Parse reads a rendered draft back as the harness will (known fields
// only, validated): what Render writes must always load.
func Parse(b []byte) (*suites.Manifest, error) {
	var m suites.Manifest
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("drafted manifest: %w", err)
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("drafted manifest: %w", err)
	}
	return &m, nil
}

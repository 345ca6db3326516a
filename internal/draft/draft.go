package draft

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mcp-conform/mcp-conform/protocol"
)

// Roles lists the roles a draft considers, in the order it writes them.
var Roles = []string{"slow", "mutation", "lookup", "task", "flood", "silent", "log", "listChanged", "handle"}

// Proposal is the draft's choice of a tool for one role.
type Proposal struct {
	// Role is the role's name ("slow", "mutation", ...).
	Role string
	// Tool, Key, Arguments and Probe are the manifest's Role fields.
	Tool      string
	Key       string
	Arguments map[string]any
	Probe     map[string]any
	// Field, Use and Param are the handle role's (handlerole.go).
	Field, Use, Param string
	// Why says what in tools/list made the tool the choice; Check what a
	// person must verify by hand; Seen what the draft's own calls showed.
	Why, Check, Seen []string
	// Enabled is false for a proposal the draft writes commented out: it
	// lacks something a check needs (a probe field) or a call refuted it.
	Enabled bool
	// Disabled says why, when Enabled is false.
	Disabled string
	// Others names the other candidates, best first.
	Others []string
	// ProbeNote is written, commented, in place of an unconfirmed probe.
	ProbeNote string

	timing timing
}

// Draft is a drafted target manifest and what it was drafted from.
type Draft struct {
	// Name, Transport, Command, URL and Restart are the manifest's.
	Name      string
	Transport string
	Command   []string
	URL       string
	Restart   bool
	// Server is the server's serverInfo ("name version"), Version the
	// negotiated protocol version.
	Server  string
	Version string
	// Tools are the listed tools.
	Tools []Tool
	// Proposals, one per role the draft found a candidate for, in Roles
	// order.
	Proposals []*Proposal
	// Missing says, per role with no candidate at all, why.
	Missing map[string]string
	// Policy is what the draft was allowed to call; Called what it called.
	Policy Policy
	Called []string
	// HeaderNames are the names of the headers init was given (never
	// their values).
	HeaderNames []string
	// Notes are remarks for the top of the file.
	Notes []string
	// capabilities is the server's capabilities object.
	capabilities json.RawMessage
	// cands are every role's candidates, best first (cands[role][0] is
	// the proposal).
	cands map[string][]*candidate
}

// Proposal returns the proposal for role, or nil.
func (d *Draft) Proposal(role string) *Proposal {
	for _, p := range d.Proposals {
		if p.Role == role {
			return p
		}
	}
	return nil
}

// RoleSet lists the roles the draft declares (enabled proposals).
func (d *Draft) RoleSet() []string {
	var out []string
	for _, p := range d.Proposals {
		if p.Enabled {
			out = append(out, p.Role)
		}
	}
	return out
}

// Options configures Run.
type Options struct {
	// Policy says which tools may be called to confirm proposals.
	Policy Policy
	// Name overrides the manifest's name (default: the server's name).
	Name string
	// Command is the stdio command as the manifest should say it (the
	// user's words, before resolution); default Target.Command.
	Command []string
	// CallTimeout bounds each tool call (default 15 s); StartTimeout
	// starting and negotiating (default 15 s); ListTimeout tools/list
	// (default 10 s).
	CallTimeout, StartTimeout, ListTimeout time.Duration
}

// Run drafts a manifest for the target: connect, list the tools, propose,
// confirm by the calls opts.Policy allows, and close.
func Run(ctx context.Context, t Target, opts Options) (*Draft, error) {
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 15 * time.Second
	}
	if opts.ListTimeout <= 0 {
		opts.ListTimeout = 10 * time.Second
	}
	sctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	s, err := Connect(sctx, t)
	cancel()
	if err != nil {
		return nil, err
	}
	defer s.Close()
	lctx, cancel := context.WithTimeout(ctx, opts.ListTimeout)
	tools, err := ListTools(lctx, s)
	cancel()
	if err != nil {
		return nil, err
	}
	d := Propose(tools, s.Transport)
	d.Version = s.Info.Version
	d.capabilities = s.Info.Capabilities
	d.Server, d.Name = serverInfo(s.Info.ServerInfo)
	if opts.Name != "" {
		d.Name = opts.Name
	}
	d.Command = opts.Command
	if d.Command == nil {
		d.Command = t.Command
	}
	d.URL = t.URL
	d.Restart = d.Transport == string(protocol.TransportStdio)
	if d.Name == "" {
		d.Name = strings.Join(d.Command, " ")
		if d.Name == "" {
			d.Name = d.URL
		}
	}
	for n := range t.Header {
		d.HeaderNames = append(d.HeaderNames, n)
	}
	c := NewCaller(s.Conn, tools, opts.Policy, opts.CallTimeout)
	Confirm(ctx, c, d)
	d.Policy = opts.Policy
	d.Called = c.Called()
	return d, nil
}

// serverInfo reads "name version" and the name from an Implementation.
func serverInfo(raw json.RawMessage) (full, name string) {
	var impl struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	if json.Unmarshal(raw, &impl) != nil {
		return "", ""
	}
	return strings.TrimSpace(impl.Name + " " + impl.Version), impl.Name
}

// String summarises a proposal in a line, for logs and tests.
func (p *Proposal) String() string {
	s := fmt.Sprintf("%s: %s", p.Role, p.Tool)
	if !p.Enabled {
		s += " (commented out: " + p.Disabled + ")"
	}
	return s
}

package harness

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/mcp-conform/mcp-conform/internal/auth"
	"github.com/mcp-conform/mcp-conform/internal/cmdline"
	"github.com/mcp-conform/mcp-conform/internal/httpheader"
	"github.com/mcp-conform/mcp-conform/protocol"
	"github.com/mcp-conform/mcp-conform/reports"
)

// Manifest describes a target server: how to start it and which of its tools
// play the roles some checks need. It is the YAML file of DESIGN.md.
type Manifest struct {
	Name      string            `yaml:"name"`
	Transport string            `yaml:"transport"`
	Command   []string          `yaml:"command"`
	URL       string            `yaml:"url"`
	Env       map[string]string `yaml:"env"`
	Restart   bool              `yaml:"restart"`
	Roles     map[string]Role   `yaml:"roles"`
	// SessionTTL is how long the server lets a 2025 session stay idle
	// before it expires (e.g. "2s"); it unlocks SESSION-EXPIRED-404.
	SessionTTL string `yaml:"sessionTTL,omitempty"`
	// Versions lists the protocol versions the server declares it
	// supports (e.g. [2025-11-25, 2025-06-18]), a declared contract:
	// LIFECYCLE-VERSION-SAME asks initialize for each 2025-era one and
	// wants it answered with that same version. Empty: only what the
	// server says on the wire counts.
	Versions []string `yaml:"versions,omitempty"`
	// Auth lists the credentials of principals, each as the HTTP headers
	// one principal sends (e.g. {Authorization: "Bearer ..."}); two of them
	// unlock SECURITY-SESSION-BINDING and TASK-AUTH-BOUND. Other checks send
	// none.
	Auth []map[string]string `yaml:"auth,omitempty"`
	// Headers are sent on every HTTP request the harness and its proxy
	// make to the target (e.g. {Authorization: "Bearer ${MCP_TOKEN}"}):
	// ${VAR} and $VAR in a value are replaced by the environment's, so
	// secrets stay out of the file. The command line's --header and
	// --header-env replace a header of the same name. Their values are
	// redacted from every report and transcript.
	Headers map[string]string `yaml:"headers,omitempty"`
	// RequiresAuth declares that the target serves no request without
	// the run's credentials (headers, --header, --oauth-…): it unlocks
	// SECURITY-AUTH-REQUIRED.
	RequiresAuth bool `yaml:"requiresAuth,omitempty"`
	// ForeignAuth is a credential, as the HTTP headers a client sends
	// (e.g. {Authorization: "Bearer ..."}), that the target's
	// authorization server issued for another resource (another audience,
	// RFC 8707): a token valid elsewhere, not for this server. It unlocks
	// SECURITY-TOKEN-AUDIENCE, which must see it refused. Its values are
	// redacted like the other credentials'.
	ForeignAuth map[string]string `yaml:"foreignAuth,omitempty"`
	// Spec, when set, forces this target's protocol version (--spec all
	// checks each target once per version). Not read from YAML.
	Spec string `yaml:"-"`
	// Dir is the directory relative paths in Command are resolved from:
	// the manifest's repository root when it lives in fixtures/targets/,
	// else the manifest's own directory. Not read from YAML.
	Dir string `yaml:"-"`
}

// Role maps a role to a tool of the target.
type Role struct {
	Tool      string         `yaml:"tool"`
	Key       string         `yaml:"key,omitempty"`
	Arguments map[string]any `yaml:"arguments,omitempty"`
	// Probe ({tool, tag}: slow, flood and task roles; the mutation role's
	// is {tool, field}, MutationProbe) names a tool that
	// reports how much of the work run with a tag value ran (started,
	// stepsRun, finished, cancelled, backlogPeak); tag is the argument both
	// the role's tool and the probe take. On the task role it makes a
	// cancelled task's work observable (TASK-CANCEL-STOPS).
	Probe map[string]any `yaml:"probe,omitempty"`
	// Shared (mutation role) declares that every connection the harness
	// opens to the target — each server process it starts for one check
	// (stdio, or an HTTP command), each HTTP session — sees one ledger
	// (e.g. a file under {tmpdir}): the two racers of IDEM-CONCURRENT must
	// then share state, and a target where they do not FAILs. Without it,
	// racers that share nothing make the check SKIP (a race between two
	// separate stores proves nothing).
	Shared bool `yaml:"shared,omitempty"`
	// Field, Use and Param are the handle role's (2026-07-28 security
	// best practices, "State Handle Hijacking"): Tool, called with
	// Arguments, mints a state handle, the string member Field of its
	// structured content; Use is the tool that takes a handle back as its
	// argument Param and must accept one its caller minted.
	Field string `yaml:"field,omitempty"`
	Use   string `yaml:"use,omitempty"`
	Param string `yaml:"param,omitempty"`
	// PageSize (task role, 2025-11-25) declares the target's tasks/list
	// page size: a page holds at most this many tasks, and a requestor
	// with more sees a nextCursor. TASK-LIST then creates more tasks than
	// one page holds and WARNs a page larger than declared (tasks.mdx
	// §Task Listing: receivers SHOULD use cursor-based pagination to
	// limit the number of tasks returned in a single response); without
	// it, pages are judged where the server pages.
	PageSize int `yaml:"pageSize,omitempty"`
	// FailArguments (task role, 2025-11-25) declares arguments with which
	// the task role's tool, called as a task, ends in status failed (e.g.
	// {fail: true}). TASK-RESULT then also reads a failed task's
	// tasks/result: the final result of the underlying request (a
	// JSON-RPC error, or a CallToolResult with the related-task _meta),
	// the same when asked twice; TASK-TERMINAL-FINAL watches the failed
	// status, and TASK-FAILED-STATUS-MESSAGE WARNs a tasks/get of the
	// failed task without a statusMessage.
	FailArguments map[string]any `yaml:"failArguments,omitempty"`
	// InputArguments (task role, 2025-11-25, stdio) declares arguments
	// with which the task role's tool, called as a task by a client that
	// declared the elicitation capability, asks that requestor for input
	// with an elicitation/create request and completes once answered (e.g.
	// {ask: true}). TASK-INPUT-REQUIRED then FAILs the request without the
	// related-task _meta and WARNs a task not input_required while it
	// waits, or still input_required after the answer.
	InputArguments map[string]any `yaml:"inputArguments,omitempty"`
}

// LoadManifest reads and validates a manifest file.
func LoadManifest(path string) (*Manifest, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read manifest: %w", err)
	}
	var m Manifest
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("manifest %s: %w", path, err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", path, err)
	}
	if err := m.expandHeaders(os.LookupEnv); err != nil {
		return nil, fmt.Errorf("manifest %s: %w", path, err)
	}
	m.Dir = filepath.Dir(abs)
	if filepath.Base(m.Dir) == "targets" && filepath.Base(filepath.Dir(m.Dir)) == "fixtures" {
		m.Dir = filepath.Dir(filepath.Dir(m.Dir))
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("manifest %s: %w", path, err)
	}
	return &m, nil
}

// expandHeaders replaces ${VAR} and $VAR in the header values (headers,
// foreignAuth) by the environment's; an unset variable is an error (naming
// it, not a value).
func (m *Manifest) expandHeaders(lookup func(string) (string, bool)) error {
	if err := expandValues("headers", m.Headers, lookup); err != nil {
		return err
	}
	return expandValues("foreignAuth", m.ForeignAuth, lookup)
}

// expandValues replaces ${VAR} and $VAR in the values of hs (a manifest
// field named field) by the environment's.
func expandValues(field string, hs map[string]string, lookup func(string) (string, bool)) error {
	for name, v := range hs {
		var missing []string
		out := os.Expand(v, func(k string) string {
			val, ok := lookup(k)
			if !ok {
				missing = append(missing, k)
			}
			return val
		})
		if len(missing) > 0 {
			return fmt.Errorf("%s: %s uses $%s, which is not set in the environment", field, name, strings.Join(missing, ", $"))
		}
		hs[name] = out
	}
	return nil
}

// Validate checks the fields the harness relies on.
func (m *Manifest) Validate() error {
	if err := validateTransport(m); err != nil {
		return err
	}
	if m.SessionTTL != "" {
		d, err := time.ParseDuration(m.SessionTTL)
		if err != nil || d <= 0 {
			return fmt.Errorf("sessionTTL %q: want a positive duration such as 2s", m.SessionTTL)
		}
	}
	for _, v := range m.Versions {
		if _, err := time.Parse("2006-01-02", v); err != nil {
			return fmt.Errorf("versions: %q is not a protocol version (YYYY-MM-DD, such as 2025-11-25)", v)
		}
	}
	for name, v := range m.Headers {
		if _, _, err := httpheader.Parse(name + ": " + v); err != nil {
			return fmt.Errorf("headers: %w", err)
		}
	}
	for name, v := range m.ForeignAuth {
		if _, _, err := httpheader.Parse(name + ": " + v); err != nil {
			return fmt.Errorf("foreignAuth: %w", err)
		}
	}
	for name, r := range m.Roles {
		if r.Tool == "" {
			return fmt.Errorf("role %s: no tool", name)
		}
	}
	for name, r := range m.Roles {
		if name != "handle" && (r.Field != "" || r.Use != "" || r.Param != "") {
			return fmt.Errorf("role %s: field, use and param belong to the handle role only", name)
		}
	}
	for name, r := range m.Roles {
		if name != "task" && (r.PageSize != 0 || r.FailArguments != nil || r.InputArguments != nil) {
			return fmt.Errorf("role %s: pageSize, failArguments and inputArguments belong to the task role only", name)
		}
		if r.PageSize < 0 {
			return fmt.Errorf("role %s: pageSize %d: want a positive number of tasks", name, r.PageSize)
		}
	}
	if r, ok := m.Roles["handle"]; ok && (r.Field == "" || r.Use == "" || r.Param == "") {
		return errors.New("role handle: needs field (the result member carrying the handle), use (the tool taking it back) and param (its argument)")
	}
	if r, ok := m.Roles["mutation"]; ok {
		if r.Key == "" {
			return errors.New("role mutation: no key (the argument that carries the idempotency key)")
		}
		if _, err := r.MutationProbe(); err != nil {
			return fmt.Errorf("role mutation: %w", err)
		}
	}
	if m.Name == "" {
		m.Name = strings.Join(m.Command, " ")
		if m.Name == "" {
			m.Name = m.URL
		}
	}
	return nil
}

// Config is everything a run needs to know about its targets.
type Config struct {
	// Targets are the servers checked; each applicable check runs against
	// each of them (the built-in reference is one stdio and one HTTP
	// target).
	Targets []*Manifest
	// Spec forces a protocol version; empty means the newest accepted.
	Spec string
	// Mutant names the reference server mutant in use, for reports.
	Mutant string
	// OpTimeout bounds one ordinary exchange (ping, a cancellation barrier).
	OpTimeout time.Duration
	// CallTimeout bounds one call of a role tool (the slow tool).
	CallTimeout time.Duration
	// StartTimeout bounds starting the target and negotiating a version.
	StartTimeout time.Duration
	// Strict makes SHOULD failures fail the Ginkgo spec too.
	Strict bool
	// Verbose echoes the server's stderr to the harness's stderr.
	Verbose bool
	// Credentials are sent on every HTTP request to the targets (the
	// command line's --header, --header-env and --oauth-…); a target's
	// manifest headers are added under them (CredentialsFor).
	Credentials *auth.Credentials
	// Seed seeds every random choice of the run (the fault rules'
	// sources); zero: each rule's own seed.
	Seed uint64
	// Part marks a run that checks one part of a larger configuration
	// (one of its targets): checks that do not apply to the part's
	// targets are left out, as in the whole run, instead of reported
	// SKIP as for a lone target.
	Part bool
}

// CredentialsFor returns what every HTTP request to target carries: its
// manifest's headers, replaced by the command line's of the same name, and
// the command line's OAuth client. Their names and values, and those of the
// manifest's principals (auth:), are added to the secrets every report
// hides (reports.Secrets).
func (c *Config) CredentialsFor(target *Manifest) *auth.Credentials {
	var own *auth.Credentials
	if len(target.Headers) > 0 {
		own = &auth.Credentials{Header: http.Header{}}
		for k, v := range target.Headers {
			own.Header.Set(k, v)
		}
	}
	creds := own.With(c.Credentials)
	for k, vs := range creds.Header {
		reports.Secrets.AddHeader(k)
		reports.Secrets.Add(vs...)
	}
	for k, v := range target.ForeignAuth {
		reports.Secrets.AddHeader(k)
		reports.Secrets.Add(v)
	}
	for _, p := range target.Auth {
		for k, v := range p {
			reports.Secrets.AddHeader(k)
			reports.Secrets.Add(v)
		}
	}
	return creds
}

// WithDefaults fills unset timeouts.
func (c *Config) WithDefaults() *Config {
	cc := *c
	if cc.OpTimeout <= 0 {
		cc.OpTimeout = 5 * time.Second
	}
	if cc.CallTimeout <= 0 {
		cc.CallTimeout = 30 * time.Second
	}
	if cc.StartTimeout <= 0 {
		cc.StartTimeout = 15 * time.Second
	}
	return &cc
}

// StdioManifest builds a manifest for a bare command line given with
// --stdio (split by the shell's quoting rules, nothing expanded: see
// internal/cmdline): no roles, so checks that need one SKIP.
func StdioManifest(line string) (*Manifest, error) {
	argv, err := cmdline.Split(line)
	if err != nil {
		return nil, fmt.Errorf("--stdio: %w", err)
	}
	if len(argv) == 0 {
		return nil, errors.New("--stdio needs a command")
	}
	wd, _ := os.Getwd()
	m := &Manifest{Name: line, Transport: string(protocol.TransportStdio), Command: argv, Dir: wd}
	return m, m.Validate()
}

// URLManifest builds a manifest for a server given with --url: no command
// (the server is already running), no roles.
func URLManifest(url string) (*Manifest, error) {
	wd, _ := os.Getwd()
	m := &Manifest{Name: url, Transport: string(protocol.TransportHTTP), URL: url, Dir: wd}
	if strings.HasPrefix(url, "ws://") || strings.HasPrefix(url, "wss://") {
		m.Transport = string(protocol.TransportWebSocket) // JSON-RPC, one message per frame
	}
	return m, m.Validate()
}

// AllVersions is the --spec value that checks every target in every
// protocol version the harness knows.
const AllVersions = "all"

// ExpandVersions returns, for --spec all, one copy of each target per known
// protocol version (newest first); otherwise the targets unchanged.
func ExpandVersions(targets []*Manifest, spec string) []*Manifest {
	if spec != AllVersions {
		return targets
	}
	var out []*Manifest
	for _, t := range targets {
		for _, v := range []string{"2026-07-28", "2025-11-25", "2025-06-18"} {
			c := *t
			c.Spec = v
			out = append(out, &c)
		}
	}
	return out
}

// force is the version a target is forced to, if any.
func (c *Config) force(t *Manifest) string {
	if t.Spec != "" {
		return t.Spec
	}
	if c.Spec == AllVersions {
		return ""
	}
	return c.Spec
}

// Name names the targets of a run for reports.
func (c *Config) Name() string {
	var names []string
	for _, t := range c.Targets {
		if !slices.Contains(names, t.Name) {
			names = append(names, t.Name)
		}
	}
	return strings.Join(names, " + ")
}

// Transports lists the targets' transports, e.g. "stdio" or "stdio,http".
func (c *Config) Transports() string {
	var ts []string
	for _, t := range c.Targets {
		if !slices.Contains(ts, t.Transport) {
			ts = append(ts, t.Transport)
		}
	}
	return strings.Join(ts, ",")
}

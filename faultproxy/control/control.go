// Package control is the run-time control API of the fault proxy: a small
// HTTP+JSON service, in the shape of toxiproxy's but acting per JSON-RPC
// message, that lists, adds, updates and removes rules while traffic
// flows, reads the transcript and resets the proxy. Rules use the schema of
// rule files (faultproxy.RuleSpec), so a rule written for a file can be
// sent as is, and a whole file can replace the rule set in one atomic step.
//
// Endpoints (JSON in and out; rule bodies may also be YAML):
//
//	GET    /status             transport, upstream, rules and their seeds
//	GET    /rules              installed rules, in order, with counters
//	PUT    /rules              replace every rule at once (a rule file)
//	POST   /rules              add one rule (409 when the name is taken)
//	GET    /rules/{name}       one rule
//	PUT    /rules/{name}       replace one rule in place (fresh counters)
//	DELETE /rules/{name}       remove one rule
//	POST   /reset              remove every rule and clear the transcript
//	GET    /transcript?since=N transcript entries with index ≥ N, as JSON lines
//
// The service is meant for loopback: unless Options.AllowRemote is set it
// refuses requests whose Host is not a loopback name or address and
// requests a browser sends from a foreign Origin (DNS rebinding).
// Package proxyctl is its Go client.
package control

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"

	"github.com/mcp-conform/mcp-conform/faultproxy"
)

// Target is the proxy link the API controls: every faultproxy link
// (Stdio, HTTP, WebSocket) is one.
type Target interface {
	// Rules is the link's rule set.
	Rules() *faultproxy.Rules
	// Transcript is the link's transcript.
	Transcript() *faultproxy.Transcript
	// ForgetPassed clears the delivered-message history hold-until
	// looks back on.
	ForgetPassed()
}

// Every faultproxy link is a Target.
var (
	_ Target = (*faultproxy.Stdio)(nil)
	_ Target = (*faultproxy.HTTP)(nil)
	_ Target = (*faultproxy.WebSocket)(nil)
)

// Options configures a Server.
type Options struct {
	// Target is the link controlled.
	Target Target
	// Transport ("stdio", "http", "websocket"), Upstream (the server
	// command or URL) and Listen (the proxy's own URL, if any) are
	// reported by /status.
	Transport, Upstream, Listen string
	// Initial are the specs of the rules already installed on Target
	// (from a rule file), so that /rules can show them.
	Initial []faultproxy.RuleSpec
	// Validate, when set, refuses rules the link cannot apply (e.g.
	// crash without a server process).
	Validate func(faultproxy.Rule) error
	// AllowRemote turns off the Host and Origin checks.
	AllowRemote bool
}

// Rule is an installed rule as the API shows it: its spec, the seed of its
// random source, and its counters.
type Rule struct {
	faultproxy.RuleSpec
	// Seed is the seed actually in use (the spec's, or the one derived
	// from the name).
	Seed uint64 `json:"seed"`
	// Armed is false while the rule waits for its "after" message.
	Armed bool `json:"armed"`
	// Seen counts matching messages; Fired those the rule acted on.
	Seen  int `json:"seen"`
	Fired int `json:"fired"`
}

// RuleList is the body of GET and PUT /rules.
type RuleList struct {
	Rules []Rule `json:"rules"`
}

// Status is the body of GET /status.
type Status struct {
	Transport string `json:"transport"`
	Upstream  string `json:"upstream"`
	Listen    string `json:"listen,omitempty"`
	// Seeds maps each installed rule to its seed.
	Seeds map[string]uint64 `json:"seeds"`
	// Rules counts the installed rules.
	Rules int `json:"rules"`
	// TranscriptNext is the index the next transcript entry will get.
	TranscriptNext int `json:"transcriptNext"`
}

// Error is the body of every failed request.
type Error struct {
	Error string `json:"error"`
}

// NextHeader carries, on GET /transcript, the since value that continues
// after the entries returned.
const NextHeader = "X-Transcript-Next"

// maxBody bounds a request body.
const maxBody = 1 << 20

// Server is the control API's http.Handler.
type Server struct {
	opts Options
	mux  *http.ServeMux

	// mu serialises changes so that the specs and the engine agree.
	mu    sync.Mutex
	specs map[string]faultproxy.RuleSpec
}

// New returns the API for opts.Target.
func New(opts Options) *Server {
	s := &Server{opts: opts, mux: http.NewServeMux(), specs: map[string]faultproxy.RuleSpec{}}
	for _, rs := range opts.Initial {
		s.specs[rs.Name] = rs
	}
	s.mux.HandleFunc("GET /status", s.status)
	s.mux.HandleFunc("GET /rules", s.list)
	s.mux.HandleFunc("PUT /rules", s.setAll)
	s.mux.HandleFunc("POST /rules", s.add)
	s.mux.HandleFunc("GET /rules/{name}", s.get)
	s.mux.HandleFunc("PUT /rules/{name}", s.update)
	s.mux.HandleFunc("DELETE /rules/{name}", s.remove)
	s.mux.HandleFunc("POST /reset", s.reset)
	s.mux.HandleFunc("GET /transcript", s.transcript)
	return s
}

// ServeHTTP refuses non-local callers, then routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.opts.AllowRemote {
		if err := localOnly(r); err != nil {
			writeError(w, http.StatusForbidden, err)
			return
		}
	}
	s.mux.ServeHTTP(w, r)
}

// localOnly accepts a request addressed to a loopback host and not sent by
// a page of a foreign origin.
func localOnly(r *http.Request) error {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if !isLoopback(host) {
		return fmt.Errorf("control API: Host %q is not a loopback address", r.Host)
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || !isLoopback(u.Hostname()) {
			return fmt.Errorf("control API: Origin %q refused", o)
		}
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (s *Server) status(w http.ResponseWriter, _ *http.Request) {
	st := Status{Transport: s.opts.Transport, Upstream: s.opts.Upstream, Listen: s.opts.Listen, Seeds: map[string]uint64{},
		TranscriptNext: s.opts.Target.Transcript().Len()}
	for _, r := range s.opts.Target.Rules().List() {
		st.Seeds[r.Name] = r.Seed
		st.Rules++
	}
	writeJSON(w, http.StatusOK, st)
}

// views returns the installed rules as the API shows them; the caller
// holds s.mu.
func (s *Server) views() []Rule {
	out := []Rule{}
	for _, st := range s.opts.Target.Rules().List() {
		spec, ok := s.specs[st.Name]
		if !ok {
			spec = faultproxy.RuleSpec{Name: st.Name}
		}
		out = append(out, Rule{RuleSpec: spec, Seed: st.Seed, Armed: st.Armed, Seen: st.Seen, Fired: st.Fired})
	}
	return out
}

func (s *Server) view(name string) (Rule, bool) {
	for _, v := range s.views() {
		if v.Name == name {
			return v, true
		}
	}
	return Rule{}, false
}

func (s *Server) list(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	writeJSON(w, http.StatusOK, RuleList{Rules: s.views()})
}

func (s *Server) get(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.view(r.PathValue("name"))
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Errorf("no rule named %q", r.PathValue("name")))
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// build checks a spec and turns it into a rule the link can apply.
func (s *Server) build(spec faultproxy.RuleSpec) (faultproxy.Rule, error) {
	rule, err := spec.Rule()
	if err != nil {
		return rule, fmt.Errorf("rule %s: %w", spec.Name, err)
	}
	if s.opts.Validate != nil {
		if err := s.opts.Validate(rule); err != nil {
			return rule, fmt.Errorf("rule %s: %w", spec.Name, err)
		}
	}
	return rule, nil
}

func readBody(r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	if len(b) > maxBody {
		return nil, fmt.Errorf("body larger than %d bytes", maxBody)
	}
	return b, nil
}

func (s *Server) setAll(w http.ResponseWriter, r *http.Request) {
	b, err := readBody(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	specs, err := faultproxy.ParseRuleSpecs(b)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	rules := make([]faultproxy.Rule, 0, len(specs))
	for _, spec := range specs {
		rule, err := s.build(spec)
		if err != nil {
			writeError(w, http.StatusBadRequest, err)
			return
		}
		rules = append(rules, rule)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.opts.Target.Rules().Set(rules...); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	s.specs = map[string]faultproxy.RuleSpec{}
	for _, spec := range specs {
		s.specs[spec.Name] = spec
	}
	writeJSON(w, http.StatusOK, RuleList{Rules: s.views()})
}

func (s *Server) add(w http.ResponseWriter, r *http.Request) {
	spec, rule, ok := s.readRule(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.opts.Target.Rules().Insert(rule); err != nil {
		code := http.StatusBadRequest
		if errors.Is(err, faultproxy.ErrRuleExists) {
			code = http.StatusConflict
		}
		writeError(w, code, err)
		return
	}
	s.specs[spec.Name] = spec
	v, _ := s.view(spec.Name)
	writeJSON(w, http.StatusCreated, v)
}

func (s *Server) update(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	spec, rule, ok := s.readRuleNamed(w, r, name)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.opts.Target.Rules().Replace(name, rule); err != nil {
		code := http.StatusBadRequest
		if errors.Is(err, faultproxy.ErrNoRule) {
			code = http.StatusNotFound
		}
		writeError(w, code, err)
		return
	}
	s.specs[name] = spec
	v, _ := s.view(name)
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) remove(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.opts.Target.Rules().Remove(name) {
		writeError(w, http.StatusNotFound, fmt.Errorf("no rule named %q", name))
		return
	}
	delete(s.specs, name)
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) reset(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts.Target.Rules().Clear()
	s.specs = map[string]faultproxy.RuleSpec{}
	s.opts.Target.ForgetPassed()
	s.opts.Target.Transcript().Clear()
	w.WriteHeader(http.StatusNoContent)
}

// readRule decodes one rule from the body.
func (s *Server) readRule(w http.ResponseWriter, r *http.Request) (faultproxy.RuleSpec, faultproxy.Rule, bool) {
	return s.readRuleNamed(w, r, "")
}

// readRuleNamed decodes one rule; with name set, the body's name must be
// empty (it is filled in) or equal.
func (s *Server) readRuleNamed(w http.ResponseWriter, r *http.Request, name string) (faultproxy.RuleSpec, faultproxy.Rule, bool) {
	b, err := readBody(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return faultproxy.RuleSpec{}, faultproxy.Rule{}, false
	}
	spec, err := faultproxy.ParseRuleSpecNamed(b, name)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return spec, faultproxy.Rule{}, false
	}
	rule, err := s.build(spec)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return spec, rule, false
	}
	return spec, rule, true
}

func (s *Server) transcript(w http.ResponseWriter, r *http.Request) {
	since := 0
	if v := r.URL.Query().Get("since"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, fmt.Errorf("since=%q: want a non-negative integer", v))
			return
		}
		since = n
	}
	tr := s.opts.Target.Transcript()
	next := tr.Len()
	entries := tr.Since0(since)
	// Entries added between Len and Since0 are left for the next read.
	for len(entries) > 0 && entries[len(entries)-1].Index >= next {
		entries = entries[:len(entries)-1]
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set(NextHeader, strconv.Itoa(max(next, since)))
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	for _, e := range entries {
		if err := enc.Encode(e); err != nil {
			return
		}
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, code int, err error) {
	writeJSON(w, code, Error{Error: err.Error()})
}

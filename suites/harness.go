package suites

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/internal/schema"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/reports"
	"github.com/mcp-conform/mcp-conform/sse"
)

// The target configuration of the current run, set by Configure before
// RunSpecs and read only inside spec bodies.
var (
	cfgMu   sync.Mutex
	current *Config
	probed  map[*Manifest]*probeResult
	results []reports.Check
	onCheck func(reports.Check)
)

type probeResult struct {
	session clients.Session
	err     error
	// tools is what tools/list gave at the probe (nil when it failed):
	// the rows of the retry-class table.
	tools []map[string]any
}

// Configure sets the target of the next run and forgets earlier results.
// onResult, when not nil, is called after each check (progress display).
func Configure(c *Config, onResult func(reports.Check)) {
	cfgMu.Lock()
	defer cfgMu.Unlock()
	current = c.withDefaults()
	probed = map[*Manifest]*probeResult{}
	evidence = newRunEvidence()
	results = nil
	resetSchemaRuns()
	onCheck = onResult
}

// Results returns the check results recorded so far, in run order.
func Results() []reports.Check {
	cfgMu.Lock()
	defer cfgMu.Unlock()
	return slices.Clone(results)
}

// NegotiatedVersion returns the protocol version the probe of the first
// target settled on, or "" when it has not run or failed.
func NegotiatedVersion() string {
	cfgMu.Lock()
	defer cfgMu.Unlock()
	if current == nil || len(current.Targets) == 0 {
		return ""
	}
	p := probed[current.Targets[0]]
	if p == nil || p.err != nil {
		return ""
	}
	return p.session.Version
}

func config() *Config {
	cfgMu.Lock()
	defer cfgMu.Unlock()
	return current
}

// probe starts a target once per run to learn its protocol version.
func probe(ctx context.Context, cfg *Config, target *Manifest) (clients.Session, error) {
	cfgMu.Lock()
	p := probed[target]
	cfgMu.Unlock()
	if p != nil {
		return p.session, p.err
	}
	sess, tools, err := probeTarget(ctx, cfg, target)
	cfgMu.Lock()
	probed[target] = &probeResult{session: sess, err: err, tools: tools}
	cfgMu.Unlock()
	return sess, err
}

// probeListWait bounds the probe's tools/list: a server that negotiates
// but does not list its tools only loses its retry-class table.
const probeListWait = 2 * time.Second

// probeTarget starts the target, negotiates, lists its tools (for the
// retry-class table; a failure there is not an error) and stops it.
func probeTarget(ctx context.Context, cfg *Config, target *Manifest) (clients.Session, []map[string]any, error) {
	d := min(cfg.OpTimeout, probeListWait)
	if target.Transport == "http" {
		conn, err := startHTTPConn(ctx, cfg, target, nil, clients.Session{}, nil)
		if err != nil {
			return clients.Session{}, nil, err
		}
		defer conn.close()
		tools, _ := httpEndpoint(ctx, conn, conn.W).listTools(ctx, d)
		return conn.W.Session(), tools, nil
	}
	conn, err := startConn(ctx, cfg, target, nil, clients.Session{}, nil)
	if err != nil {
		return clients.Session{}, nil, err
	}
	defer conn.close()
	tools, _ := stdioEndpoint(conn).listTools(ctx, d)
	return conn.W.Session(), tools, nil
}

// startError is a failure to start or negotiate with a target, with the
// transcript of the attempt: the evidence every check that ERRORs on it
// carries.
type startError struct {
	err        error
	transcript []reports.Entry
}

func (e *startError) Error() string { return e.err.Error() }
func (e *startError) Unwrap() error { return e.err }

// withTranscript attaches tr's entries to err.
func withTranscript(err error, tr *faultproxy.Transcript) error {
	var out []reports.Entry
	for _, e := range tr.Entries() {
		out = append(out, toReportEntry(e))
	}
	return &startError{err: err, transcript: out}
}

// resultEntry names the hidden report entry that carries a check's whole
// result, so a report can be rebuilt from Ginkgo's own report, including one
// merged from parallel processes (ginkgo -p).
const resultEntry = "mcp-conform-result"

// checkEntry is the value of a resultEntry.
type checkEntry struct {
	Check   reports.Check `json:"check"`
	Version string        `json:"version"`
	// Schema is SCHEMA-VALID's walk of the check's transcripts.
	Schema *schemaRun `json:"schema,omitempty"`
}

// verdict ends a check body early with a status.
type verdict struct {
	status reports.Status
	reason string
	// level, when set, is the level of the sentence the verdict rests on,
	// when it is not the rule's (Warnf in a MUST check).
	level reports.Level
}

// H is the harness a check body uses: it starts connections to the target
// through the fault proxy, knows the negotiated version, and records the
// verdict and the transcript.
type H struct {
	ctx     context.Context
	check   *Check
	cfg     *Config
	target  *Manifest
	session clients.Session
	rule    Rule
	conns   []*Conn
	hconns  []*HConn
	notes   []string
	// startTranscript is the failed start of the target, when it failed.
	startTranscript []reports.Entry
	// tmp is the check's private directory (TmpDirPlaceholder), if made.
	tmp string
	// extra are connections a check opened besides conns and hconns (a
	// second HTTP session), closed with them.
	extra []func()
	// schemaRun and schemaV are SCHEMA-VALID's walk of the check's
	// transcripts (schema_valid.go).
	schemaRun *schemaRun
	schemaV   *schema.Validator
}

// Conn is one connection to the target: a server process behind a fault
// proxy link, and a wire client on the client end. On a WebSocket target
// Link is nil and WS is the proxy (Proc the server process, when the
// manifest starts one): the same Wire, over frames (see wsconn.go).
type Conn struct {
	Link *faultproxy.Stdio
	W    *clients.Wire
	h    *H
	WS   *faultproxy.WebSocket
	Proc *faultproxy.Process
	// cleanup removes what the connection alone needed (a probe's
	// private directory).
	cleanup func()
}

// define declares the Ginkgo specs of a check, one per target it applies
// to; body runs with a fresh H.
func define(c *Check, body func(h *H)) {
	cfg := config()
	if cfg == nil {
		return
	}
	for _, t := range targetsFor(cfg, c) {
		labels := ginkgo.Label(c.Labels(t.Transport)...)
		text := c.ID + " " + c.Title
		if len(cfg.Targets) > 1 {
			text = "[" + strings.TrimSpace(t.Transport+" "+t.Spec) + "] " + text
		}
		ginkgo.It(text, labels, ginkgo.NodeTimeout(3*time.Minute), func(ctx ginkgo.SpecContext) {
			runCheck(ctx, c, t, body)
		})
	}
}

// targetsFor lists the targets a check runs against: with one target,
// that target (a transport the check does not cover gives SKIP with the
// reason); with several, those whose transport the check covers.
func targetsFor(cfg *Config, c *Check) []*Manifest {
	if len(cfg.Targets) == 1 && !cfg.Part {
		return cfg.Targets
	}
	var out []*Manifest
	for _, t := range cfg.Targets {
		if !slices.Contains(c.Transports, t.Transport) {
			continue
		}
		if _, ok := c.RuleOn(t.Transport, t.Spec); t.Spec != "" && !ok {
			continue
		}
		out = append(out, t)
	}
	return out
}

// runCheck runs one check and records its result.
func runCheck(ctx context.Context, c *Check, target *Manifest, body func(h *H)) {
	cfg := config()
	start := time.Now()
	res := reports.Check{ID: c.ID, Title: c.Title, Level: reports.Must, Transport: target.Transport, Clauses: slices.Clone(c.Clauses)}
	h := &H{ctx: ctx, check: c, cfg: cfg, target: target}
	v := h.run(body)
	if ctx.Err() != nil && v.status != reports.Skip {
		// Ginkgo cancelled the spec (the run's budget ran out, the check's
		// own time limit passed, or a signal): whatever the body concluded
		// from a cancelled wait says nothing about the server.
		v = verdict{status: reports.Error, reason: "interrupted before the check could finish (the run's --budget ran out or the run was interrupted): " + v.reason}
	}
	if h.rule.Spec != "" {
		res.Level = h.rule.Level
		res.Spec = h.rule.Pages()
		res.Clause = h.rule.Clause
		res.Source = h.rule.SourceOf()
	} else if vs := c.VersionsOn(target.Transport); len(vs) > 0 {
		r, _ := c.RuleOn(target.Transport, vs[0])
		res.Level, res.Spec, res.Clause, res.Source = r.Level, r.Pages(), r.Clause, r.SourceOf()
	}
	if v.level != "" {
		// The verdict rests on another sentence of the clause than its
		// strongest one (a SHOULD beside a MUST): report that one's level.
		res.Level = v.level
	}
	if stray := h.strayOutput(); stray != "" {
		// Every version's stdio transport forbids it, whatever the check's
		// own clause: a server that writes garbage never passes.
		if v.status == reports.Fail {
			v.reason += "; " + stray
		} else {
			v = verdict{status: reports.Fail, reason: stray}
		}
		v.level = reports.Must
		if target.Transport != "websocket" {
			res.Spec = append(res.Spec, stdioPage(h.session.Version))
		}
	}
	if target.Transport == "websocket" {
		// No WebSocket binding exists: a custom transport keeps the
		// JSON-RPC message format and the message patterns, and the check
		// holds it to the message rules every transport keeps.
		if p := customTransportsPage(h.session.Version); !slices.Contains(res.Spec, p) {
			res.Spec = append(res.Spec, p)
		}
	}
	res.Status, res.Reason = v.status, v.reason
	res.ProtocolVersion = h.session.Version
	if _, ok := c.Rules[target.Spec]; ok && res.ProtocolVersion == "" {
		// Ended before negotiating (a role the manifest lacks, a target
		// that did not start): the version the run checks this target in.
		res.ProtocolVersion = target.Spec
	}
	for _, conn := range h.conns {
		conn.close()
	}
	for _, conn := range h.hconns {
		conn.close()
	}
	for _, f := range h.extra {
		f()
	}
	if h.tmp != "" {
		_ = os.RemoveAll(h.tmp)
	}
	res.Transcript = h.transcript()
	h.recordSchemaRun()
	res.DurationMs = float64(time.Since(start).Microseconds()) / 1000
	cfgMu.Lock()
	results = append(results, res)
	cb := onCheck
	cfgMu.Unlock()
	if cb != nil {
		cb(res)
	}
	ginkgo.AddReportEntry("mcp-conform", fmt.Sprintf("%s %s", res.Status, res.Reason))
	ginkgo.AddReportEntry(resultEntry, checkEntry{Check: res, Version: h.session.Version, Schema: h.schemaRun}, ginkgo.ReportEntryVisibilityNever)
	switch res.Status {
	case reports.Fail:
		ginkgo.Fail(fmt.Sprintf("FAIL (%s): %s", res.Level, res.Reason))
	case reports.Error:
		ginkgo.Fail("ERROR (the harness could not run the check): " + res.Reason)
	case reports.Warn:
		if cfg.Strict {
			ginkgo.Fail("WARN (SHOULD, strict): " + res.Reason)
		}
	case reports.Skip:
		ginkgo.Skip(res.Reason)
	}
}

// run executes body, turning verdict panics into a verdict.
func (h *H) run(body func(h *H)) (v verdict) {
	defer func() {
		r := recover()
		switch r := r.(type) {
		case nil:
			v = verdict{status: reports.Pass}
		case verdict:
			v = r
		default:
			v = verdict{status: reports.Error, reason: fmt.Sprintf("harness panic: %v\n%s", r, debug.Stack())}
		}
		if v.status == reports.Pass && len(h.notes) > 0 {
			v.reason = strings.Join(h.notes, "; ")
		}
	}()
	if h.cfg == nil {
		panic(verdict{status: reports.Error, reason: "no target configured (suites.Configure was not called)"})
	}
	if !slices.Contains(h.check.Transports, h.target.Transport) {
		h.Skip(fmt.Sprintf("not on the %s transport (applies to %s)", h.target.Transport, strings.Join(h.check.Transports, ", ")))
	}
	for _, role := range h.check.Roles {
		if _, ok := h.target.Roles[role]; !ok {
			h.Skip(reports.MissingRoleReason(role))
		}
	}
	sctx, cancel := context.WithTimeout(h.ctx, h.cfg.StartTimeout)
	sess, err := probe(sctx, h.cfg, h.target)
	cancel()
	if err != nil {
		var se *startError
		if errors.As(err, &se) {
			h.startTranscript = se.transcript
		}
		h.Errorf("could not start and negotiate with the target: %v", err)
	}
	h.session = sess
	rule, ok := h.check.RuleOn(h.target.Transport, sess.Version)
	if !ok {
		h.Skip(fmt.Sprintf("not in %s on %s (applies there to %s)", sess.Version, h.target.Transport, strings.Join(h.check.VersionsOn(h.target.Transport), ", ")))
	}
	h.rule = rule
	body(h)
	return verdict{status: reports.Pass}
}

// failServer ends the check as FAIL whatever the level of its clause: the
// server died, or did not answer a request it must answer (ping, a call
// that was not cancelled). That is not the clause the check is about, and a
// server that crashes or hangs must not pass the gate with a WARN.
func (h *H) failServer(format string, args ...any) {
	panic(verdict{status: reports.Fail, reason: fmt.Sprintf(format, args...), level: reports.Must})
}

// strayOutput describes the lines the server wrote on stdout that are not
// JSON-RPC messages (garbage, logs, a line cut short by an exit), or "".
func (h *H) strayOutput() string {
	n, first := 0, ""
	for _, c := range h.conns {
		for _, m := range c.W.Messages() {
			if m.Env.Kind == jsonrpc.Invalid {
				if n == 0 {
					first = string(m.Raw)
					if len(first) > 120 {
						first = first[:120] + "..."
					}
				}
				n++
			}
		}
	}
	if n == 0 {
		return ""
	}
	if h.target.Transport == "websocket" {
		return fmt.Sprintf("the server sent %d frame(s) that are not JSON-RPC messages, the first: %q "+
			"(custom transports \"MUST preserve the JSON-RPC message format\"; stdio: \"The server MUST NOT write anything to its stdout that is not a valid MCP message.\")", n, first)
	}
	return fmt.Sprintf("the server wrote %d line(s) on stdout that are not JSON-RPC messages, the first: %q "+
		"(stdio transport: \"The server MUST NOT write anything to its stdout that is not a valid MCP message.\")", n, first)
}

// stdioPage is the specification page of the stdio transport in version v.
func stdioPage(v string) string {
	if v == "" || v >= "2026-07-28" {
		return stdioModern
	}
	return "specification/" + v + "/basic/transports.mdx"
}

// Failf ends the check: FAIL for a MUST clause, WARN for a SHOULD clause.
func (h *H) Failf(format string, args ...any) {
	st := reports.Fail
	if h.rule.Level == reports.Should {
		st = reports.Warn
	}
	panic(verdict{status: st, reason: fmt.Sprintf(format, args...)})
}

// Warnf ends the check as WARN, whatever the level of the check's rule: the
// server broke a SHOULD of the clause (or one the check observes beside
// it) but no MUST. A check result has one status: a check whose clause
// holds a MUST and a SHOULD FAILs when the MUST is broken (Failf), and only
// otherwise WARNs for the SHOULD. The reported level is SHOULD.
func (h *H) Warnf(format string, args ...any) {
	panic(verdict{status: reports.Warn, reason: fmt.Sprintf(format, args...), level: reports.Should})
}

// Skip ends the check as SKIP with the reason.
func (h *H) Skip(reason string) { panic(verdict{status: reports.Skip, reason: reason}) }

// Errorf ends the check as ERROR: the harness could not run it.
func (h *H) Errorf(format string, args ...any) {
	panic(verdict{status: reports.Error, reason: fmt.Sprintf(format, args...)})
}

// Notef records an observation in the transcript and the PASS reason.
func (h *H) Notef(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	h.notes = append(h.notes, s)
	switch {
	case len(h.hconns) > 0:
		h.hconns[len(h.hconns)-1].Proxy.Transcript().Note("%s", s)
	case len(h.conns) > 0:
		h.conns[len(h.conns)-1].proxyTranscript().Note("%s", s)
	}
}

// Version is the negotiated protocol version.
func (h *H) Version() string { return h.session.Version }

// Ctx is the check's context.
func (h *H) Ctx() context.Context { return h.ctx }

// Role returns the manifest's role (run has already skipped when absent).
func (h *H) Role(name string) Role { return h.target.Roles[name] }

// Connect starts the target behind a new fault proxy link with rules
// installed before the first message, and negotiates the run's version.
func (h *H) Connect(rules ...faultproxy.Rule) *Conn {
	ctx, cancel := context.WithTimeout(h.ctx, h.cfg.StartTimeout)
	defer cancel()
	c, err := startConn(ctx, h.cfg, h.target, rules, h.session, h)
	if err != nil {
		h.Errorf("start target: %v", err)
	}
	return c
}

// startConn starts the target, installs rules and negotiates: with a known
// session it forces that version, otherwise it probes.
func startConn(ctx context.Context, cfg *Config, target *Manifest, rules []faultproxy.Rule, sess clients.Session, h *H) (*Conn, error) {
	target, cleanup, err := expandTarget(target, h)
	if err != nil {
		return nil, err
	}
	if target.Transport == "websocket" {
		c, err := startWSConn(ctx, cfg, target, rules, sess, h)
		if err != nil {
			cleanup()
			return nil, err
		}
		c.cleanup = cleanup
		return c, nil
	}
	argv, env, err := resolveCommand(target)
	if err != nil {
		cleanup()
		return nil, err
	}
	rs := faultproxy.NewRules()
	if err := rs.Set(rules...); err != nil {
		return nil, fmt.Errorf("install rules: %w", err)
	}
	opts := faultproxy.StdioOptions{Command: argv, Env: env, Dir: target.Dir, Rules: rs}
	if cfg.Verbose {
		opts.StderrTee = os.Stderr
	}
	link, err := faultproxy.StartStdio(context.Background(), opts)
	if err != nil {
		cleanup()
		return nil, err
	}
	c := &Conn{Link: link, W: clients.NewWire(link.Client(), clients.WireOptions{ClientName: "mcp-conform"}), h: h, cleanup: cleanup}
	if h != nil {
		h.conns = append(h.conns, c)
	}
	if err := settle(ctx, c.W, cfg, target, sess); err != nil {
		err = startHint(err, func() string { return exitHint(link) }) // before close, which ends the server itself
		if h == nil {
			c.close()
			return nil, withTranscript(err, link.Transcript())
		}
		return nil, err
	}
	return c, nil
}

// negotiator is what both wire clients offer for version negotiation.
type negotiator interface {
	Negotiate(ctx context.Context, force string) (clients.Session, error)
	SetSession(clients.Session)
}

// settle brings a new connection to the run's version: a known modern
// session is reused as is (there is no handshake to repeat); otherwise the
// version the probe found (or --spec) is forced through negotiation.
func settle(ctx context.Context, w negotiator, cfg *Config, target *Manifest, sess clients.Session) error {
	if sess.Era == clients.EraModern {
		w.SetSession(sess)
		return nil
	}
	force := cfg.force(target)
	if sess.Version != "" {
		force = sess.Version
	}
	if _, err := w.Negotiate(ctx, force); err != nil {
		return fmt.Errorf("negotiate (%s): %w", orNewest(force), err)
	}
	return nil
}

// startHint adds to a failed start's error how the server ended (hint
// waits a little for it); nothing to a refused negotiation, whose server
// answered and lives on.
func startHint(err error, hint func() string) error {
	if errors.Is(err, clients.ErrNegotiation) {
		return err
	}
	return fmt.Errorf("%w%s", err, hint())
}

func orNewest(v string) string {
	if v == "" {
		return "newest accepted version"
	}
	return v
}

// exitHint says how the server ended, when it has. It is called on failure
// paths, where a server whose output just ended is usually being reaped: it
// waits a little for the exit status.
func exitHint(link *faultproxy.Stdio) string {
	t := time.NewTimer(500 * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return ""
	case <-link.Exited():
		if err := link.ExitErr(); err != nil {
			return fmt.Sprintf(" (server %v)", err)
		}
		return " (server exited)"
	}
}

func (c *Conn) close() {
	if c.W != nil {
		_ = c.W.Close()
	}
	if c.Link != nil {
		_ = c.Link.Close()
	}
	if c.WS != nil {
		_ = c.WS.Close()
	}
	if c.Proc != nil {
		c.Proc.Close(2 * time.Second)
	}
	if c.cleanup != nil {
		c.cleanup()
	}
}

// transcript merges the transcripts of the check's connections.
func (h *H) transcript() []reports.Entry {
	out := append([]reports.Entry(nil), h.startTranscript...)
	var trs []*faultproxy.Transcript
	for _, c := range h.conns {
		trs = append(trs, c.proxyTranscript())
	}
	for _, c := range h.hconns {
		trs = append(trs, c.Proxy.Transcript())
	}
	for i, tr := range trs {
		if len(trs) > 1 {
			out = append(out, reports.Entry{Kind: "note", Text: fmt.Sprintf("connection %d", i+1)})
		}
		sw := h.schemaWalkFor(i + 1) // SCHEMA-VALID, passively (schema_valid.go)
		for _, e := range tr.Entries() {
			re := toReportEntry(e)
			out = append(out, re)
			if sw == nil {
				continue
			}
			if mark, bad := sw.see(e, re); bad {
				out = append(out, mark)
			}
		}
	}
	return out
}

// A message larger than maxReportRaw (ROBUST-OVERSIZE sends 8 MiB) is
// shown in a report by its first reportRawHead bytes and its size.
const (
	maxReportRaw  = 256 << 10
	reportRawHead = 2 << 10
)

func toReportEntry(e faultproxy.Entry) reports.Entry {
	re := reports.Entry{
		AtMs: float64(e.At.Microseconds()) / 1000, Kind: string(e.Kind), Dir: string(e.Dir),
		Rule: e.Rule, Fault: e.Fault, Text: e.Text, Stream: e.Stream,
		OnProcess: e.OnProcess,
	}
	if e.Outcome != 0 {
		re.Outcome = e.Outcome.String()
	}
	if e.Kind == faultproxy.EntryMessage || e.Kind == faultproxy.EntryFault {
		re.Seq = e.Seq
	}
	if e.HTTP != nil {
		re.HTTP = &reports.HTTPHead{Method: e.HTTP.Method, Path: e.HTTP.Path, Status: e.HTTP.Status, Header: e.HTTP.Header}
	}
	if e.Raw != nil {
		switch {
		case len(e.Raw) > maxReportRaw:
			head := e.Raw[:reportRawHead]
			re.Text = fmt.Sprintf("%s… (%d bytes in all; clipped to %d in the report)", strings.ToValidUTF8(string(head), "\uFFFD"), len(e.Raw), reportRawHead)
		case !utf8.Valid(e.Raw):
			// JSON reports are UTF-8: show the bytes, escaped.
			re.Text = "not UTF-8: " + strconv.Quote(string(e.Raw))
		case json.Valid(e.Raw):
			re.Raw = json.RawMessage(e.Raw)
		case e.Stream != "" && !strings.HasPrefix(e.Stream, "WS#") && e.Kind == faultproxy.EntryMessage:
			re.Raw, re.Text = sseEntry(e.Raw)
		default:
			re.Text = string(e.Raw)
		}
	}
	return re
}

// sseEntry shows an SSE event of a transcript as its JSON-RPC message (the
// data, when it is JSON) and its other fields as text.
func sseEntry(raw []byte) (json.RawMessage, string) {
	ev, err := sse.NewReader(bytes.NewReader(raw), sse.Options{Lenient: true}).Next()
	if err != nil {
		return nil, string(raw)
	}
	var fields []string
	if ev.IsComment {
		return nil, "sse comment: " + ev.Comment
	}
	if ev.HasID {
		fields = append(fields, "id: "+ev.ID)
	}
	if ev.Type != "" {
		fields = append(fields, "event: "+ev.Type)
	}
	if ev.HasRetry {
		fields = append(fields, fmt.Sprintf("retry: %d", ev.Retry))
	}
	if ev.HasData && json.Valid([]byte(ev.Data)) {
		return json.RawMessage(ev.Data), strings.Join(append([]string{"sse"}, fields...), " ")
	}
	return nil, string(raw)
}

// ---- helpers check bodies share ----

// op returns a context bounded by the ordinary exchange timeout.
func (h *H) op() (context.Context, context.CancelFunc) {
	return context.WithTimeout(h.ctx, h.cfg.OpTimeout)
}

// StartRole sends a tools/call of the role's tool with an explicit id and,
// when token is not nil, a progress token.
func (c *Conn) StartRole(role string, id jsonrpc.ID, token any) *clients.Pending {
	r := c.h.Role(role)
	args := map[string]any{}
	for k, v := range r.Arguments {
		args[k] = v
	}
	params := map[string]any{"name": r.Tool, "arguments": args}
	if token != nil {
		params = c.W.ProgressParams(token, params)
	}
	ctx, cancel := c.h.op()
	defer cancel()
	p, err := c.W.Start(ctx, id, "tools/call", params)
	if err != nil {
		c.h.Errorf("send tools/call %s: %v", r.Tool, err)
	}
	return p
}

// Await waits for the reply to p within the call timeout; a server that
// never answers or dies fails the check with what it did.
func (c *Conn) Await(p *clients.Pending, what string) clients.Message {
	ctx, cancel := context.WithTimeout(c.h.ctx, c.h.cfg.CallTimeout)
	defer cancel()
	m, err := p.Wait(ctx)
	if err != nil {
		c.h.failServer("%s: no response for id %s: %v%s", what, p.ID(), err, c.exitHint())
	}
	return m
}

// barrierMethod is the request a check sends to learn that the server is
// alive and has read everything sent before: ping, which 2026-07-28 removed
// (changelog item 5), and there server/discover, which every modern server
// MUST implement.
func barrierMethod(s clients.Session) string {
	if s.Era == clients.EraModern {
		return "server/discover"
	}
	return "ping"
}

// Ping sends the era's barrier request (ping, or server/discover in
// 2026-07-28) and waits for its answer: the server is alive and has read
// everything sent before it.
func (c *Conn) Ping(why string) clients.Message {
	ctx, cancel := c.h.op()
	defer cancel()
	method := barrierMethod(c.W.Session())
	m, err := c.W.Call(ctx, method, nil)
	if err != nil {
		c.h.failServer("server did not answer %s %s: %v%s", method, why, err, c.exitHint())
	}
	if m.Env.Kind != jsonrpc.Response {
		c.h.failServer("%s %s answered with %s: %s", method, why, m.Env.Kind, m.Raw)
	}
	return m
}

// Cancel sends notifications/cancelled for id.
func (c *Conn) Cancel(id jsonrpc.ID, reason string) {
	ctx, cancel := c.h.op()
	defer cancel()
	if err := c.W.Notify(ctx, "notifications/cancelled", map[string]any{"requestId": id.Raw(), "reason": reason}); err != nil {
		c.h.Errorf("send cancellation: %v", err)
	}
}

// SendRaw writes bytes as one message.
func (c *Conn) SendRaw(line string) {
	ctx, cancel := c.h.op()
	defer cancel()
	if err := c.W.SendRaw(ctx, []byte(line)); err != nil {
		c.h.failServer("could not write to the server (it may have exited): %v%s", err, c.exitHint())
	}
}

// WaitFirst waits up to d for the first inbound message from index from on
// that satisfies pred; ok is false when none came (see Silence for why).
func (c *Conn) WaitFirst(from int, d time.Duration, pred func(clients.Message) bool) (clients.Message, bool) {
	ctx, cancel := context.WithTimeout(c.h.ctx, d)
	defer cancel()
	m, err := c.W.WaitFor(ctx, from, pred)
	return m, err == nil
}

// Silence says why a wait of up to d for the server came back empty: the
// connection ended (and how the server ended), or nothing came within d.
func (c *Conn) Silence(d time.Duration) string {
	select {
	case <-c.W.Closed():
		err := c.W.Err()
		if err == nil {
			err = io.EOF
		}
		return fmt.Sprintf("before the connection ended (%v)%s", err, c.exitHint())
	default:
		return fmt.Sprintf("within %s%s", d, c.exitHint())
	}
}

// Progress returns the progress notifications from index from on, whatever
// their token.
func (c *Conn) Progress(from int) []clients.Message {
	var out []clients.Message
	for _, m := range c.W.Since(from) {
		if m.Env.Kind == jsonrpc.Notification && m.Env.Method == "notifications/progress" {
			out = append(out, m)
		}
	}
	return out
}

// RepliesTo returns the replies with id from index from on.
func (c *Conn) RepliesTo(from int, id jsonrpc.ID) []clients.Message {
	var out []clients.Message
	for _, m := range c.W.Since(from) {
		if m.Env.Kind.IsReply() && m.Env.ID == id {
			out = append(out, m)
		}
	}
	return out
}

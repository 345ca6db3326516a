package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/internal/schema"
	"github.com/mcp-conform/mcp-conform/protocol"
	"github.com/mcp-conform/mcp-conform/reports"
)

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

// Define declares the Ginkgo specs of a check, one per target it applies
// to; body runs with a fresh H.
func Define(c *Check, body func(h *H)) {
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
	if stray := h.StrayOutput(); stray != "" {
		// Every version's stdio transport forbids it, whatever the check's
		// own clause: a server that writes garbage never passes.
		if v.status == reports.Fail {
			v.reason += "; " + stray
		} else {
			v = verdict{status: reports.Fail, reason: stray}
		}
		v.level = reports.Must
		if target.Via() != protocol.TransportWebSocket {
			res.Spec = append(res.Spec, stdioPage(h.session.Version))
		}
	}
	if target.Via() == protocol.TransportWebSocket {
		// No WebSocket binding exists: a custom transport keeps the
		// JSON-RPC message format and the message patterns, and the check
		// holds it to the message rules every transport keeps.
		if p := CustomTransportsPage(h.session.Version); !slices.Contains(res.Spec, p) {
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
		conn.Close()
	}
	for _, conn := range h.hconns {
		conn.Close()
	}
	for _, f := range h.extra {
		f()
	}
	if h.tmp != "" {
		_ = os.RemoveAll(h.tmp)
	}
	var onTarget time.Duration
	res.Transcript, onTarget = h.transcript()
	h.recordSchemaRun()
	res.TargetMs = float64(onTarget.Microseconds()) / 1000
	res.DurationMs = float64(time.Since(start).Microseconds()) / 1000
	// No secret of the run leaves the harness in a result: the reason may
	// quote what the server said (the transcript is scrubbed entry by
	// entry at conversion).
	res.Reason = reports.Secrets.String(res.Reason)
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

// Version is the negotiated protocol version.
func (h *H) Version() string { return h.session.Version }

// Ctx is the check's context.
func (h *H) Ctx() context.Context { return h.ctx }

// Cfg is the run's configuration (timeouts, verbosity).
func (h *H) Cfg() *Config { return h.cfg }

// Target is the manifest of the target the check runs against.
func (h *H) Target() *Manifest { return h.target }

// Session is what the probe negotiated with the target (the version and
// era the check's connections use).
func (h *H) Session() clients.Session { return h.session }

// Settle negotiates w in the check's version, as Connect does: a second
// client of the check's own (a gated consumer, a reconnect).
func (h *H) Settle(ctx context.Context, w Negotiator) error {
	return settle(ctx, w, h.cfg, h.target, h.session)
}

// Role returns the manifest's role (run has already skipped when absent).
func (h *H) Role(name string) Role { return h.target.Roles[name] }

// Op returns a context bounded by the ordinary exchange timeout.
func (h *H) Op() (context.Context, context.CancelFunc) {
	return context.WithTimeout(h.ctx, h.cfg.OpTimeout)
}

package harness

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/reports"
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
	current = c.WithDefaults()
	probed = map[*Manifest]*probeResult{}
	evidence = newRunEvidence()
	memory = map[rememberKey]remembered{}
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
	conn, err := transportOf(target).Dial(ctx, cfg, target, clients.Session{})
	if err != nil {
		return clients.Session{}, nil, err
	}
	defer conn.Close()
	tools, _ := conn.ListTools(ctx, d)
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
		out = append(out, ReportEntry(e))
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

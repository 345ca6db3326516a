// Package gosdk adds to a server built on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk) the test tools mcp-conform's
// checks need and most servers lack: a long-running tool with progress and
// honest cancellation, a probe of its tagged work, a keyed mutation over a
// store you provide, the mutation's execution count, and a lookup by key.
// With them the CANCEL, PROGRESS, TIMEOUT, FLOW and IDEM checks run on your
// server, through your transport setup and your storage.
//
//	enabled, err := gosdk.Register(server, gosdk.Options{Store: myStore})
//
// # Test only
//
// The tools are registered only when MCP_CONFORM_TEST_TOOLS=1 is in the
// environment, or Options.Enabled is set. They must never ship enabled: the
// slow tool lets any client hold a handler for minutes, the mutation writes
// into your store on every call with a new key, and the probes tell anyone
// what other sessions did.
//
// # Tools (names with the default prefix "conform_")
//
//   - conform_slow {steps?, stepMs?, tag?}: steps × stepMs, one
//     notifications/progress (progress i, total steps, "step i/n") after
//     each step on the request's progress token; when the request's context
//     is cancelled it stops at the next step boundary and sends nothing more.
//   - conform_probe {tag}: what the conform_slow call tagged tag did:
//     started, stepsRun, finished, cancelled (shared by every session of the
//     server).
//   - conform_write {operation_key, note}: a keyed mutation: the first call
//     with a key claims it in the Store and commits one execution with its
//     result; a retry with the same key and note returns the stored result
//     byte for byte; the same key with another note is refused (isError);
//     a key another call holds but has not committed is refused with "retry".
//   - conform_write_stats {operation_key?}: executions committed for the key
//     (0 or 1 when the store works), or for every key without one.
//   - conform_lookup {operation_key}: the key's record: found, state, result.
//
// The annotations and argument names are the ones `mcp-conform init` reads,
// so it proposes the slow, mutation and lookup roles with their probes
// unaided. README.md has the manifest snippet.
package gosdk

import (
	"errors"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The environment the tools are switched on by.
const (
	// EnvSwitch set to "1" registers the tools (Options.Enabled does too).
	EnvSwitch = "MCP_CONFORM_TEST_TOOLS"
	// EnvStore, when Options.Store is nil, names the file of a FileStore;
	// without it the store is a MemoryStore (not durable).
	EnvStore = "MCP_CONFORM_TEST_STORE"
)

// DefaultPrefix starts every tool's name unless Options.Prefix says
// otherwise.
const DefaultPrefix = "conform_"

// The tools' names without their prefix.
const (
	NameSlow   = "slow"
	NameProbe  = "probe"
	NameWrite  = "write"
	NameStats  = "write_stats"
	NameLookup = "lookup"
)

// Options configure Register.
type Options struct {
	// Enabled registers the tools whatever the environment says; without it
	// they are registered only when MCP_CONFORM_TEST_TOOLS=1.
	Enabled bool
	// Prefix starts every tool's name (DefaultPrefix when empty), so that
	// they do not collide with the server's own tools.
	Prefix string
	// Store holds the mutation's keys, executions and results. Nil: a
	// FileStore at $MCP_CONFORM_TEST_STORE when set, else a MemoryStore,
	// which is not durable (IDEM-RESTART and IDEM-CONCURRENT over stdio
	// fail on it).
	Store Store
	// MaxSteps and MaxStepMs bound the slow tool's arguments (defaults
	// 10000 and 60000).
	MaxSteps, MaxStepMs int
	// Logf, when set, gets one line per call's start and end (completed,
	// cancelled, replayed, refused), so a harness's transcript of the
	// server's stderr shows whether work went on.
	Logf func(format string, args ...any)
}

// Switched reports whether the environment switches the tools on.
func Switched() bool { return os.Getenv(EnvSwitch) == "1" }

// New returns the test tools' shared state (the store, and the probe's
// record of tagged work) when opts.Enabled is set or the environment
// switches them on (MCP_CONFORM_TEST_TOOLS=1); nil when off. Add them with
// AddTo to every *mcp.Server that serves a session: a server whose HTTP
// handler makes a new *mcp.Server per request or session shares one Tools
// among them, so the probe sees the work of every session. It fails when
// the store named by MCP_CONFORM_TEST_STORE cannot be opened.
func New(opts Options) (*Tools, error) {
	if !opts.Enabled && !Switched() {
		return nil, nil
	}
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	if opts.MaxSteps <= 0 {
		opts.MaxSteps = 10000
	}
	if opts.MaxStepMs <= 0 {
		opts.MaxStepMs = 60000
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	if opts.Store == nil {
		if path := os.Getenv(EnvStore); path != "" {
			fs, err := OpenFileStore(path)
			if err != nil {
				return nil, fmt.Errorf("testtools: %s: %w", EnvStore, err)
			}
			opts.Store = fs
		} else {
			opts.Store = NewMemoryStore()
			opts.Logf("testtools: the mutation's store is in memory (not durable); set %s or Options.Store", EnvStore)
		}
	}
	opts.Logf("testtools: test tools %s* switched on (%s=1 or Options.Enabled): never ship them enabled", opts.Prefix, EnvSwitch)
	return &Tools{opts: opts, work: newWorkLog()}, nil
}

// Register adds the test tools to server when opts.Enabled is set or the
// environment switches them on (MCP_CONFORM_TEST_TOOLS=1), and reports
// whether it did: New(opts), then AddTo(server). A tool of the server's with
// the same name as one of these is replaced (the SDK's AddTool): choose
// Options.Prefix to avoid it.
func Register(server *mcp.Server, opts Options) (bool, error) {
	t, err := New(opts)
	if t == nil || err != nil {
		return false, err
	}
	if server == nil {
		return false, errors.New("testtools: nil server")
	}
	t.AddTo(server)
	return true, nil
}

// Tools is the test tools' state, shared by every server they are added to.
type Tools struct {
	opts Options
	work *workLog
}

// AddTo adds the five tools to server.
func (t *Tools) AddTo(server *mcp.Server) {
	t.addSlow(server)
	t.addMutation(server)
}

// Store is the mutation's store.
func (t *Tools) Store() Store { return t.opts.Store }

func (t *Tools) name(n string) string { return t.opts.Prefix + n }

func ptr[T any](v T) *T { return &v }

package clientsuite

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// ContractVersion is the version of the driver contract
// (docs/CLIENT-DRIVERS.md), in MCP_CONFORM_DRIVER_CONTRACT.
const ContractVersion = "1"

// The environment of a driver (docs/CLIENT-DRIVERS.md).
const (
	EnvContract  = "MCP_CONFORM_DRIVER_CONTRACT"
	EnvScenario  = "MCP_CONFORM_SCENARIO"
	EnvVersion   = "MCP_CONFORM_PROTOCOL_VERSION"
	EnvTransport = "MCP_CONFORM_TRANSPORT"
	EnvClientID  = "MCP_CONFORM_CLIENT_ID"
	EnvContext   = "MCP_CONFORM_CONTEXT"
	EnvURL       = "MCP_CONFORM_URL"
	EnvServer    = "MCP_CONFORM_SERVER"
	EnvServerArg = "MCP_CONFORM_SERVER_ARGV"
)

// Params is the scenario's context (MCP_CONFORM_CONTEXT): what the driver
// asks its client to do.
type Params struct {
	Scenario        string `json:"scenario"`
	ProtocolVersion string `json:"protocolVersion"`
	Transport       string `json:"transport"`
	ClientID        string `json:"clientId"`
	// Tool and Arguments are the call to make.
	Tool      string         `json:"tool,omitempty"`
	Arguments map[string]any `json:"arguments,omitempty"`
	// Calls is 2 when an echo call goes at the same time (tools-call).
	Calls int `json:"calls,omitempty"`
	// InitializeTimeoutMs bounds connecting: initialize (2025) or the
	// server/discover probe (2026-07-28).
	InitializeTimeoutMs int64 `json:"initializeTimeoutMs"`
	// TimeoutMs is the request timeout of the scenario's calls;
	// ResetTimeoutOnProgress resets it on progress; MaxTotalTimeoutMs is
	// the maximum, never reset.
	TimeoutMs              int64 `json:"timeoutMs,omitempty"`
	ResetTimeoutOnProgress bool  `json:"resetTimeoutOnProgress,omitempty"`
	MaxTotalTimeoutMs      int64 `json:"maxTotalTimeoutMs,omitempty"`
	// Progress asks for progress notifications on the call.
	Progress  bool             `json:"progress,omitempty"`
	Retry     *RetryParams     `json:"retry,omitempty"`
	Reconnect *ReconnectParams `json:"reconnect,omitempty"`
	// LingerMs is how long to keep the connection after the call ended.
	LingerMs int64 `json:"lingerMs"`
	// DeadlineMs bounds the run: the driver is killed then.
	DeadlineMs int64 `json:"deadlineMs"`
}

// RetryParams says what the tool is in the seeds' retry matrix.
type RetryParams struct {
	// Class is "safe", "conditional" or "unsafe".
	Class string `json:"class"`
	// Key is the idempotency key argument of a conditional tool.
	Key string `json:"key,omitempty"`
	// MaxAttempts bounds the attempts in all.
	MaxAttempts int `json:"maxAttempts,omitempty"`
}

// ReconnectParams bounds reconnection attempts.
type ReconnectParams struct {
	MaxAttempts int `json:"maxAttempts,omitempty"`
}

// Timeout, MaxTotal and Linger are the durations of Params.
func (p Params) Timeout() time.Duration { return time.Duration(p.TimeoutMs) * time.Millisecond }
func (p Params) MaxTotal() time.Duration {
	return time.Duration(p.MaxTotalTimeoutMs) * time.Millisecond
}
func (p Params) Linger() time.Duration { return time.Duration(p.LingerMs) * time.Millisecond }

// InitializeTimeout is the duration of InitializeTimeoutMs.
func (p Params) InitializeTimeout() time.Duration {
	return time.Duration(p.InitializeTimeoutMs) * time.Millisecond
}

// defaultInitializeTimeout is the connection timeout (ms) of every scenario
// but initialize-timeout: long enough for a stdio server to start on a
// loaded machine.
const defaultInitializeTimeout = 10000

// Server is the server behaviour of a scenario: the reference server of
// fixtures/, with at most these twists.
type Server struct {
	// Mutant is a fixtures mutant standing for a scripted behaviour (e.g.
	// respond-after-cancel: a server that answers a cancelled request, so
	// that a late response exists).
	Mutant string
	// Heartbeat is the SSE comment interval on silent streams (HTTP); zero
	// means the grader's default.
	Heartbeat time.Duration
	// SSERetry is the retry field of 2025-11-25 priming events (HTTP).
	SSERetry time.Duration
}

// Scenario is one thing a client is asked to live through.
type Scenario struct {
	Name  string
	Title string
	// Does says what the driver does.
	Does string
	// Transports and Versions the scenario runs on; Skip names the
	// (version, transport) pairs excluded, with the reason.
	Transports []string
	Versions   []string
	Skip       map[string]string
	// Clients is how many client processes run at once (the herd); 0 is 1.
	Clients int
	Server  Server
	// base builds the parameters of a run (scale multiplies durations).
	base func(v, tr string, scale float64) Params
	// rules builds the proxy's rules of a run (fresh state each call).
	rules func(v, tr string, scale float64) []faultproxy.Rule
	// MayFail: the server behaviour makes the client fail; its exit code
	// is not a finding.
	MayFail bool
}

// Applies reports whether the scenario runs in version v on transport tr,
// and if not why.
func (s *Scenario) Applies(v, tr string) (bool, string) {
	if !slices.Contains(s.Versions, v) {
		return false, "not in " + v
	}
	if !slices.Contains(s.Transports, tr) {
		return false, "not on " + tr
	}
	if why, ok := s.Skip[v+" "+tr]; ok {
		return false, why
	}
	return true, ""
}

// NumClients is how many client processes a run starts.
func (s *Scenario) NumClients() int { return max(s.Clients, 1) }

// Params returns the parameters of a run for client number i.
func (s *Scenario) Params(v, tr string, scale float64, i int) Params {
	p := s.base(v, tr, scale)
	p.Scenario, p.ProtocolVersion, p.Transport = s.Name, v, tr
	if p.InitializeTimeoutMs == 0 {
		p.InitializeTimeoutMs = ms(defaultInitializeTimeout, scale)
	}
	p.ClientID = fmt.Sprintf("client-%d", i+1)
	if s.Clients > 1 {
		p.ClientID = fmt.Sprintf("herd-%d", i)
		if p.Arguments != nil {
			args := map[string]any{}
			for k, a := range p.Arguments {
				args[k] = a
			}
			args["tag"] = p.ClientID
			p.Arguments = args
		}
	}
	return p
}

// Rules returns the proxy's rules of a run.
func (s *Scenario) Rules(v, tr string, scale float64) []faultproxy.Rule {
	if s.rules == nil {
		return nil
	}
	return s.rules(v, tr, scale)
}

// Deadline is the bound on a run.
func (s *Scenario) Deadline(v, tr string, scale float64) time.Duration {
	return time.Duration(s.base(v, tr, scale).DeadlineMs) * time.Millisecond
}

// ms scales a duration given in milliseconds.
func ms(n int64, scale float64) int64 { return int64(float64(n) * scale) }

// clockedSlow is a call of slow (steps of stepMs, with progress) whose
// idle clock of timeoutMs resets on progress, bounded by maxMs, lingering
// lingerAfterClock after the clocks and ending by 8 s (all scaled by sc).
func clockedSlow(steps, stepMs int, timeoutMs, maxMs int64, sc float64) Params {
	return Params{Tool: "slow", Arguments: map[string]any{"steps": steps, "stepMs": stepMs}, Progress: true,
		TimeoutMs: ms(timeoutMs, sc), ResetTimeoutOnProgress: true, MaxTotalTimeoutMs: ms(maxMs, sc),
		LingerMs: ms(lingerAfterClock, sc), DeadlineMs: ms(8000, sc)}
}

var scenarios []*Scenario

func scenario(s *Scenario) *Scenario {
	scenarios = append(scenarios, s)
	return s
}

// Scenarios returns every scenario, in declaration order.
func Scenarios() []*Scenario { return slices.Clone(scenarios) }

// LookupScenario finds a scenario by name.
func LookupScenario(name string) (*Scenario, bool) {
	for _, s := range scenarios {
		if s.Name == name {
			return s, true
		}
	}
	return nil, false
}

// ScenarioNames lists the scenario names.
func ScenarioNames() []string {
	var out []string
	for _, s := range scenarios {
		out = append(out, s.Name)
	}
	return out
}

// PingID is the id of the ping request the proxy sends the client in
// tools-call.
const PingID = `"mcp-conform-ping-1"`

var pingRequest = []byte(`{"jsonrpc":"2.0","id":` + PingID + `,"method":"ping"}`)

// freshKey is a new idempotency key.
func freshKey() string {
	b := make([]byte, 10)
	_, _ = rand.Read(b)
	return "mcpc-" + hex.EncodeToString(b)
}

var allTransports = []string{Stdio, HTTP}

// The scenarios (docs/CLIENT-DRIVERS.md has the table).
var (
	scToolsCall = scenario(&Scenario{
		Name:       "tools-call",
		Title:      "an ordinary session: two calls at once, and (2025) a ping from the server",
		Does:       "connect; call slow (with progress) and echo at the same time; print the outcomes; shut down (the calls' results wait until the client answered the server's ping)",
		Transports: allTransports, Versions: Versions,
		base: func(_, _ string, sc float64) Params {
			return Params{Tool: "slow", Arguments: map[string]any{"steps": 2, "stepMs": 50}, Calls: 2, Progress: true,
				TimeoutMs: ms(10000, sc), ResetTimeoutOnProgress: true, DeadlineMs: ms(15000, sc)}
		},
		rules: func(v, tr string, sc float64) []faultproxy.Rule {
			if v == V20260728 {
				return nil // 2026-07-28 removed ping
			}
			// The calls' results are held until the ping is answered
			// (at most the check's bound): a client that shuts down as
			// soon as its calls end has had the whole bound to answer.
			return pingRules(tr, time.Duration(float64(pingPrompt)*sc))
		},
	})

	scTimeoutCancel = scenario(&Scenario{
		Name:       "timeout-cancel",
		Title:      "a call that outlives the client's timeout, answered late after the cancellation",
		Does:       "call slow (it answers after 20 s) with timeoutMs 300; the client times out and cancels; linger; print the outcome",
		Transports: allTransports, Versions: Versions,
		Server: Server{Mutant: "respond-after-cancel"},
		base: func(_, _ string, sc float64) Params {
			return clockedSlow(1, 20000, 300, 5000, sc)
		},
	})

	scProgressMax = scenario(&Scenario{
		Name:       "progress-max-timeout",
		Title:      "a call that reports progress for ever: the idle clock keeps resetting, the maximum fires",
		Does:       "call slow (progress every 100 ms for 30 s) with timeoutMs 800 reset on progress and maxTotalTimeoutMs 2000",
		Transports: allTransports, Versions: Versions,
		base: func(_, _ string, sc float64) Params {
			return clockedSlow(300, 100, 800, 2000, sc)
		},
	})

	scHeartbeat = scenario(&Scenario{
		Name:       "heartbeat-idle",
		Title:      "a silent call whose stream carries SSE comments: the idle clock still fires",
		Does:       "call slow (silent for 20 s, a comment every 100 ms on its stream) with timeoutMs 800 reset on progress",
		Transports: []string{HTTP}, Versions: Versions,
		Server: Server{Heartbeat: 100 * time.Millisecond},
		base: func(_, _ string, sc float64) Params {
			return clockedSlow(1, 20000, 800, 4000, sc)
		},
	})

	scRetryKeyed = scenario(&Scenario{
		Name:       "retry-keyed",
		Title:      "a keyed mutation whose response is lost",
		Does:       "call create_support_ticket (keyed by operation_key) with retry class conditional; the client retries as it does",
		Transports: allTransports, Versions: Versions,
		base: func(_, _ string, sc float64) Params {
			return Params{Tool: "create_support_ticket", Arguments: map[string]any{"operation_key": freshKey(), "title": "Cannot sign in"},
				TimeoutMs: ms(400, sc), MaxTotalTimeoutMs: ms(5000, sc),
				Retry:     &RetryParams{Class: "conditional", Key: "operation_key", MaxAttempts: 3},
				Reconnect: &ReconnectParams{MaxAttempts: 2}, DeadlineMs: ms(10000, sc)}
		},
		rules: func(string, string, float64) []faultproxy.Rule { return []faultproxy.Rule{loseFirstCall()} },
	})

	scRetryUnsafe = scenario(&Scenario{
		Name:       "retry-unsafe",
		Title:      "an unsafe mutation (no key, not read-only) whose response is lost",
		Does:       "call append_note with retry class unsafe; the client does what it does",
		Transports: allTransports, Versions: Versions,
		Skip: map[string]string{V20260728 + " " + HTTP: "2026-07-28 Streamable HTTP: the specification makes a client re-issue a request whose stream broke (changelog, 9), so a lost answer there is a re-issue, not a blind retry"},
		base: func(_, _ string, sc float64) Params {
			return Params{Tool: "append_note", Arguments: map[string]any{"text": "mcp-conform " + freshKey()},
				TimeoutMs: ms(400, sc), MaxTotalTimeoutMs: ms(5000, sc),
				Retry:     &RetryParams{Class: "unsafe", MaxAttempts: 3},
				Reconnect: &ReconnectParams{MaxAttempts: 2}, LingerMs: ms(500, sc), DeadlineMs: ms(8000, sc)}
		},
		rules: func(string, string, float64) []faultproxy.Rule { return []faultproxy.Rule{loseFirstCall()} },
	})

	scSSEResume = scenario(&Scenario{
		Name:       "sse-resume",
		Title:      "a resumable SSE stream cut in the middle of a call (2025)",
		Does:       "call slow (6 steps of 100 ms, with progress) with timeoutMs 3000; the proxy cuts the stream after the second progress",
		Transports: []string{HTTP}, Versions: legacyVersions,
		Server: Server{SSERetry: 500 * time.Millisecond},
		base: func(_, _ string, sc float64) Params {
			return Params{Tool: "slow", Arguments: map[string]any{"steps": 6, "stepMs": 100}, Progress: true,
				TimeoutMs: ms(3000, sc), ResetTimeoutOnProgress: true, MaxTotalTimeoutMs: ms(10000, sc),
				Retry: &RetryParams{Class: "safe", MaxAttempts: 3}, Reconnect: &ReconnectParams{MaxAttempts: 2}, DeadlineMs: ms(10000, sc)}
		},
		rules: func(string, string, float64) []faultproxy.Rule { return []faultproxy.Rule{cutAfterSecondProgress()} },
	})

	scReissue = scenario(&Scenario{
		Name:       "reissue",
		Title:      "a response stream cut in the middle of a call (2026-07-28)",
		Does:       "call slow (6 steps of 100 ms, with progress) with timeoutMs 3000; the proxy cuts the stream after the second progress",
		Transports: []string{HTTP}, Versions: []string{V20260728},
		base: func(_, _ string, sc float64) Params {
			return Params{Tool: "slow", Arguments: map[string]any{"steps": 6, "stepMs": 100}, Progress: true,
				TimeoutMs: ms(3000, sc), ResetTimeoutOnProgress: true, MaxTotalTimeoutMs: ms(10000, sc),
				Retry: &RetryParams{Class: "safe", MaxAttempts: 3}, Reconnect: &ReconnectParams{MaxAttempts: 2}, DeadlineMs: ms(10000, sc)}
		},
		rules: func(string, string, float64) []faultproxy.Rule { return []faultproxy.Rule{cutAfterSecondProgress()} },
	})

	scSession404 = scenario(&Scenario{
		Name:       "session-404",
		Title:      "the session is gone: HTTP 404 to a request carrying it",
		Does:       "call echo; the proxy answers it 404; the client starts a new session as it does",
		Transports: []string{HTTP}, Versions: legacyVersions,
		base: func(_, _ string, sc float64) Params {
			return Params{Tool: "echo", Arguments: map[string]any{"text": "hello"}, TimeoutMs: ms(3000, sc),
				Retry: &RetryParams{Class: "safe", MaxAttempts: 2}, DeadlineMs: ms(8000, sc)}
		},
		rules: func(string, string, float64) []faultproxy.Rule {
			return []faultproxy.Rule{{Name: "session-gone-404",
				Match: faultproxy.Match{Dir: faultproxy.ClientToServer, Method: "tools/call"}, Times: 1,
				Fault: faultproxy.Status{Code: 404, Body: []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}`)}}}
		},
	})

	scInitTimeout = scenario(&Scenario{
		Name:       "initialize-timeout",
		Title:      "an initialize that outlives the client's timeout",
		Does:       "connect with initializeTimeoutMs 1000; the proxy holds the initialize response until the client cancels (or the run ends); the client gives up",
		Transports: allTransports, Versions: legacyVersions,
		MayFail: true,
		base: func(_, _ string, sc float64) Params {
			return Params{Tool: "echo", Arguments: map[string]any{"text": "hello"}, InitializeTimeoutMs: ms(1000, sc), TimeoutMs: ms(1000, sc),
				LingerMs: ms(300, sc), DeadlineMs: ms(8000, sc)}
		},
		rules: func(_, _ string, sc float64) []faultproxy.Rule {
			// Held until the client gives up, however long its first
			// request took to leave (a node client's first fetch loads
			// its HTTP stack): released only once a notifications/cancelled
			// has passed (a client that cancels initialize), else dropped
			// when the client closes and the run ends.
			return []faultproxy.Rule{{Name: "hold-initialize-response",
				Match: faultproxy.Match{Dir: faultproxy.ServerToClient, RepliesTo: "initialize"}, Times: 1,
				Fault: faultproxy.HoldUntil{Until: faultproxy.Match{Dir: faultproxy.ClientToServer, Method: "notifications/cancelled"},
					Max: time.Duration(ms(8000, sc)) * time.Millisecond}}}
		},
	})

	scHerd = scenario(&Scenario{
		Name:       "herd",
		Title:      "eight clients lose their streams: does each come back after a delay of its own?",
		Does:       "eight client processes call slow (tag = the client id); the proxy holds the calls until all eight came, lets them in one at a time and cuts each stream after its first progress, letting the next call in once that client reconnected; each reconnects as it does",
		Transports: []string{HTTP}, Versions: Versions,
		Clients: herdClients,
		base: func(_, _ string, sc float64) Params {
			// A call waits at the gate until every client called, then
			// while the clients before it reconnect, one after the other:
			// its timeout is long.
			return Params{Tool: "slow", Arguments: map[string]any{"steps": 60, "stepMs": 50}, Progress: true,
				TimeoutMs: ms(30000, sc), ResetTimeoutOnProgress: true, MaxTotalTimeoutMs: ms(40000, sc),
				Retry: &RetryParams{Class: "safe", MaxAttempts: 4}, Reconnect: &ReconnectParams{MaxAttempts: 4}, DeadlineMs: ms(40000, sc)}
		},
		rules: func(_, _ string, sc float64) []faultproxy.Rule {
			d := func(n int64) time.Duration { return time.Duration(ms(n, sc)) * time.Millisecond }
			return herdRules(herdClients, d(herdGatherMs), d(herdPaceMs), d(40000))
		},
	})
)

// lingerAfterClock is how long (ms) a driver keeps its connection after a
// call its own clock ended: much longer than exitSlack, so that a stream
// closed when the clock fired is never taken for one closed by the exit.
const lingerAfterClock = 1000

// herdClients is how many client processes the herd runs.
const herdClients = 8

// herdGatherMs bounds (ms) how long the herd's gate waits, from the first
// call, for every client's call before the first turn begins (a client
// that never calls does not stall the others; eight node processes
// starting on a loaded 2-core machine called within 4 s of each other).
const herdGatherMs = 10000

// herdPaceMs bounds (ms) how long the herd waits for a cut client's
// reconnection before letting the next call in (a client that does not
// reconnect does not stall the others); the contract's reconnection
// delays at attempt 0 are shorter.
const herdPaceMs = 2500

// cutAfterSecondProgress cuts a response stream right after delivering
// its second progress notification.
func cutAfterSecondProgress() faultproxy.Rule {
	return faultproxy.Rule{Name: "cut-after-second-progress",
		Match: faultproxy.Match{Dir: faultproxy.ServerToClient, Method: "notifications/progress"}, Nth: 2,
		Fault: faultproxy.Cut{Deliver: true}}
}

// loseFirstCall loses every answer to the first tools/call: the live one
// and any replay of it on a resumed stream, so that only a new request can
// get an answer.
func loseFirstCall() faultproxy.Rule {
	return faultproxy.Rule{Name: "lose-first-call-answer",
		Match: faultproxy.Match{Dir: faultproxy.ServerToClient, RepliesTo: "tools/call"},
		Fault: &loseCall{}}
}

// loseCall is a fault of this package: it drops every reply carrying the
// id of the first reply it sees, and lets every other through.
type loseCall struct {
	// mu guards id: HTTP streams are relayed concurrently, so Apply may
	// run on several at once.
	mu sync.Mutex
	id jsonrpc.ID
}

// Apply drops the replies to the first call.
func (l *loseCall) Apply(_ context.Context, c faultproxy.Conduit, msg *faultproxy.Message) {
	id := msg.Envelope().ID
	l.mu.Lock()
	if l.id.IsZero() {
		l.id = id
	}
	lost := l.id == id
	l.mu.Unlock()
	if lost {
		c.Record(msg, "drop", faultproxy.OutcomeDropped, "the answer to the first call is lost (every copy of it)")
		return
	}
	_ = c.Deliver(msg)
}

// isLegacy reports whether v is a 2025 version.
func isLegacy(v string) bool { return strings.HasPrefix(v, "2025-") }

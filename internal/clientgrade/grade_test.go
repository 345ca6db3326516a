package clientgrade

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcp-conform/mcp-conform/clientsuite"
	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/fixtures"
	"github.com/mcp-conform/mcp-conform/internal/reliabledriver"
	"github.com/mcp-conform/mcp-conform/reports"
)

// driverEnv makes the test binary the reliable client's driver.
const driverEnv = "CLIENTGRADE_TEST_DRIVER"

// TestMain lets this test binary play every program of a run, as the
// mcp-conform binary does: the client's driver (reliabledriver), the stdio
// server side (serve-scenario) and the reference server ("fixture").
func TestMain(m *testing.M) {
	switch {
	case len(os.Args) > 1 && os.Args[1] == ServeCommand:
		os.Exit(serveFromArgs(os.Args[2:]))
	case len(os.Args) > 1 && os.Args[1] == "fixture":
		os.Exit(fixtureFromArgs(os.Args[2:]))
	case os.Getenv(driverEnv) == "1":
		os.Exit(reliabledriver.Main(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
	}
	goleak.VerifyTestMain(m)
}

func serveFromArgs(args []string) int {
	var o ServeOptions
	fs := flag.NewFlagSet(ServeCommand, flag.ContinueOnError)
	fs.StringVar(&o.Scenario, "scenario", "", "")
	fs.StringVar(&o.Version, "version", "", "")
	fs.StringVar(&o.Report, "report", "", "")
	fs.StringVar(&o.Token, "token", "", "")
	fs.Float64Var(&o.Scale, "scale", 1, "")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	exe, _ := os.Executable()
	o.Exe, o.In, o.Out, o.Signals = exe, os.Stdin, os.Stdout, NotifySignals()
	return ServeScenario(context.Background(), o)
}

func fixtureFromArgs(args []string) int {
	fs := flag.NewFlagSet("fixture", flag.ContinueOnError)
	mutant := fs.String("mutant", "", "")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	if err := fixtures.Serve(ctx, os.Stdin, os.Stdout, fixtures.Options{Mutant: *mutant}); err != nil && !errors.Is(err, context.Canceled) {
		return 1
	}
	return 0
}

func testOptions(t *testing.T, driverArgs string) Options {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := shellQuote(exe)
	if driverArgs != "" {
		cmd += " " + driverArgs
	}
	return Options{Command: cmd, Exe: exe, Env: []string{driverEnv + "=1", "GORACE=atexit_sleep_ms=0"}, Jobs: 4}
}

func grade(t *testing.T, o Options) *reports.Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := Grade(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// wantVerdict returns check id of rep on transport tr in version v,
// failing the test unless it ran with status want and a reason containing
// evidence.
func wantVerdict(t *testing.T, rep *reports.Report, id, tr, v string, want reports.Status, evidence string) reports.Check {
	t.Helper()
	c, ok := find(rep, id, tr, v)
	if !ok {
		t.Fatalf("%s did not run", id)
	}
	if c.Status != want || !strings.Contains(c.Reason, evidence) {
		t.Fatalf("%s: %s %q, want %s with %q", id, c.Status, c.Reason, want, evidence)
	}
	return c
}

func find(rep *reports.Report, id, tr, v string) (reports.Check, bool) {
	for _, c := range rep.Checks {
		if c.ID == id && c.Transport == tr && c.ProtocolVersion == v {
			return c, true
		}
	}
	return reports.Check{}, false
}

// TestReliableClientPasses: the reliable client passes the checks of four
// scenarios on both transports in one version of each era, and every
// check of them ran.
func TestReliableClientPasses(t *testing.T) {
	o := testOptions(t, "")
	o.Scenarios = []string{"tools-call", "timeout-cancel", "retry-keyed", "sse-resume", "reissue"}
	o.Versions = []string{clientsuite.V20251125, clientsuite.V20260728}
	rep := grade(t, o)
	if rep.Target.UnderTest != reports.UnderTestClient {
		t.Errorf("target %+v", rep.Target)
	}
	for _, c := range rep.Checks {
		if c.Status != reports.Pass {
			t.Errorf("%s [%s %s]: %s %s", c.ID, c.Transport, c.ProtocolVersion, c.Status, c.Reason)
		}
		if len(c.Clauses) == 0 && strings.HasPrefix(c.Spec[0], "specification/") {
			t.Errorf("%s: no clause ids in the report", c.ID)
		}
	}
	for _, want := range []struct{ id, tr, v string }{
		{"CLIENT-PING-ANSWERED", "stdio", clientsuite.V20251125},
		{"CLIENT-PING-ANSWERED", "http", clientsuite.V20251125},
		{"CLIENT-TIMEOUT-CANCEL", "http", clientsuite.V20260728},
		{"CLIENT-HTTP-NO-CANCEL-NOTIFICATION", "http", clientsuite.V20260728},
		{"CLIENT-LATE-RESPONSE-IGNORED", "stdio", clientsuite.V20260728},
		{"CLIENT-RETRY-SAME-KEY", "http", clientsuite.V20251125},
		{"CLIENT-RESUME-LAST-EVENT-ID", "http", clientsuite.V20251125},
		{"CLIENT-RESUME-RETRY-WAIT", "http", clientsuite.V20251125},
		{"CLIENT-REISSUE-NEW-ID", "http", clientsuite.V20260728},
		{"CLIENT-STDIO-SHUTDOWN", "stdio", clientsuite.V20251125},
		{"CLIENT-METHOD-HEADERS", "http", clientsuite.V20260728},
	} {
		if _, ok := find(rep, want.id, want.tr, want.v); !ok {
			t.Errorf("%s [%s %s] did not run", want.id, want.tr, want.v)
		}
	}
}

// TestDefectsAreCaught: a few defects, each caught by its check with the
// transcript as evidence.
func TestDefectsAreCaught(t *testing.T) {
	for _, tc := range []struct {
		mutant, scenario, tr, v, check string
		want                           reports.Status
		evidence                       string
	}{
		{"no-cancel-on-timeout", "timeout-cancel", "stdio", clientsuite.V20260728, "CLIENT-TIMEOUT-CANCEL", reports.Warn, "was never cancelled"},
		{"wrong-cancel-signal", "timeout-cancel", "http", clientsuite.V20260728, "CLIENT-HTTP-NO-CANCEL-NOTIFICATION", reports.Fail, "POSTed notifications/cancelled"},
		{"ignore-ping", "tools-call", "http", clientsuite.V20251125, "CLIENT-PING-ANSWERED", reports.Fail, "never answered"},
		{"sigterm-first", "tools-call", "stdio", clientsuite.V20251125, "CLIENT-STDIO-SHUTDOWN", reports.Warn, "before closing its stdin"},
	} {
		t.Run(tc.mutant, func(t *testing.T) {
			t.Parallel()
			o := testOptions(t, "--mutant "+tc.mutant)
			o.Scenarios, o.Transports, o.Versions = []string{tc.scenario}, []string{tc.tr}, []string{tc.v}
			rep := grade(t, o)
			c := wantVerdict(t, rep, tc.check, tc.tr, tc.v, tc.want, tc.evidence)
			if len(c.Transcript) < 3 {
				t.Fatalf("%s: transcript of %d entries", tc.check, len(c.Transcript))
			}
		})
	}
}

// TestVerdictsHoldOnOtherClientShapes: correct clients shaped unlike the
// reliable client's default (reliabledriver's variants) pass the check a
// scenario's timing could have failed them on, and defects still fail it
// when the machine's CPU would have hidden them. Each row failed before the
// scenario or the judge was made message-triggered:
//   - late-ping-answer: the calls' results came right after the ping and
//     the client, closing as its calls ended, abandoned its answer (FAIL);
//   - slow-first-request: the 300 ms initialize timeout fired before the
//     first request left (ERROR "the client sent no request");
//   - staggered-start: the first clients' 3 s calls ended before the last
//     ones started, so the herd was never cut (ERROR);
//   - no-cancel-on-timeout on progress-max-timeout, closing its streams as
//     it exits (as the TypeScript SDK's close does): the stream closed at
//     the exit counted as the maximum's cancellation (PASS on HTTP where
//     stdio WARNs);
//   - no-jitter with costly-reconnect: eight reconnections at the same
//     instant took 240 ms of CPU to get through two cores and spread past
//     the 100 ms bound (PASS).
func TestVerdictsHoldOnOtherClientShapes(t *testing.T) {
	for _, tc := range []struct {
		name, args, scenario, tr, check string
		want                            reports.Status
		evidence                        string
	}{
		{"late-ping-answer http", "--variant late-ping-answer", "tools-call", "http", "CLIENT-PING-ANSWERED", reports.Pass, "ping answered with {}"},
		{"late-ping-answer stdio", "--variant late-ping-answer", "tools-call", "stdio", "CLIENT-PING-ANSWERED", reports.Pass, "ping answered with {}"},
		{"slow-first-request", "--variant slow-first-request", "initialize-timeout", "http", "CLIENT-NO-CANCEL-INITIALIZE", reports.Pass, "not cancelled"},
		{"staggered-start", "--variant staggered-start", "herd", "http", "CLIENT-HERD-JITTER", reports.Pass, "8 of 8 clients reconnected"},
		{"no-cancel max-timeout http", "--mutant no-cancel-on-timeout --variant close-streams-on-exit", "progress-max-timeout", "http", "CLIENT-MAX-TIMEOUT", reports.Warn, "was never cancelled"},
		{"no-cancel max-timeout stdio", "--mutant no-cancel-on-timeout", "progress-max-timeout", "stdio", "CLIENT-MAX-TIMEOUT", reports.Warn, "was never cancelled"},
		{"no-jitter costly-reconnect", "--mutant no-jitter --variant costly-reconnect", "herd", "http", "CLIENT-HERD-JITTER", reports.Warn, "no jitter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := testOptions(t, tc.args)
			o.Scenarios, o.Transports, o.Versions = []string{tc.scenario}, []string{tc.tr}, []string{clientsuite.V20251125}
			rep := grade(t, o)
			wantVerdict(t, rep, tc.check, tc.tr, clientsuite.V20251125, tc.want, tc.evidence)
			for _, other := range rep.Checks {
				if other.ID != tc.check && other.Status != reports.Pass && other.Status != reports.Skip {
					t.Errorf("%s [%s]: %s %s", other.ID, other.Transport, other.Status, other.Reason)
				}
			}
		})
	}
}

// TestUnsupportedAndBrokenDrivers: a driver that exits 2 makes its checks
// SKIP; a command that cannot run makes them ERROR (the run could not
// happen), never PASS.
func TestUnsupportedAndBrokenDrivers(t *testing.T) {
	for _, tc := range []struct {
		name, command string
		want          reports.Status
		reason        string
	}{
		{"unsupported", "echo not this one >&2; exit 2", reports.Skip, "does not support"},
		{"missing", "/nonexistent/mcp-client", reports.Error, "sent no request"},
		{"silent", "true", reports.Error, "sent no request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := testOptions(t, "")
			o.Command = tc.command
			o.Scenarios, o.Versions = []string{"timeout-cancel"}, []string{clientsuite.V20260728}
			rep := grade(t, o)
			n := 0
			for _, c := range rep.Checks {
				if c.ID == "CLIENT-TIMEOUT-CANCEL" {
					n++
					if c.Status != tc.want || !strings.Contains(c.Reason, tc.reason) {
						t.Errorf("%s [%s]: %s %q, want %s with %q", c.ID, c.Transport, c.Status, c.Reason, tc.want, tc.reason)
					}
				}
				if c.Status == reports.Pass {
					t.Errorf("%s [%s] PASS for a client that did nothing", c.ID, c.Transport)
				}
			}
			if n != 2 {
				t.Errorf("CLIENT-TIMEOUT-CANCEL ran %d times, want 2 (stdio, http)", n)
			}
		})
	}
}

func TestCommandLine(t *testing.T) {
	for _, tc := range []struct {
		spec clientSpec
		want string
	}{
		{clientSpec{command: "node driver.js", url: "http://127.0.0.1:1/mcp"}, "node driver.js http://127.0.0.1:1/mcp"},
		{clientSpec{command: "c --url {url} -v", url: "http://127.0.0.1:1/mcp?a=b&c"}, "c --url 'http://127.0.0.1:1/mcp?a=b&c' -v"},
		{clientSpec{command: "c --server {server}", server: []string{"/opt/my dir/mcp-conform", "serve-scenario", "--x", "y"}}, `c --server ''\''/opt/my dir/mcp-conform'\'' serve-scenario --x y'`},
		{clientSpec{command: "c", server: []string{"/bin/m", "a"}}, "c"},
	} {
		if got := tc.spec.commandLine(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.spec, got, tc.want)
		}
	}
	env, err := clientSpec{params: clientsuite.Params{Scenario: "s", ClientID: "client-1", ProtocolVersion: "2025-11-25", Transport: "stdio"},
		server: []string{"/bin/m", "serve-scenario"}}.environ()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		got[k] = v
	}
	var argv []string
	if json.Unmarshal([]byte(got[clientsuite.EnvServerArg]), &argv) != nil || len(argv) != 2 || got[clientsuite.EnvServer] != "/bin/m serve-scenario" ||
		got[clientsuite.EnvScenario] != "s" || got[clientsuite.EnvContract] != clientsuite.ContractVersion || !json.Valid([]byte(got[clientsuite.EnvContext])) {
		t.Errorf("environment %v", got)
	}
}

// TestEntryRoundTrip: a transcript entry survives the JSON line the stdio
// server side sends (JSON messages and other bytes alike).
func TestEntryRoundTrip(t *testing.T) {
	for _, e := range []faultproxy.Entry{
		{Index: 3, At: 1500 * time.Microsecond, Kind: faultproxy.EntryMessage, Dir: faultproxy.ClientToServer, Seq: 7, Raw: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)},
		{Kind: faultproxy.EntryMessage, Dir: faultproxy.ServerToClient, Seq: 8, Raw: []byte("not json\x01")},
		{Kind: faultproxy.EntryFault, Seq: 8, Rule: "r", Fault: "drop", Text: "message swallowed"},
		{Kind: faultproxy.EntryNote, Text: clientsuite.NoteStdinClosed},
	} {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeEntry(b)
		if err != nil {
			t.Fatal(err)
		}
		if got.At != e.At || got.Kind != e.Kind || got.Dir != e.Dir || got.Seq != e.Seq || string(got.Raw) != string(e.Raw) || got.Text != e.Text || got.Fault != e.Fault {
			t.Errorf("round trip of %+v gave %+v", e, got)
		}
	}
}

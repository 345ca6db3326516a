package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/fixtures"
	"github.com/mcp-conform/mcp-conform/internal/draft"
	"github.com/mcp-conform/mcp-conform/reports"
	"github.com/mcp-conform/mcp-conform/suites"
)

var updateInit = flag.Bool("update-init", false, "rewrite testdata/init-reference.*.golden from the reference server's draft")

// initRun is one run of `mcp-conform init`.
type initRun struct {
	code           int
	stdout, stderr string
	yaml           []byte
	path           string
}

// initCLI runs `mcp-conform init ARGS --out DIR/draft.yaml` with extra
// environment, bounded by limit.
func initCLI(t *testing.T, limit time.Duration, env []string, args ...string) initRun {
	t.Helper()
	out := filepath.Join(t.TempDir(), "draft.yaml")
	r := mustRunBin(t, binary, limit, env, append(append([]string{"init"}, args...), "--out", out)...)
	y, _ := os.ReadFile(out)
	return initRun{code: r.code, stdout: r.stdout, stderr: r.stderr, yaml: y, path: out}
}

// repoRoot is the repository root, where the real targets are installed.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// needTarget skips (or, with MCP_CONFORM_REQUIRE_TARGETS, fails) when a
// real target is not installed.
func needTarget(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("MCP_CONFORM_REQUIRE_TARGETS") != "" {
			t.Fatalf("%s is not installed (run scripts/install-targets.sh): %v", path, err)
		}
		t.Skip(path + " is not installed; scripts/install-targets.sh installs it")
	}
}

// serveHTTP starts a server process for an HTTP or WebSocket target and
// returns its endpoint: the URL it prints first on stdout, or (url given)
// url once its port answers HTTP. The process ends with the test.
func serveHTTP(t *testing.T, ctx context.Context, argv, env []string, dir, url string) string {
	t.Helper()
	p, first := pxLaunch(t, ctx, argv, env, dir)
	if url == "" {
		select {
		case u := <-first:
			u = strings.TrimSpace(u)
			if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "ws://") {
				t.Fatalf("%v printed %q first, want its URL", argv, u)
			}
			return u
		case <-time.After(15 * time.Second):
			t.Fatalf("%v printed no URL within 15 s", argv)
		}
	}
	for deadline := time.Now().Add(15 * time.Second); ; {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			return url
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v: %s did not answer within 15 s: %v", argv, url, err)
		}
		select {
		case <-p.done:
			t.Fatalf("%v exited before %s answered", argv, url)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// freePort returns a loopback port nothing listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// initTarget is a real server init is pointed at, with the hand-written
// manifest of the same server.
type initTarget struct {
	name string
	// needs is a file the target needs installed (relative to the root).
	needs string
	// args are init's target flags; start, when set, starts an HTTP or
	// WebSocket server first and returns its URL.
	args  func(t *testing.T, root string) []string
	start func(t *testing.T, ctx context.Context, root string) string
	// manifest is the hand-written manifest (fixtures/targets/), whose
	// roles are evaluated on transport.
	manifest, transport string
}

const everythingJS = ".targets/node_modules/@modelcontextprotocol/server-everything/dist/index.js"

var initTargets = []initTarget{
	{name: "reference-stdio", manifest: "reference.yaml", transport: "stdio",
		args: func(*testing.T, string) []string { return []string{"--stdio", "mcp-conform fixture"} }},
	{name: "reference-http", manifest: "reference.yaml", transport: "http",
		start: func(t *testing.T, ctx context.Context, _ string) string {
			return serveHTTP(t, ctx, []string{binary, "fixture", "--http", "127.0.0.1:0"}, nil, "", "")
		}},
	{name: "reference-ws", manifest: "reference-ws.yaml", transport: "websocket",
		start: func(t *testing.T, ctx context.Context, _ string) string {
			return serveHTTP(t, ctx, []string{binary, "fixture", "--ws", "127.0.0.1:0"}, nil, "", "")
		}},
	{name: "server-everything-stdio", manifest: "server-everything.yaml", transport: "stdio", needs: everythingJS,
		args: func(_ *testing.T, root string) []string {
			return []string{"--stdio", "node " + filepath.Join(root, everythingJS) + " stdio"}
		}},
	{name: "server-everything-http", manifest: "server-everything-http.yaml", transport: "http", needs: everythingJS,
		start: func(t *testing.T, ctx context.Context, root string) string {
			port := freePort(t)
			return serveHTTP(t, ctx, []string{"node", "--require", "./fixtures/targets/loopback.cjs", everythingJS, "streamableHttp"},
				[]string{"PORT=" + port}, root, "http://127.0.0.1:"+port+"/mcp")
		}},
	{name: "gosdk-stdio", manifest: "gosdk-stdio.yaml", transport: "stdio", needs: ".targets/bin/gosdk-server",
		args: func(_ *testing.T, root string) []string {
			return []string{"--stdio", filepath.Join(root, ".targets/bin/gosdk-server")}
		}},
	{name: "gosdk-http", manifest: "gosdk-http.yaml", transport: "http", needs: ".targets/bin/gosdk-server",
		start: func(t *testing.T, ctx context.Context, root string) string {
			return serveHTTP(t, ctx, []string{filepath.Join(root, ".targets/bin/gosdk-server"), "--http", "127.0.0.1:0"}, nil, "", "")
		}},
}

// roleNames lists a manifest's roles.
func roleNames(m *suites.Manifest) []string {
	var out []string
	for r := range m.Roles {
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}

// TestInitUnlocksHandWritten: `mcp-conform init` against each real server
// (the reference over stdio, HTTP and WebSocket, server-everything and the
// go-sdk server over stdio and HTTP) writes a manifest the harness loads,
// whose roles unlock at least the checks the server's hand-written
// manifest unlocks, with the same tool in every role the hand-written one
// declares.
func TestInitUnlocksHandWritten(t *testing.T) {
	root := repoRoot(t)
	catalog := suites.Catalog()
	for _, tc := range initTargets {
		t.Run(tc.name, func(t *testing.T) {
			if tc.needs != "" {
				needTarget(t, filepath.Join(root, tc.needs))
			}
			limitParallel(t)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			var args []string
			if tc.start != nil {
				args = []string{"--url", tc.start(t, ctx, root)}
			} else {
				args = tc.args(t, root)
			}
			r := initCLI(t, 90*time.Second, nil, args...)
			if r.code != 0 {
				t.Fatalf("init exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			got, err := suites.LoadManifest(r.path)
			if err != nil {
				t.Fatalf("the draft does not load: %v\n%s", err, r.yaml)
			}
			hand, err := suites.LoadManifest(filepath.Join(root, "fixtures/targets", tc.manifest))
			if err != nil {
				t.Fatal(err)
			}
			if got.Transport != tc.transport {
				t.Errorf("draft transport %q, want %q", got.Transport, tc.transport)
			}
			want := draft.Unlocked(catalog, tc.transport, roleNames(hand))
			have := draft.Unlocked(catalog, tc.transport, roleNames(got))
			for _, id := range want {
				if !slices.Contains(have, id) {
					t.Errorf("%s: unlocked by %s (roles %v), not by the draft (roles %v)", id, tc.manifest, roleNames(hand), roleNames(got))
				}
			}
			for name, hr := range hand.Roles {
				gr := got.Roles[name]
				if gr.Tool != hr.Tool || gr.Key != hr.Key {
					t.Errorf("role %s: the draft has tool %q key %q, %s has %q key %q", name, gr.Tool, gr.Key, tc.manifest, hr.Tool, hr.Key)
				}
				if hr.Probe != nil && fmt.Sprint(gr.Probe) != fmt.Sprint(hr.Probe) {
					t.Errorf("role %s: probe %v, %s has %v", name, gr.Probe, tc.manifest, hr.Probe)
				}
			}
			if !strings.Contains(r.stdout, "unlocked:") || !strings.Contains(r.stdout, "run it with: mcp-conform run --manifest "+r.path) {
				t.Errorf("summary lacks the unlocked checks or the next command:\n%s", r.stdout)
			}
			t.Logf("%s: hand-written roles %v unlock %d checks; drafted roles %v unlock %d", tc.name, roleNames(hand), len(want), roleNames(got), len(have))
		})
	}
}

// ledgerExecutions asks a reference server on the ledger file how many
// times its effectful tools ran (ticket_stats without a key).
func ledgerExecutions(t *testing.T, ledger string) float64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := draft.Connect(ctx, draft.Target{Command: []string{binary, "fixture"}, Env: []string{fixtures.LedgerEnv + "=" + ledger}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tools, err := draft.ListTools(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	r, err := draft.NewCaller(s.Conn, tools, draft.CallReadOnly, 5*time.Second).Call(ctx, "ticket_stats", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	n, ok := r.Number("executions")
	if !ok {
		t.Fatalf("ticket_stats answered %s", r.Text())
	}
	return n
}

// TestInitCallsNoWriteTool: the reference server records every execution
// of its effectful tools (create_support_ticket, append_note) in its
// ledger. init, pointed at it with a ledger file, leaves it empty, and
// says it called only read-only tools; with --try-tools it runs the keyed
// mutation once (a fresh key, replayed), and says so.
func TestInitCallsNoWriteTool(t *testing.T) {
	for _, tc := range []struct {
		flags      []string
		executions float64
		header     string
	}{
		{nil, 0, "(allowed: read-only tools only)"},
		{[]string{"--no-calls"}, 0, "init called no tool (allowed: no tool calls)"},
		{[]string{"--try-tools"}, 1, "create_support_ticket (2 calls)"},
	} {
		t.Run(strings.Join(append([]string{"default"}, tc.flags...), " "), func(t *testing.T) {
			limitParallel(t)
			ledger := filepath.Join(t.TempDir(), "ledger.db")
			env := []string{fixtures.LedgerEnv + "=" + ledger}
			r := initCLI(t, 90*time.Second, env, append([]string{"--stdio", "mcp-conform fixture"}, tc.flags...)...)
			if r.code != 0 {
				t.Fatalf("init exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			if n := ledgerExecutions(t, ledger); n != tc.executions {
				t.Errorf("the reference's ledger counts %g executions after init %v, want %g", n, tc.flags, tc.executions)
			}
			if !strings.Contains(strings.ReplaceAll(headerOf(r.yaml), "\n#   ", " "), tc.header) {
				t.Errorf("the draft's header does not say %q:\n%s", tc.header, r.yaml)
			}
			for _, w := range []string{"append_note", "create_support_ticket"} {
				if tc.executions == 0 && strings.Contains(headerOf(r.yaml), w) {
					t.Errorf("the draft says it called %s:\n%s", w, headerOf(r.yaml))
				}
			}
		})
	}
}

// headerOf is the comment block at the top of a draft.
func headerOf(y []byte) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(string(y), "\n") {
		if !strings.HasPrefix(l, "#") {
			break
		}
		b.WriteString(l)
	}
	return b.String()
}

// durations are the timings in a draft's comments, which vary by run.
var durations = regexp.MustCompile(`took [0-9.]+(ms|s)\b`)

// TestInitReferenceGolden: the reference server's draft, byte for byte
// (call durations aside), and the summary printed with it: every check the
// draft unlocks, and none else, under "unlocked:". Refresh the golden file
// with go test -run TestInitReferenceGolden -update-init ./cmd/mcp-conform/.
func TestInitReferenceGolden(t *testing.T) {
	limitParallel(t)
	r := initCLI(t, 90*time.Second, nil, "--stdio", "mcp-conform fixture")
	if r.code != 0 {
		t.Fatalf("init exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	got := durations.ReplaceAll(r.yaml, []byte("took DURATION"))
	const file = "testdata/init-reference.yaml.golden"
	if *updateInit {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run with -update-init to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run with -update-init if intended)\n--- got ---\n%s\n--- want ---\n%s", file, got, want)
	}
	m, err := suites.LoadManifest(r.path)
	if err != nil {
		t.Fatal(err)
	}
	_, listed, _ := strings.Cut(r.stdout, "\nunlocked:\n")
	listed, _, _ = strings.Cut(listed, "\n\n")
	var ids []string
	for _, l := range strings.Split(listed, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			ids = append(ids, f[0])
		}
	}
	if want := draft.Unlocked(suites.Catalog(), "stdio", roleNames(m)); !slices.Equal(ids, want) || len(ids) == 0 {
		t.Errorf("the summary lists %v as unlocked, the catalog says %v\n%s", ids, want, r.stdout)
	}
}

// TestInitDraftRuns: a draft is a manifest the harness runs, not only
// loads: the reference's draft drives one check of each drafted role to
// PASS (the reference keeps the whole contract), and the real servers'
// drafts drive their slow and task checks without a missing-role SKIP or
// an ERROR.
func TestInitDraftRuns(t *testing.T) {
	root := repoRoot(t)
	for _, tc := range []struct {
		target   initTarget
		focus    string
		mustPass bool
	}{
		{initTargets[0], "CANCEL-STDIO-SUPPRESS|IDEM-LOST-RESPONSE|IDEM-KEY-REUSE|TASK-CANCEL-TERMINAL|FLOW-FINAL-ARRIVES", true},
		{initTargets[3], "CANCEL-STDIO-SUPPRESS|PROGRESS-TOKEN-ECHO|TASK-TTL-REPORTED", false},
		{initTargets[5], "CANCEL-STDIO-SUPPRESS|PROGRESS-INCREASING", false},
	} {
		t.Run(tc.target.name, func(t *testing.T) {
			if tc.target.needs != "" {
				needTarget(t, filepath.Join(root, tc.target.needs))
			}
			limitParallel(t)
			ri := initCLI(t, 90*time.Second, nil, tc.target.args(t, root)...)
			if ri.code != 0 {
				t.Fatalf("init exit %d\n%s\n%s", ri.code, ri.stdout, ri.stderr)
			}
			r := runCLI(t, 3*time.Minute, "run", "-q", "--manifest", ri.path, "--focus", tc.focus)
			if r.report == nil {
				t.Fatalf("no report (exit %d)\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			for _, id := range strings.Split(tc.focus, "|") {
				found := false
				for _, c := range r.report.Checks {
					found = found || c.ID == id
				}
				if !found {
					t.Errorf("%s did not run:\n%s", id, r.stdout)
				}
			}
			for _, c := range r.report.Checks {
				switch {
				case c.Status == reports.Error || reports.MissingRoleOf(c) != "":
					t.Errorf("%s: %s %s", c.ID, c.Status, c.Reason)
				case tc.mustPass && c.Status != reports.Pass:
					t.Errorf("%s: %s %s, want PASS on the reference", c.ID, c.Status, c.Reason)
				}
				t.Logf("%-5s %s %s", c.Status, c.ID, c.Reason)
			}
		})
	}
}

// TestInitUsage: bad command lines are usage errors (exit 2) that say
// what is wrong, before anything starts; a header's value is never echoed.
func TestInitUsage(t *testing.T) {
	exists := filepath.Join(t.TempDir(), "exists.yaml")
	if err := os.WriteFile(exists, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "exactly one target"},
		{[]string{"--stdio", "x", "--url", "http://127.0.0.1:1/mcp"}, "exactly one target"},
		{[]string{"--stdio", "x", "--header", "A: b"}, "--header, --header-env and --oauth-… apply to --url targets only"},
		{[]string{"--url", "http://127.0.0.1:1/mcp", "--header", "Authorization Bearer s3cr3t"}, "want 'Name: value'"},
		{[]string{"--url", "http://127.0.0.1:1/mcp", "--try-tools", "--no-calls"}, "contradict"},
		{[]string{"--stdio", "x", "--out", exists}, "exists (--force overwrites it)"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := runPlain(t, 30*time.Second, append([]string{"init"}, tc.args...)...)
			if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 saying %q", r.code, r.stderr, tc.want)
			}
			if strings.Contains(r.stderr, "s3cr3t") {
				t.Errorf("stderr echoes a header value: %q", r.stderr)
			}
		})
	}
	// A server that is not there is exit 2 too, promptly.
	r := initCLI(t, 30*time.Second, nil, "--url", "http://127.0.0.1:"+freePort(t)+"/mcp", "--start-timeout", "3s")
	if r.code != 2 || !strings.Contains(r.stderr, "init:") || r.yaml != nil {
		t.Errorf("nothing listening: exit %d, stderr %q, draft %q; want exit 2, an error and no draft", r.code, r.stderr, r.yaml)
	}
}

// testToolsTarget is a real server with mcp-conform's drop-in test tools
// switched on (testtools/gosdk, testtools/ts), init is pointed at.
type testToolsTarget struct {
	name, needs, manifest, transport string
	// argv starts the server: for stdio, init's --stdio command; for HTTP,
	// a server that prints its URL first on stdout.
	argv func(root string) []string
}

var testToolsInitTargets = []testToolsTarget{
	{name: "gosdk-testtools", needs: ".targets/bin/gosdk-server", manifest: "gosdk-testtools.yaml", transport: "stdio",
		argv: func(root string) []string { return []string{filepath.Join(root, ".targets/bin/gosdk-server")} }},
	{name: "gosdk-testtools-http", needs: ".targets/bin/gosdk-server", manifest: "gosdk-testtools-http.yaml", transport: "http",
		argv: func(root string) []string {
			return []string{filepath.Join(root, ".targets/bin/gosdk-server"), "--http", "127.0.0.1:0", "--stateless", "--propagate-cancel", "--cross-origin-protection"}
		}},
	{name: "ts-testtools", needs: ".targets/node_modules/@mcp-conform/testtools/index.js", manifest: "ts-testtools.yaml", transport: "stdio",
		argv: func(root string) []string {
			return []string{"node", filepath.Join(root, ".targets/ts-server/server.mjs")}
		}},
	{name: "ts-testtools-http", needs: ".targets/node_modules/@mcp-conform/testtools/index.js", manifest: "ts-testtools-http.yaml", transport: "http",
		argv: func(root string) []string {
			return []string{"node", filepath.Join(root, ".targets/ts-server/server.mjs"), "--http", "127.0.0.1:0"}
		}},
}

// TestInitProposesTestTools: `mcp-conform init` (no --try-tools) against
// the go-sdk and TS SDK servers with the drop-in test tools switched on
// proposes, unaided, the slow role on conform_slow with its instrumented
// probe, the mutation on conform_write keyed by operation_key with its
// execution-count probe, and the lookup — the roles of the testtools
// manifests but flood and silent, which no heuristic can tell from a slow
// tool — beside the servers' own tools, and unlocks every check those roles
// unlock in the manifest; it never calls the mutation (the store stays
// empty).
func TestInitProposesTestTools(t *testing.T) {
	root := repoRoot(t)
	catalog := suites.Catalog()
	want := map[string]suites.Role{
		"slow":     {Tool: "conform_slow", Probe: map[string]any{"tool": "conform_probe", "tag": "tag"}},
		"mutation": {Tool: "conform_write", Key: "operation_key", Probe: map[string]any{"tool": "conform_write_stats", "field": "executions"}},
		"lookup":   {Tool: "conform_lookup"},
	}
	for _, tc := range testToolsInitTargets {
		t.Run(tc.name, func(t *testing.T) {
			needTarget(t, filepath.Join(root, tc.needs))
			limitParallel(t)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			store := filepath.Join(t.TempDir(), "conform-store.json")
			env := []string{"MCP_CONFORM_TEST_TOOLS=1", "MCP_CONFORM_TEST_STORE=" + store,
				"GOSDK_LEDGER=" + filepath.Join(t.TempDir(), "ledger.db"), "ORDER_LEDGER=" + filepath.Join(t.TempDir(), "orders.json")}
			var args []string
			if tc.transport == "stdio" {
				args = []string{"--stdio", strings.Join(tc.argv(root), " ")}
			} else {
				args = []string{"--url", serveHTTP(t, ctx, tc.argv(root), env, root, "")}
			}
			r := initCLI(t, 90*time.Second, env, args...)
			if r.code != 0 {
				t.Fatalf("init exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			got, err := suites.LoadManifest(r.path)
			if err != nil {
				t.Fatalf("the draft does not load: %v\n%s", err, r.yaml)
			}
			for name, w := range want {
				g, ok := got.Roles[name]
				if !ok || g.Tool != w.Tool || g.Key != w.Key || fmt.Sprint(g.Probe) != fmt.Sprint(w.Probe) {
					t.Errorf("role %s: drafted %+v (present %v), want tool %s key %q probe %v\n%s", name, g, ok, w.Tool, w.Key, w.Probe, r.yaml)
				}
			}
			hand, err := suites.LoadManifest(filepath.Join(root, "fixtures/targets", tc.manifest))
			if err != nil {
				t.Fatal(err)
			}
			var handRoles []string
			for _, n := range roleNames(hand) {
				if n != "flood" && n != "silent" {
					handRoles = append(handRoles, n)
				}
			}
			have := draft.Unlocked(catalog, tc.transport, roleNames(got))
			for _, id := range draft.Unlocked(catalog, tc.transport, handRoles) {
				if !slices.Contains(have, id) {
					t.Errorf("%s: unlocked by %s's roles %v, not by the draft's %v", id, tc.manifest, handRoles, roleNames(got))
				}
			}
			if _, err := os.Stat(store); err == nil {
				b, _ := os.ReadFile(store)
				if !bytes.Contains(b, []byte(`"totalExecutions":0`)) {
					t.Errorf("init without --try-tools ran the mutation: the store holds %s", b)
				}
			}
			t.Logf("%s: drafted roles %v unlock %d checks on %s", tc.name, roleNames(got), len(have), tc.transport)
		})
	}
}

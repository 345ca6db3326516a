package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/reports"
	"github.com/mcp-conform/mcp-conform/suites"
)

// roleFreeInput are the bad-input checks that need no role.
var roleFreeInput = []string{"ROBUST-INVALID-REQUEST", "ROBUST-INVALID-PARAMS", "ROBUST-UNKNOWN-TOOL", "ROBUST-OVERSIZE", "ROBUST-INVALID-UTF8", "ROBUST-STRAY-RESPONSE",
	"TOOLS-INPUT-SCHEMA", "TOOLS-OUTPUT-SCHEMA", "TOOLS-NAMES", "TOOLS-INPUT-VALIDATED", "PAGINATION-INVALID-CURSOR", "PAGINATION-WALK",
	"LOGGING-INVALID-LEVEL", "ROBUST-ID-ECHO", "TOOLS-CAPABILITY", "TOOLS-STRUCTURED-TEXT", "SCHEMA-META-KEYS",
	"TOOLS-EMBEDDED-RESOURCES"}

// TestRunURL runs `mcp-conform run --url` as a user would against the
// reference server started as `mcp-conform fixture --http`: with no
// manifest there are no roles, so only the role-free HTTP checks run and
// the rest SKIP with a reason. A URL where nothing listens is an ERROR of
// every check that needs the server, promptly.
func TestRunURL(t *testing.T) {
	t.Parallel() // the subtests take the slots of limitParallel
	// Parallel subtests run after this function returns: the fixture must
	// outlive them, so it ends in cleanups, not in a defer. Its lifetime is
	// not a clock: the subtests wait for their share of the machine first
	// (minutes, on a loaded one: a 3-minute context ended under the second
	// run there, every check then ERROR "connection refused"); each run is
	// bounded on its own.
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	endpoint := pxStartFixture(t, ctx) // killed by pxStart's cleanup

	catalog := map[string]*suites.Check{}
	for _, c := range suites.Catalog() {
		catalog[c.ID] = c
	}

	for _, tc := range []struct {
		spec string
		pass []string // the checks that need no role
	}{
		{"2026-07-28", append([]string{"SECURITY-ORIGIN", "SECURITY-PROTOCOL-VERSION", "ROBUST-PARSE-ERROR", "ROBUST-UNKNOWN-METHOD", "ROBUST-BATCH-REJECTED", "TOOLS-LIST-STABLE", "SCHEMA-VALID",
			"HTTP-HEADER-MISMATCH", "HTTP-HEADER-DECODED", "HTTP-VERSION-HEADER-MISMATCH", "HTTP-METHOD-NOT-FOUND-404", "HTTP-NOTIFICATION-202",
			"VERSION-UNSUPPORTED-LISTED", "ROBUST-META-REQUIRED", "HTTP-VERSION-HEADER-REQUIRED", "TOOLS-HEADER-SENSITIVE", "SUBSCRIPTION-ACK-FIRST", "HTTP-RESPONSE-CONTENT-TYPE",
			"CLIENTINFO-NO-EFFECT", "LIFECYCLE-NO-PRIOR-CONTEXT", "VERSION-DISCOVER"}, roleFreeInput...)},
		{"2025-11-25", append([]string{"SESSION-REQUIRED", "SESSION-UNKNOWN-404", "SESSION-DELETE", "SECURITY-ORIGIN", "SECURITY-PROTOCOL-VERSION", "ROBUST-PARSE-ERROR", "ROBUST-UNKNOWN-METHOD", "ROBUST-BATCH-REJECTED",
			"SECURITY-SESSION-ENTROPY", "SECURITY-SESSION-REUSE", "SCHEMA-VALID", "LIFECYCLE-PING-EMPTY", "HTTP-NOTIFICATION-202", "HTTP-GET-STREAM",
			"LIFECYCLE-VERSION-FALLBACK", "LIFECYCLE-VERSION-LATEST", "LIFECYCLE-VERSION-SAME", "LIFECYCLE-INITIALIZE-INFO", "HTTP-RESPONSE-CONTENT-TYPE", "TASK-UNKNOWN-ID", "TASK-UNSUPPORTED-TOOL-AUGMENTED", "TASK-UNDECLARED-NORMAL", "HTTP-VERSION-HEADER-ABSENT", "LIFECYCLE-NO-EARLY-REQUESTS", "HTTP-UTF8", "VERSION-DISCOVER"}, roleFreeInput...)},
	} {
		t.Run("spec="+tc.spec, func(t *testing.T) {
			limitParallel(t)
			r := runCLI(t, 90*time.Second, "run", "-q", "--url", endpoint, "--spec", tc.spec)
			t.Logf("exit %d in %s", r.code, r.elapsed.Round(time.Millisecond))
			if r.report == nil {
				t.Fatalf("no report written (exit %d)\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			if r.code != 0 {
				t.Errorf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			rep := r.report
			if rep.Target.Transport != "http" || rep.Target.ProtocolVersion != tc.spec || rep.Target.URL != endpoint {
				t.Errorf("target %+v, want transport http, protocol %s, url %s", rep.Target, tc.spec, endpoint)
			}
			if s := rep.Summary; s.Error != 0 || s.Fail != 0 || s.Warn != 0 {
				t.Errorf("summary %+v, want no ERROR, FAIL or WARN\n%s", s, r.stdout)
			}
			if len(rep.Checks) != len(catalog) {
				t.Errorf("%d checks in the report, want the %d of the catalog", len(rep.Checks), len(catalog))
			}
			var passed []string
			for _, c := range rep.Checks {
				def, ok := catalog[c.ID]
				if !ok {
					t.Errorf("%s: not in the catalog", c.ID)
					continue
				}
				if c.Transport != "http" {
					t.Errorf("%s: transport %q, want http", c.ID, c.Transport)
				}
				_, inVersion := def.RuleOn("http", tc.spec)
				switch {
				case !slices.Contains(def.Transports, "http"):
					wantSkip(t, c, "not on the http transport")
				case len(def.Roles) > 0:
					// The missing role is reported before the version.
					wantSkipRole(t, c, def.Roles)
				case !inVersion:
					wantSkip(t, c, "not in "+tc.spec)
				case c.ID == "SESSION-EXPIRED-404":
					// --url gives no manifest, so no sessionTTL.
					wantSkip(t, c, "no sessionTTL")
				case c.ID == "SECURITY-SESSION-BINDING":
					// No manifest, so no credentials.
					wantSkip(t, c, "no credentials")
				case c.ID == "SECURITY-LOOPBACK-BIND":
					// The harness did not start the server.
					wantSkip(t, c, "did not start the server")
				case c.ID == "SECURITY-AUTH-REQUIRED", c.ID == "SECURITY-AUTH-EVERY-REQUEST":
					// No manifest, so no requiresAuth.
					wantSkip(t, c, "requiresAuth")
				case c.ID == "SECURITY-TOKEN-AUDIENCE":
					// No manifest, so no foreignAuth.
					wantSkip(t, c, "foreignAuth")
				case c.ID == "HTTP-PARAM-HEADER-INVALID", c.ID == "HTTP-PARAM-HEADER-NUMERIC":
					// No manifest, so no role tool to call with a parameter.
					wantSkip(t, c, "no role tool")
				case c.ID == "SUBSCRIPTION-TEARDOWN-CANCELLED", c.ID == "SUBSCRIPTION-GRACEFUL-CLOSE":
					// No manifest, so no endSubscriptions role, and the
					// harness cannot shut an HTTP server down.
					wantSkip(t, c, `declares no "endSubscriptions" role`)
				case modernOnlyChecks[c.ID] != "":
					// The reference is dual-era (TestModernOnlyVariant).
					wantSkip(t, c, modernOnlyChecks[c.ID])
				default:
					if c.Status != reports.Pass {
						t.Errorf("%s: %s %q, want PASS (it needs no role)", c.ID, c.Status, c.Reason)
					}
					if c.ProtocolVersion != tc.spec {
						t.Errorf("%s: protocol version %q, want %s", c.ID, c.ProtocolVersion, tc.spec)
					}
					passed = append(passed, c.ID)
				}
			}
			slices.Sort(passed)
			want := slices.Clone(tc.pass)
			slices.Sort(want)
			if !slices.Equal(passed, want) {
				t.Errorf("role-free checks %v, want %v", passed, want)
			}
		})
	}

	// Nothing listens on port 1: the run must not wait out the default
	// bounds, and every check that needs the server is an ERROR saying why.
	t.Run("unreachable", func(t *testing.T) {
		limitParallel(t)
		const dead = "http://127.0.0.1:1/mcp"
		r := runCLI(t, 25*time.Second, "run", "-q", "--url", dead, "--start-timeout", "3s")
		t.Logf("exit %d in %s", r.code, r.elapsed.Round(time.Millisecond))
		if r.elapsed > 10*time.Second {
			t.Errorf("the run took %s, want well under 30 s", r.elapsed.Round(time.Millisecond))
		}
		if r.code != 2 {
			t.Errorf("exit %d, want 2\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
		if r.report == nil {
			t.Fatalf("no report written (exit %d)\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
		if r.report.Target.Transport != "http" || r.report.Target.URL != dead {
			t.Errorf("target %+v, want transport http and url %s", r.report.Target, dead)
		}
		needServer := 0
		for _, c := range r.report.Checks {
			def, ok := catalog[c.ID]
			if !ok {
				t.Errorf("%s: not in the catalog", c.ID)
				continue
			}
			switch {
			case !slices.Contains(def.Transports, "http"):
				wantSkip(t, c, "not on the http transport")
			case len(def.Roles) > 0:
				wantSkipRole(t, c, def.Roles)
			default: // needs the server and nothing else
				needServer++
				if c.Status != reports.Error {
					t.Errorf("%s: %s %q, want ERROR", c.ID, c.Status, c.Reason)
				} else if !strings.Contains(c.Reason, "connection refused") {
					t.Errorf("%s: ERROR reason %q does not name the cause (connection refused)", c.ID, c.Reason)
				}
			}
		}
		if needServer == 0 || r.report.Summary.Error != needServer {
			t.Errorf("summary %+v, want %d ERROR (every role-free http check)\n%s", r.report.Summary, needServer, r.stdout)
		}
	})
}

// wantSkip expects c to be SKIP with a reason containing why.
func wantSkip(t *testing.T, c reports.Check, why string) {
	t.Helper()
	if c.Status != reports.Skip || !strings.Contains(c.Reason, why) {
		t.Errorf("%s: %s %q, want SKIP %q", c.ID, c.Status, c.Reason, why)
	}
}

// wantSkipRole expects c to be SKIP with a reason naming one of the roles
// it needs (quoted, as the harness writes it).
func wantSkipRole(t *testing.T, c reports.Check, roles []string) {
	t.Helper()
	named := slices.ContainsFunc(roles, func(role string) bool {
		return strings.Contains(c.Reason, `"`+role+`"`)
	})
	if c.Status != reports.Skip || !named || !strings.Contains(c.Reason, "role") {
		t.Errorf("%s: %s %q, want SKIP naming a missing role of %v", c.ID, c.Status, c.Reason, roles)
	}
}

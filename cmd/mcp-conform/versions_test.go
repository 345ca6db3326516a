package main

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/reports"
)

// TestRunChecksEveryAcceptedVersion: with no --spec (and with --spec all)
// a target is checked in every version it accepts and in no other; the
// versions it refused are reported as refused, with the reason, in the
// JSON report and on the console — not as an ERROR of every check. The
// target is hostile_server.py in its correct mode: it answers initialize
// with 2025-11-25 whatever was asked, and server/discover with an error.
func TestRunChecksEveryAcceptedVersion(t *testing.T) {
	needPython(t)
	server := "python3 " + testdataFile(t, "hostile_server.py") + " ok"
	for _, spec := range [][]string{nil, {"--spec", "all"}} {
		t.Run(strings.Join(append([]string{"spec"}, spec...), " "), func(t *testing.T) {
			limitParallel(t)
			r := runCLI(t, 90*time.Second, append([]string{"run", "-q", "--stdio", server, "--focus", "CANCEL-STDIO-SUPPRESS|ROBUST-PARSE-ERROR|ROBUST-UNKNOWN-METHOD"}, spec...)...)
			if r.report == nil {
				t.Fatalf("no report (exit %d)\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			var got []string
			for _, c := range r.report.Checks {
				got = append(got, c.ID+" "+c.ProtocolVersion)
				if c.Status == reports.Error {
					t.Errorf("%s [%s]: ERROR %s", c.ID, c.ProtocolVersion, c.Reason)
				}
			}
			want := []string{"CANCEL-STDIO-SUPPRESS 2025-11-25", "ROBUST-PARSE-ERROR 2025-11-25", "ROBUST-UNKNOWN-METHOD 2025-11-25"}
			if !slices.Equal(got, want) {
				t.Errorf("check runs %q, want %q (the accepted version only)", got, want)
			}
			vs := r.report.Target.Versions
			status := map[string]reports.VersionStatus{}
			for _, v := range vs {
				status[v.ProtocolVersion] = v.Status
				if v.Transport != "stdio" || (v.Status == reports.Refused) != (v.Reason != "") {
					t.Errorf("version entry %+v", v)
				}
			}
			wantStatus := map[string]reports.VersionStatus{"2026-07-28": reports.Refused, "2025-11-25": reports.Accepted, "2025-06-18": reports.Refused}
			if len(vs) != 3 || !maps.Equal(status, wantStatus) {
				t.Errorf("target.versions %+v, want %v", vs, wantStatus)
			}
			if r.report.Target.ProtocolVersion != "2025-11-25" {
				t.Errorf("target.protocolVersion %q", r.report.Target.ProtocolVersion)
			}
			if !strings.Contains(r.stdout, "versions on stdio: accepted 2025-11-25; refused 2026-07-28 (") ||
				!strings.Contains(r.stdout, `2025-06-18 (forced 2025-06-18 but the server chose protocol version "2025-11-25")`) {
				t.Errorf("console does not say which versions were refused:\n%s", r.stdout)
			}
		})
	}
	// --spec forces a version: the refused one is still tried (and its
	// checks say why they could not run).
	t.Run("forced", func(t *testing.T) {
		limitParallel(t)
		r := runCLI(t, 90*time.Second, "run", "-q", "--stdio", server, "--focus", "ROBUST-PARSE-ERROR", "--spec", "2025-06-18")
		if r.code != 2 || r.report == nil || len(r.report.Checks) != 1 || r.report.Checks[0].Status != reports.Error ||
			!strings.Contains(r.report.Checks[0].Reason, `chose protocol version "2025-11-25"`) {
			t.Errorf("forced refused version: exit %d, report %+v", r.code, r.report)
		}
	})
	// A server that accepts no version mcp-conform knows: nothing is
	// checked, every version is reported refused, and the run cannot pass.
	t.Run("none-accepted", func(t *testing.T) {
		limitParallel(t)
		r := runCLI(t, 90*time.Second, "run", "-q", "--stdio", "env HOSTILE_PROTOCOL=2024-11-05 "+server)
		if r.code != 2 || r.report == nil || len(r.report.Checks) != 0 || !strings.Contains(r.stderr, "refused every protocol version") {
			t.Fatalf("exit %d, stderr %q, report %+v; want 2, no check, the refusals", r.code, r.stderr, r.report)
		}
		for _, v := range r.report.Target.Versions {
			if v.Status != reports.Refused {
				t.Errorf("version entry %+v, want refused", v)
			}
		}
		if len(r.report.Target.Versions) != 3 {
			t.Errorf("target.versions %+v, want the three refused", r.report.Target.Versions)
		}
	})
}

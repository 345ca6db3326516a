package reports

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestTargetVersions: the versions a server accepted and refused reach the
// JSON report (target.versions, each with its status and the reason of a
// refusal) and the console (one line per transport), and survive a round
// trip.
func TestTargetVersions(t *testing.T) {
	r := &Report{Target: Target{Name: "srv", Transport: "stdio", ProtocolVersion: "2026-07-28,2025-11-25", Versions: []TargetVersion{
		{Transport: "stdio", ProtocolVersion: "2026-07-28", Status: Accepted},
		{Transport: "stdio", ProtocolVersion: "2025-11-25", Status: Accepted},
		{Transport: "stdio", ProtocolVersion: "2025-06-18", Status: Refused, Reason: `the server chose protocol version "2025-11-25"`},
	}}, Checks: []Check{{ID: "A-B", Status: Pass, Transport: "stdio", ProtocolVersion: "2026-07-28"}}}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Target struct {
			Versions []map[string]string `json:"versions"`
		} `json:"target"`
	}
	if err := json.Unmarshal(buf.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	if v := raw.Target.Versions; len(v) != 3 || v[2]["status"] != "refused" || v[2]["protocolVersion"] != "2025-06-18" || v[2]["reason"] == "" || v[0]["status"] != "accepted" {
		t.Errorf("target.versions %v", v)
	}
	back, err := ReadJSON(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Target, r.Target) {
		t.Errorf("target did not round-trip: %+v", back.Target)
	}
	var out bytes.Buffer
	if err := WriteConsole(&out, r, ConsoleOptions{}); err != nil {
		t.Fatal(err)
	}
	want := `  versions on stdio: accepted 2026-07-28, 2025-11-25; refused 2025-06-18 (the server chose protocol version "2025-11-25")`
	if !strings.Contains(out.String(), want+"\n") {
		t.Errorf("console lacks %q:\n%s", want, out.String())
	}
}

// TestRefusedEverythingCannotPass: a target that refused every version it
// was asked gives exit 2 and an ERROR verdict, even with no check failed;
// one accepted version is enough to be judged by the checks.
func TestRefusedEverythingCannotPass(t *testing.T) {
	refused := TargetVersion{Transport: "stdio", ProtocolVersion: "2026-07-28", Status: Refused, Reason: "no"}
	accepted := TargetVersion{Transport: "stdio", ProtocolVersion: "2025-11-25", Status: Accepted}
	for _, tc := range []struct {
		name string
		vs   []TargetVersion
		want int
	}{
		{"no versions probed", nil, 0},
		{"one accepted", []TargetVersion{refused, accepted}, 0},
		{"all refused", []TargetVersion{refused}, 2},
		{"one target of two refused all", []TargetVersion{{Target: "a", Status: Accepted}, {Target: "b", Status: Refused}}, 2},
	} {
		r := &Report{Target: Target{Name: "srv", Versions: tc.vs}}
		if got := RunExitCode(r, false, false); got != tc.want {
			t.Errorf("%s: exit %d, want %d", tc.name, got, tc.want)
		}
		var out bytes.Buffer
		if err := WriteConsole(&out, r, ConsoleOptions{}); err != nil {
			t.Fatal(err)
		}
		if tc.want == 2 && !strings.Contains(out.String(), "verdict: ERROR (exit 2") {
			t.Errorf("%s: console verdict:\n%s", tc.name, out.String())
		}
	}
}

package main

// The committed expected verdicts of real peers, shared by TestRealTargets
// (real servers, fixtures/targets/) and TestRealClients (real clients,
// fixtures/clients/): the file format, its reading and writing, the diff
// that fails the tests and the -update that rewrites the files.

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

var updateExpected = flag.Bool("update", false, "TestRealTargets, TestRealClients: rewrite fixtures/targets/*.expected.yaml, fixtures/clients/*.expected.yaml from this run's verdicts")

// expectedFile is a real peer's committed verdicts: a real target's
// (fixtures/targets/NAME.expected.yaml, Manifest set) or a real client's
// (fixtures/clients/NAME.expected.yaml, Client set).
type expectedFile struct {
	Manifest string           `yaml:"manifest,omitempty"`
	Client   string           `yaml:"client,omitempty"`
	Refused  []refusedVersion `yaml:"refused"`
	Checks   []verdictRow     `yaml:"checks"`
}

type refusedVersion struct {
	Version string `yaml:"version"`
	Reason  string `yaml:"reason"`
}

// verdictRow is one check's verdict on a transport in a version; the reason
// explains it and is not compared. A committed status may list
// alternatives ("PASS|WARN") for a verdict that hangs on a race the harness
// does not control; the reason then says which race, and -update keeps the
// row while the run's status is one of them.
type verdictRow struct {
	ID        string `yaml:"id"`
	Transport string `yaml:"transport"`
	Version   string `yaml:"version"`
	Status    string `yaml:"status"`
	Reason    string `yaml:"reason"`
}

func (r verdictRow) key() string { return r.ID + " " + r.Transport + " " + r.Version }

// admits reports whether the committed status (or one of its alternatives)
// is status.
func (r verdictRow) admits(status string) bool {
	return slices.Contains(strings.Split(r.Status, "|"), status)
}

func readExpected(path string) (expectedFile, error) {
	var f expectedFile
	b, err := os.ReadFile(path)
	if err != nil {
		return f, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return f, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// writeExpected writes one row per line, strings as JSON (valid YAML).
func writeExpected(path string, f expectedFile) error {
	q := func(s string) string {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(s)
		return strings.TrimSpace(b.String())
	}
	var b strings.Builder
	if f.Client != "" {
		fmt.Fprintf(&b, "# Expected verdicts of the real client fixtures/clients/%s (its driver): one row per check,\n", f.Client)
		b.WriteString("# transport and protocol version (the status is compared; the reason, from the run, explains it);\n")
		b.WriteString("# refused: the versions the client does not speak. Checked by TestRealClients (cmd/mcp-conform);\n")
		b.WriteString("# regenerate with\n")
		b.WriteString("#   go test -run TestRealClients ./cmd/mcp-conform/ -update\n")
		b.WriteString("# and commit a changed verdict with its evidence (fixtures/clients/README.md).\n")
		fmt.Fprintf(&b, "client: %s\n", f.Client)
	} else {
		fmt.Fprintf(&b, "# Expected verdicts of fixtures/targets/%s: one row per check, transport and protocol\n", f.Manifest)
		b.WriteString("# version (the status is compared; the reason, from the run, explains it). Checked by\n")
		b.WriteString("# TestRealTargets (cmd/mcp-conform); regenerate with\n")
		b.WriteString("#   go test -run TestRealTargets ./cmd/mcp-conform/ -update\n")
		b.WriteString("# and commit a changed verdict with its evidence (fixtures/targets/README.md).\n")
		fmt.Fprintf(&b, "manifest: %s\n", f.Manifest)
	}
	if len(f.Refused) == 0 {
		b.WriteString("refused: []\n")
	} else {
		b.WriteString("refused:\n")
		for _, r := range f.Refused {
			fmt.Fprintf(&b, "  - {version: %s, reason: %s}\n", r.Version, q(r.Reason))
		}
	}
	b.WriteString("checks:\n")
	for _, r := range f.Checks {
		fmt.Fprintf(&b, "  - {id: %s, transport: %s, version: %s, status: %s, reason: %s}\n", r.ID, r.Transport, r.Version, r.Status, q(r.Reason))
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// matchExpected compares the run's verdicts got with the committed file rel
// (relative to the repository root) and fails t on any difference, one line
// each, followed by evidence(row) for every row of the run that moved (nil:
// none); with -update it rewrites the file instead. test names the test in
// the regeneration hint.
func matchExpected(t *testing.T, root, rel, test string, got expectedFile, evidence func(verdictRow) string) {
	t.Helper()
	path := filepath.Join(root, rel)
	want, err := readExpected(path)
	if err != nil && !(*updateExpected && os.IsNotExist(err)) {
		t.Fatalf("%v (create it with: go test -run %s ./cmd/mcp-conform/ -update)", err, test)
	}
	if *updateExpected {
		keepReasons(&got, want)
		if err := writeExpected(path, got); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s: %d rows, %d refused versions", path, len(got.Checks), len(got.Refused))
		return
	}
	d := diffExpected(want, got)
	if len(d) == 0 {
		return
	}
	if evidence != nil {
		was := map[string]verdictRow{}
		for _, r := range want.Checks {
			was[r.key()] = r
		}
		for _, r := range got.Checks {
			if w, ok := was[r.key()]; !ok || !w.admits(r.Status) {
				if e := evidence(r); e != "" {
					d = append(d, fmt.Sprintf("evidence of %s (%s):\n%s", r.key(), r.Status, e))
				}
			}
		}
	}
	t.Errorf("%s differs from this run (%d difference(s)); if the change is right, regenerate with\n  go test -run %s ./cmd/mcp-conform/ -update\nand commit the file with the evidence:\n  %s",
		rel, len(diffExpected(want, got)), test, strings.Join(d, "\n  "))
}

// keepReasons keeps the committed row (its reason, its alternatives) where
// it admits the run's status, so that a regeneration shows only the
// verdicts that moved.
func keepReasons(got *expectedFile, old expectedFile) {
	was := map[string]verdictRow{}
	for _, r := range old.Checks {
		was[r.key()] = r
	}
	for i, r := range got.Checks {
		if o, ok := was[r.key()]; ok && o.admits(r.Status) && (o.Reason != "" || o.Status != r.Status) {
			got.Checks[i] = o
		}
	}
	wasRefused := map[string]string{}
	for _, r := range old.Refused {
		wasRefused[r.Version] = r.Reason
	}
	for i, r := range got.Refused {
		if o, ok := wasRefused[r.Version]; ok && o != "" {
			got.Refused[i].Reason = o
		}
	}
}

// diffExpected lists every difference between the committed verdicts and
// the run's, one readable line each.
func diffExpected(want, got expectedFile) []string {
	var d []string
	refusedIn := func(f expectedFile) map[string]string {
		m := map[string]string{}
		for _, r := range f.Refused {
			m[r.Version] = r.Reason
		}
		return m
	}
	wr, gr := refusedIn(want), refusedIn(got)
	for _, v := range realVersions {
		w, wok := wr[v]
		g, gok := gr[v]
		switch {
		case wok && !gok:
			d = append(d, fmt.Sprintf("version %s: expected refused (%s), now accepted", v, w))
		case !wok && gok:
			d = append(d, fmt.Sprintf("version %s: now refused (%s)", v, g))
		}
	}
	wm := map[string]verdictRow{}
	for _, r := range want.Checks {
		wm[r.key()] = r
	}
	gm := map[string]verdictRow{}
	for _, r := range got.Checks {
		gm[r.key()] = r
	}
	for _, r := range got.Checks {
		w, ok := wm[r.key()]
		switch {
		case !ok:
			d = append(d, fmt.Sprintf("+ %s: %s %q (not in the file)", r.key(), r.Status, clipReason(r.Reason)))
		case !w.admits(r.Status):
			d = append(d, fmt.Sprintf("~ %s: expected %s %q, got %s %q", r.key(), w.Status, clipReason(w.Reason), r.Status, clipReason(r.Reason)))
		}
	}
	for _, r := range want.Checks {
		if _, ok := gm[r.key()]; !ok {
			d = append(d, fmt.Sprintf("- %s: expected %s %q, not in the run", r.key(), r.Status, clipReason(r.Reason)))
		}
	}
	return d
}

func clipReason(s string) string {
	if r := []rune(s); len(r) > 200 {
		return string(r[:200]) + "…"
	}
	return s
}

// Parts of a reason that change from run to run.
var (
	reKey     = regexp.MustCompile(`\b(mcpc-[a-z]+)-[0-9a-f]{24}\b`)
	reUUID    = regexp.MustCompile(`\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	reTime    = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z\b`)
	rePort    = regexp.MustCompile(`\b127\.0\.0\.1:\d+\b`)
	reSpace   = regexp.MustCompile(`\s+`)
	reTokenID = regexp.MustCompile(`\b[A-Z2-7]{26}\b`) // go-sdk session and stream ids
	reHexID   = regexp.MustCompile(`\b[0-9a-f]{32}\b`) // the reference server's session ids
)

// oneLine is a reason fit for a row: one line, without the run's random
// keys, ids, times and ports, at most 240 characters.
func oneLine(s string) string {
	s = reKey.ReplaceAllString(s, "$1-…")
	s = reUUID.ReplaceAllString(s, "<uuid>")
	s = reTime.ReplaceAllString(s, "<time>")
	s = rePort.ReplaceAllString(s, "127.0.0.1:<port>")
	s = reTokenID.ReplaceAllString(s, "<id>")
	s = reHexID.ReplaceAllString(s, "<id>")
	s = strings.TrimSpace(reSpace.ReplaceAllString(s, " "))
	if r := []rune(s); len(r) > 240 {
		s = string(r[:240]) + "…"
	}
	return s
}

// TestDiffExpected: every kind of difference between a target's committed
// verdicts and a run is reported — a changed status, a row only in the run,
// a row only in the file, a version newly refused or accepted — and a
// changed reason alone is not.
func TestDiffExpected(t *testing.T) {
	row := func(id, v, st, why string) verdictRow {
		return verdictRow{ID: id, Transport: "stdio", Version: v, Status: st, Reason: why}
	}
	want := expectedFile{
		Refused: []refusedVersion{{Version: "2026-07-28", Reason: "no server/discover"}},
		Checks: []verdictRow{row("A", "2025-11-25", "PASS", "ok"), row("B", "2025-11-25", "FAIL", "bad"),
			row("C", "2025-11-25", "PASS", "gone"), row("D", "2025-06-18", "WARN", "w")},
	}
	for _, tc := range []struct {
		name string
		got  expectedFile
		want []string
	}{
		{"same, reasons differ", expectedFile{Refused: want.Refused, Checks: []verdictRow{row("A", "2025-11-25", "PASS", "other words"),
			row("B", "2025-11-25", "FAIL", "x"), row("C", "2025-11-25", "PASS", ""), row("D", "2025-06-18", "WARN", "")}}, nil},
		{"status, extra, missing", expectedFile{Refused: want.Refused, Checks: []verdictRow{row("A", "2025-11-25", "FAIL", "now broken"),
			row("B", "2025-11-25", "FAIL", "x"), row("D", "2025-06-18", "WARN", ""), row("E", "2025-06-18", "PASS", "new")}},
			[]string{`~ A stdio 2025-11-25: expected PASS "ok", got FAIL "now broken"`, `+ E stdio 2025-06-18: PASS "new" (not in the file)`,
				`- C stdio 2025-11-25: expected PASS "gone", not in the run`}},
		{"alternatives", expectedFile{Refused: want.Refused, Checks: []verdictRow{row("A", "2025-11-25", "PASS", ""),
			row("B", "2025-11-25", "FAIL", ""), row("C", "2025-11-25", "PASS", ""), row("D", "2025-06-18", "PASS", "raced")}},
			[]string{`~ D stdio 2025-06-18: expected WARN "w", got PASS "raced"`}},
		{"versions", expectedFile{Refused: []refusedVersion{{Version: "2025-06-18", Reason: "nope"}}, Checks: want.Checks[:3]},
			[]string{"version 2026-07-28: expected refused (no server/discover), now accepted", "version 2025-06-18: now refused (nope)",
				`- D stdio 2025-06-18: expected WARN "w", not in the run`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := diffExpected(want, tc.got); !slices.Equal(got, tc.want) {
				t.Errorf("diff:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
	raced := expectedFile{Checks: []verdictRow{row("R", "2025-11-25", "PASS|WARN", "resume races the server noticing the close")}}
	for st, n := range map[string]int{"PASS": 0, "WARN": 0, "FAIL": 1} {
		if d := diffExpected(raced, expectedFile{Checks: []verdictRow{row("R", "2025-11-25", st, "")}}); len(d) != n {
			t.Errorf("PASS|WARN committed, %s run: %d differences %q, want %d", st, len(d), d, n)
		}
	}
}

// TestKeepReasons: -update keeps a committed row (annotated reason,
// alternatives) while it admits the run's status, and takes the run's row
// when the status moved.
func TestKeepReasons(t *testing.T) {
	old := expectedFile{Checks: []verdictRow{
		{ID: "A", Version: "v", Status: "FAIL", Reason: "SDK defect: …"},
		{ID: "B", Version: "v", Status: "PASS|WARN", Reason: "raced"},
		{ID: "C", Version: "v", Status: "PASS", Reason: "was fine"},
	}}
	got := expectedFile{Checks: []verdictRow{
		{ID: "A", Version: "v", Status: "FAIL", Reason: "run words"},
		{ID: "B", Version: "v", Status: "WARN", Reason: "0 events"},
		{ID: "C", Version: "v", Status: "FAIL", Reason: "now broken"},
	}}
	keepReasons(&got, old)
	want := []verdictRow{old.Checks[0], old.Checks[1], {ID: "C", Version: "v", Status: "FAIL", Reason: "now broken"}}
	if !slices.Equal(got.Checks, want) {
		t.Errorf("kept %+v, want %+v", got.Checks, want)
	}
}

// TestExpectedFileRoundTrip: a written file reads back as written, and a
// row's reason loses the run's random keys, ids, times and ports.
func TestExpectedFileRoundTrip(t *testing.T) {
	f := expectedFile{Manifest: "x.yaml", Refused: []refusedVersion{{Version: "2026-07-28", Reason: `quote " and: colon`}},
		Checks: []verdictRow{{ID: "A", Transport: "http", Version: "2025-11-25", Status: "FAIL",
			Reason: oneLine("key mcpc-lost-0123456789abcdef01234567 at 2026-12-01T09:35:57.064Z\n on 127.0.0.1:4242 <b>&")}}}
	if got := f.Checks[0].Reason; got != "key mcpc-lost-… at <time> on 127.0.0.1:<port> <b>&" {
		t.Errorf("oneLine: %q", got)
	}
	path := filepath.Join(t.TempDir(), "x.expected.yaml")
	if err := writeExpected(path, f); err != nil {
		t.Fatal(err)
	}
	back, err := readExpected(path)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(back) != fmt.Sprint(f) {
		t.Errorf("read back %+v, wrote %+v", back, f)
	}
}

package harness

import (
	"os"
	"testing"
)

func TestTmpDirPlaceholder(t *testing.T) {
	m := &Manifest{Command: []string{"srv", "--db", "{tmpdir}/a.db"}, Env: map[string]string{"LEDGER": "{tmpdir}/l.db", "X": "y"}}
	if !usesTmpDir(m) || usesTmpDir(&Manifest{Command: []string{"srv"}, Env: map[string]string{"X": "y"}}) {
		t.Fatal("usesTmpDir")
	}
	got := withTmpDir(m, "/d")
	if got.Command[2] != "/d/a.db" || got.Env["LEDGER"] != "/d/l.db" || got.Env["X"] != "y" {
		t.Fatalf("withTmpDir: %v %v", got.Command, got.Env)
	}
	if m.Command[2] != "{tmpdir}/a.db" || m.Env["LEDGER"] != "{tmpdir}/l.db" {
		t.Fatal("withTmpDir changed the manifest itself")
	}

	// One check: every connection gets the same directory; the probe
	// (no check) gets its own, removed by its cleanup.
	h := &H{}
	a, _, err := expandTarget(m, h)
	if err != nil {
		t.Fatal(err)
	}
	b, _, _ := expandTarget(m, h)
	if a.Env["LEDGER"] != b.Env["LEDGER"] || h.tmp == "" {
		t.Fatalf("two connections of one check: %s and %s", a.Env["LEDGER"], b.Env["LEDGER"])
	}
	defer os.RemoveAll(h.tmp)
	p, cleanup, err := expandTarget(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Env["LEDGER"] == a.Env["LEDGER"] {
		t.Fatal("the probe shares the check's directory")
	}
	dir := p.Env["LEDGER"][:len(p.Env["LEDGER"])-len("/l.db")]
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
	cleanup()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the probe's directory outlived it: %v", err)
	}
}

package reports

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestWriteJSONGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, sampleReport()); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.json", buf.Bytes())
}

func TestWriteJSONRoundTrip(t *testing.T) {
	in := sampleReport()
	before := sampleReport()
	var buf bytes.Buffer
	if err := WriteJSON(&buf, in); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, before) {
		t.Error("WriteJSON modified its argument")
	}

	// The raw document carries the contract's names.
	var raw map[string]any
	if err := json.Unmarshal(buf.Bytes(), &raw); err != nil {
		t.Fatalf("output is not JSON: %v", err)
	}
	if raw["schema"] != "mcp-conform/report/v1" {
		t.Errorf("schema = %v", raw["schema"])
	}
	for _, k := range []string{"tool", "target", "checks", "summary", "startedAt", "durationMs"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("top-level key %q missing", k)
		}
	}

	out, err := ReadJSON(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if out.Schema != SchemaV1 {
		t.Errorf("schema = %q", out.Schema)
	}
	if want := (Summary{Pass: 2, Fail: 1, Warn: 1, Skip: 1, Error: 1}); out.Summary != want {
		t.Errorf("summary = %+v, want %+v (recomputed)", out.Summary, want)
	}
	if !reflect.DeepEqual(out.Target, in.Target) || out.Tool != in.Tool || !out.StartedAt.Equal(in.StartedAt) || out.Duration != in.Duration {
		t.Errorf("header did not round-trip: %+v", out)
	}
	if len(out.Checks) != len(in.Checks) {
		t.Fatalf("%d checks, want %d", len(out.Checks), len(in.Checks))
	}
	for i, c := range out.Checks {
		w := in.Checks[i]
		if c.ID != w.ID || c.Title != w.Title || c.Level != w.Level || c.Status != w.Status ||
			c.Reason != w.Reason || c.Clause != w.Clause || c.DurationMs != w.DurationMs {
			t.Errorf("check %d: got %+v, want %+v", i, c, w)
		}
		if c.Spec == nil {
			t.Errorf("check %s: spec is null, want []", c.ID)
		}
	}
	// The FAIL check keeps its transcript, every entry intact.
	fail := out.Checks[1]
	if len(fail.Transcript) != len(in.Checks[1].Transcript) {
		t.Fatalf("FAIL transcript has %d entries, want %d", len(fail.Transcript), len(in.Checks[1].Transcript))
	}
	for i, e := range fail.Transcript {
		w := in.Checks[1].Transcript[i]
		if e.AtMs != w.AtMs || e.Kind != w.Kind || e.Dir != w.Dir || e.Rule != w.Rule || e.Fault != w.Fault || e.Text != w.Text {
			t.Errorf("entry %d: got %+v, want %+v", i, e, w)
		}
		if len(w.Raw) > 0 && !jsonEqual(t, e.Raw, w.Raw) {
			t.Errorf("entry %d raw: got %s, want %s", i, e.Raw, w.Raw)
		}
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(x, y)
}

func TestWriteJSONTranscripts(t *testing.T) {
	tr := []Entry{{AtMs: 1, Kind: "note", Text: "evidence"}}
	tests := []struct {
		status  Status
		keepAll bool
		want    bool
	}{
		{Pass, false, false},
		{Skip, false, false},
		{Fail, false, true},
		{Warn, false, true},
		{Error, false, true},
		{"BOGUS", false, true},
		{Pass, true, true},
		{Skip, true, true},
		{Fail, true, true},
	}
	for _, tt := range tests {
		r := &Report{Checks: []Check{{ID: "X-Y", Status: tt.status, Transcript: tr}}}
		var buf bytes.Buffer
		if err := WriteJSONWith(&buf, r, JSONOptions{KeepAllTranscripts: tt.keepAll}); err != nil {
			t.Fatal(err)
		}
		out, err := ReadJSON(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(out.Checks[0].Transcript) > 0; got != tt.want {
			t.Errorf("status %s keepAll %v: transcript kept = %v, want %v", tt.status, tt.keepAll, got, tt.want)
		}
	}
}

func TestWriteJSONHostileInput(t *testing.T) {
	r := &Report{
		Duration: math.NaN(),
		Checks: []Check{{
			ID: "ROBUST-GARBAGE", Status: Fail, DurationMs: math.Inf(1),
			Reason: "bad \x00 bytes \xff",
			Transcript: []Entry{
				{AtMs: math.NaN(), Kind: "message", Dir: "s2c", Raw: json.RawMessage("not json\x00\xff{")},
				{Kind: "stderr", Text: "\x1b[31mred\xfe"},
			},
		}},
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	if !json.Valid(buf.Bytes()) {
		t.Fatalf("invalid JSON:\n%s", buf.Bytes())
	}
	out, err := ReadJSON(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var s string
	if err := json.Unmarshal(out.Checks[0].Transcript[0].Raw, &s); err != nil || !strings.HasPrefix(s, "not json\x00") {
		t.Errorf("invalid raw should become a JSON string of its bytes, got %s (%v)", out.Checks[0].Transcript[0].Raw, err)
	}
	if out.Duration != 0 || out.Checks[0].DurationMs != 0 {
		t.Errorf("non-finite durations should be written as 0")
	}
}

func TestWriteJSONEmpty(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, &Report{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"checks": []`) {
		t.Errorf("empty checks should be [], got:\n%s", buf.String())
	}
	if err := WriteJSON(&buf, nil); err == nil {
		t.Error("nil report accepted")
	}
}

func TestReadJSONRejectsOtherSchema(t *testing.T) {
	for _, doc := range []string{`{"schema":"mcp-conform/report/v2","checks":[]}`, `{}`, `not json`} {
		if _, err := ReadJSON(strings.NewReader(doc)); err == nil {
			t.Errorf("ReadJSON(%s) succeeded", doc)
		}
	}
}

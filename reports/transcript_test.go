package reports

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFormatTranscriptGolden(t *testing.T) {
	var buf bytes.Buffer
	FormatTranscript(&buf, sampleReport().Checks[1].Transcript)
	golden(t, "transcript.golden", buf.Bytes())
}

func TestFormatTranscriptLines(t *testing.T) {
	long := `{"jsonrpc":"2.0","id":1,"result":{"text":"` + strings.Repeat("é", 200) + `"}}`
	tests := []struct {
		name string
		e    Entry
		want string
	}{
		{"message", Entry{AtMs: 123.44, Kind: "message", Dir: "c2s", Raw: json.RawMessage(`{ "jsonrpc" : "2.0",` + "\n" + ` "method": "ping" }`)},
			`  +123.4ms  c2s  {"jsonrpc":"2.0","method":"ping"}`},
		{"not json", Entry{AtMs: 1, Kind: "message", Dir: "s2c", Text: "Traceback \"x\"\n\x00"},
			`  +1.0ms  s2c  (not JSON) "Traceback \"x\"\n\x00"`},
		{"invalid raw", Entry{AtMs: 1, Kind: "message", Dir: "s2c", Raw: json.RawMessage("{oops\xff")},
			`  +1.0ms  s2c  (not JSON) "{oops\xff"`},
		{"empty message", Entry{Kind: "message", Dir: "c2s"}, `  +0.0ms  c2s  (empty)`},
		{"fault", Entry{AtMs: 2, Kind: "fault", Dir: "s2c", Rule: "r1", Fault: "delay", Text: "2s"},
			`  +2.0ms  s2c  FAULT rule=r1 fault=delay  2s`},
		{"fault unnamed", Entry{AtMs: 2, Kind: "fault"}, `  +2.0ms  ---  FAULT rule=- fault=-`},
		{"stderr", Entry{AtMs: 3, Kind: "stderr", Text: "\x1b[31merror\x1b[0m\ttab"},
			`  +3.0ms  stderr | \x1b[31merror\x1b[0m\ttab`},
		{"process", Entry{AtMs: 4, Kind: "process", Text: "exited 1"}, `  +4.0ms  process: exited 1`},
		{"note", Entry{AtMs: 5, Kind: "note", Text: "two\nlines"}, `  +5.0ms  note: two\nlines`},
		{"unknown", Entry{AtMs: 6, Kind: "weird", Dir: "c2s", Text: "t", Raw: json.RawMessage(`[1, 2]`)},
			`  +6.0ms  weird: c2s t [1,2]`},
		{"c1 control", Entry{Kind: "note", Text: "a\u0085b\u009bc\u202e"}, `  +0.0ms  note: a\x85b\x9bc` + "\u202e"},
		{"long", Entry{AtMs: 7, Kind: "message", Dir: "s2c", Raw: json.RawMessage(long)},
			`  +7.0ms  s2c  ` + long[:runeCut(long, 300)] + "… (" + itoa(len(long)) + " bytes)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			FormatTranscript(&buf, []Entry{tt.e})
			got := buf.String()
			if got != tt.want+"\n" {
				t.Errorf("got  %q\nwant %q", got, tt.want+"\n")
			}
			if !utf8.ValidString(got) || strings.Count(got, "\n") != 1 {
				t.Errorf("not one valid line: %q", got)
			}
		})
	}
}

// runeCut is the largest character boundary of s at or below n.
func runeCut(s string, n int) int {
	for !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestFormatTranscriptAlignsTimes(t *testing.T) {
	var buf bytes.Buffer
	FormatTranscript(&buf, []Entry{{AtMs: 1, Kind: "note", Text: "a"}, {AtMs: 12345.6, Kind: "note", Text: "b"}})
	want := "      +1.0ms  note: a\n  +12345.6ms  note: b\n"
	if buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
	buf.Reset()
	FormatTranscript(&buf, nil)
	if buf.Len() != 0 {
		t.Errorf("nil transcript wrote %q", buf.String())
	}
}

func TestXMLSafe(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain <&> é 🦀\t\n\r", "plain <&> é 🦀\t\n\r"},
		{"a\x00b", `a\x00b`},
		{"\x1b\x7f", `\x1b` + "\x7f"},
		{"bad\xff", `bad\xff`},
		{"\xed\xa0\x80", `\xed\xa0\x80`},
		{"x\uFFFEy\uFFFF", "x\uFFFDy\uFFFD"},
		{"\uFFFD", "\uFFFD"},
	}
	for _, tt := range tests {
		if got := xmlSafe(tt.in); got != tt.want {
			t.Errorf("xmlSafe(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

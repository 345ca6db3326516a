package reports

import (
	"reflect"
	"strings"
	"testing"
)

// TestDiagramReadsOutcomes: the diagram decides what became of a message
// from the outcome its fault entries record, whatever their sentences say;
// a transcript without outcomes (an older report) draws as before.
func TestDiagramReadsOutcomes(t *testing.T) {
	legacy := faultCheck().Transcript
	recorded := append([]Entry(nil), legacy...)
	for i, e := range recorded {
		if e.Kind == "fault" {
			e.Outcome = outcomeOf(e)
			e.OnProcess = e.Fault == "crash"
			// A sentence that would mislead a reader of words.
			e.Text = "not delivered: lost before it was replaced"
			recorded[i] = e
		}
	}
	if got, want := messageFates(recorded), messageFates(legacy); !reflect.DeepEqual(got, want) {
		t.Fatalf("fates from outcomes %v, from sentences %v", fates(got), fates(want))
	}
	svg := sequenceDiagram(recorded, 0).SVG
	if !strings.Contains(svg, `>crash</text>`) || strings.Count(svg, `class="lost"`) != 2 {
		t.Errorf("diagram from outcomes lacks the crash badge or the two lost marks:\n%s", svg)
	}

	for _, tc := range []struct {
		outcome     string
		stopped     bool
		mark        string
		held, onSrv bool
	}{
		{"delivered", false, "", false, false},
		{"duplicated", false, "", false, false},
		{"dropped", true, "×", false, false},
		{"replaced", true, "×", false, false},
		{"reset", true, "×", false, false},
		{"answered", true, "×", false, false},
		{"cut", true, "✂", false, false},
		{"held", false, "", true, false},
		{"released", false, "", true, false},
	} {
		es := []Entry{
			{Kind: "message", Dir: "s2c", Seq: 1, Raw: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)},
			// The sentence says the opposite of the outcome.
			{Kind: "fault", Dir: "s2c", Seq: 1, Rule: "r", Fault: "cut", Outcome: tc.outcome, Text: "stream closed before this message"},
		}
		f := messageFates(es)[0]
		if f == nil || f.stopped != tc.stopped || f.mark != tc.mark || f.held != tc.held {
			t.Errorf("outcome %s: fate %+v", tc.outcome, f)
		}
	}
}

// TestLegacyOutcomes: the sentences of older transcripts tell the outcome
// they meant, including the cases the sentence-reading diagram drew as
// delivered (a status that had to cut instead, an injected replacement, a
// barrier closed while holding).
func TestLegacyOutcomes(t *testing.T) {
	for _, tc := range []struct{ fault, text, want string }{
		{"drop", "message swallowed", "dropped"},
		{"crash", "SIGKILL to the server process group; message lost with it", "dropped"},
		{"crash", "delivered, then SIGKILL to the server process group", "delivered"},
		{"cut", "stream closed before this message", "cut"},
		{"cut", "delivered, then the stream was closed", "delivered"},
		{"cut", "no response stream on this transport; message dropped instead", "dropped"},
		{"status", "answered 404 by the proxy", "answered"},
		{"status", "headers already sent; stream cut instead of answering 404", "cut"},
		{"hold", "held until a matching message passes", "held"},
		{"hold", "link closed while held; message not delivered", "dropped"},
		{"barrier", "link closed while held; message not delivered", "dropped"},
		{"release", "trigger message passed", "released"},
		{"inject", "replaced by a synthetic message", "replaced"},
		{"inject", "synthetic message sent after this one", "delivered"},
		{"throttle", "stream limited to 10 bytes/s", "delivered"},
	} {
		if got := outcomeOf(Entry{Kind: "fault", Fault: tc.fault, Text: tc.text}); got != tc.want {
			t.Errorf("%s %q: %s, want %s", tc.fault, tc.text, got, tc.want)
		}
	}
	if !onProcess(Entry{Fault: "pause"}) || onProcess(Entry{Fault: "pause", Outcome: "delivered"}) || !onProcess(Entry{Fault: "x", Outcome: "delivered", OnProcess: true}) {
		t.Error("onProcess: the recorded flag decides, the name only in older transcripts")
	}
}

func fates(m map[int]*fate) map[int]fate {
	out := map[int]fate{}
	for k, v := range m {
		out[k] = *v
	}
	return out
}

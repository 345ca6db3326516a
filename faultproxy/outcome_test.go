package faultproxy

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// outcomesOf lists the fault entries of a transcript as "fault outcome",
// with "+process" for those that act on the server process, and the
// synthetic messages as "message injected".
func outcomesOf(es []Entry) []string {
	var out []string
	for _, e := range es {
		switch {
		case e.Kind == EntryFault:
			s := e.Fault + " " + e.Outcome.String()
			if e.OnProcess {
				s += " +process"
			}
			out = append(out, s)
		case e.Kind == EntryMessage && e.Outcome != 0:
			out = append(out, "message "+e.Outcome.String())
		}
	}
	return out
}

// TestStdioOutcomes: every fault says in its transcript entries what
// became of the message, in a field a reader needs no sentence to read.
func TestStdioOutcomes(t *testing.T) {
	call := `{"jsonrpc":"2.0","id":1,"method":"x"}`
	for _, tc := range []struct {
		name  string
		rule  Rule
		lines []string
		want  []string
	}{
		{"drop", Rule{Match: Match{Dir: ServerToClient}, Fault: Drop{}}, []string{call}, []string{"drop dropped"}},
		{"hold then release", Rule{Match: Match{Dir: ClientToServer, Method: "a"}, Fault: HoldUntil{Until: Match{Dir: ServerToClient, ID: jsonrpc.IntID(1)}}},
			[]string{`{"jsonrpc":"2.0","method":"a"}`, call}, []string{"hold held", "release released"}},
		{"delay", Rule{Match: Match{Dir: ClientToServer}, Fault: Delay{For: time.Millisecond}}, []string{call}, []string{"delay held", "release released"}},
		{"duplicate", Rule{Match: Match{Dir: ClientToServer}, Fault: Duplicate{}}, []string{call}, []string{"duplicate duplicated"}},
		{"inject after", Rule{Match: Match{Dir: ClientToServer}, Fault: Inject{Raw: []byte(`{}`)}}, []string{call}, []string{"inject delivered", "message injected"}},
		{"inject instead", Rule{Match: Match{Dir: ClientToServer}, Fault: Inject{Raw: []byte(`{}`), Replace: true}}, []string{call}, []string{"inject replaced", "message injected"}},
		{"cut without a stream", Rule{Match: Match{Dir: ClientToServer}, Fault: Cut{}}, []string{call}, []string{"cut dropped"}},
		{"status without HTTP", Rule{Match: Match{Dir: ClientToServer}, Fault: Status{Code: 503}}, []string{call}, []string{"status dropped"}},
		{"buffer without a stream", Rule{Match: Match{Dir: ClientToServer}, Fault: Buffer{}}, []string{call}, []string{"buffer delivered"}},
		{"crash", Rule{Match: Match{Dir: ServerToClient}, Fault: Crash{}}, []string{call}, []string{"crash dropped +process"}},
		{"crash after delivering", Rule{Match: Match{Dir: ServerToClient}, Fault: Crash{DeliverFirst: true}}, []string{call}, []string{"crash delivered +process"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.rule.Name, tc.rule.Times = "r", 1
			s := startEcho(t, "echo", tc.rule)
			for _, l := range tc.lines {
				fmt.Fprintln(s.Client(), l)
			}
			waitTranscript(t, s.Transcript(), strings.Join(tc.want, ", "), func(es []Entry) bool {
				return slices.Equal(outcomesOf(es), tc.want)
			})
		})
	}
}

// TestHTTPOutcomes: the faults that act on an HTTP response stream say
// what became of the message too.
func TestHTTPOutcomes(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		sseHead(w)
		sendEvent(w, note("one"))
		sendEvent(w, note("two"))
	})
	for _, tc := range []struct {
		name string
		rule Rule
		want []string
	}{
		{"answered", Rule{Match: Match{Dir: ClientToServer}, Fault: Status{Code: 404}}, []string{"status answered"}},
		{"cut", Rule{Match: Match{Dir: ServerToClient}, Fault: Cut{}}, []string{"cut cut"}},
		{"cut after delivering", Rule{Match: Match{Dir: ServerToClient}, Fault: Cut{Deliver: true}}, []string{"cut delivered"}},
		{"reset", Rule{Match: Match{Dir: ServerToClient}, Fault: Reset{}}, []string{"reset reset"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.rule.Name, tc.rule.Times = "r", 1
			p := startHTTPProxy(t, up, tc.rule)
			resp, err := newHTTPClient(t).Post(p.URL(), "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"x"}`))
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			waitTranscript(t, p.Transcript(), strings.Join(tc.want, ", "), func(es []Entry) bool {
				return slices.Equal(outcomesOf(es), tc.want)
			})
		})
	}
}

// TestOutcomeText: an outcome is written and read as its name, none is
// left out of an entry's JSON, and every name reads back.
func TestOutcomeText(t *testing.T) {
	for o := OutcomeDelivered; o <= OutcomeAnswered; o++ {
		b, err := o.MarshalText()
		if err != nil || string(b) != o.String() || o.String() == "" {
			t.Fatalf("%d: %q %v", o, b, err)
		}
		var back Outcome
		if err := back.UnmarshalText(b); err != nil || back != o {
			t.Fatalf("%s reads back as %v, %v", b, back, err)
		}
	}
	b, _ := json.Marshal(Entry{Kind: EntryFault, Fault: "drop", Outcome: OutcomeDropped})
	if !strings.Contains(string(b), `"outcome":"dropped"`) {
		t.Errorf("entry JSON %s", b)
	}
	if b, _ := json.Marshal(Entry{Kind: EntryNote}); strings.Contains(string(b), "outcome") || strings.Contains(string(b), "onProcess") {
		t.Errorf("entry without an outcome: %s", b)
	}
	var o Outcome
	if o.UnmarshalText([]byte("vanished")) == nil {
		t.Error("an unknown outcome was read")
	}
}

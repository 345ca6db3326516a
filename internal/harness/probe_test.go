package harness

import (
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

func TestProbeArgsUseTheDeclaredName(t *testing.T) {
	for _, arg := range []string{"tag", "label", "marker"} {
		a := ProbeArgs(arg, "T-1")
		if len(a) != 1 || a[arg] != "T-1" {
			t.Errorf("ProbeArgs(%q) = %v, want {%s: T-1}", arg, a, arg)
		}
	}
}

// TestReadProbe: an answer that says nothing about the tag is an error,
// never a zero state read as "no work ran"; a field the probe does not
// report stays unknown.
func TestReadProbe(t *testing.T) {
	msg := func(raw string) clients.Message {
		return clients.Message{Raw: []byte(raw), Env: jsonrpc.Parse([]byte(raw))}
	}
	peak := func(n int) *int { return &n }
	for _, tc := range []struct {
		name, raw string
		want      ProbeState
		err       string
	}{
		{"structured", `{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":{"label":"T-1","started":true,"stepsRun":3,"finished":false,"cancelled":false}}}`,
			ProbeState{Started: true, StepsRun: 3}, ""},
		{"JSON text only", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"started\":true,\"stepsRun\":6,\"finished\":true}"}]}}`,
			ProbeState{Started: true, StepsRun: 6, Finished: true}, ""},
		{"backlog reported", `{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"finished":true,"backlogPeak":12}}}`,
			ProbeState{Finished: true, BacklogPeak: peak(12)}, ""},
		{"backlog reported as 0", `{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"finished":true,"backlogPeak":0}}}`,
			ProbeState{Finished: true, BacklogPeak: peak(0)}, ""},
		{"no structured content, prose text", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"job T-1 is running"}]}}`,
			ProbeState{}, "nothing usable"},
		{"none of the fields", `{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"label":"T-1","state":"running"}}}`,
			ProbeState{}, "nothing usable"},
		{"another tag", `{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"label":"","started":false,"stepsRun":0}}}`,
			ProbeState{}, "answered about"},
		{"tool error (wrong argument name)", `{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[{"type":"text","text":"label: Required"}]}}`,
			ProbeState{}, "refused"},
		{"JSON-RPC error", `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params"}}`,
			ProbeState{}, "refused"},
		{"wrong type", `{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"stepsRun":"three"}}}`,
			ProbeState{}, "wrong type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadProbe(msg(tc.raw), "label", "T-1")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ReadProbe = %v, %v; want an error with %q", got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != tc.want.String() {
				t.Errorf("ReadProbe = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestReadProbeBacklogPresence: FLOW-SERVER-BOUNDED SKIPs when the probe
// does not report backlogPeak; only a reported peak (0 included) is a peak.
func TestReadProbeBacklogPresence(t *testing.T) {
	for raw, want := range map[string]string{
		`{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"finished":true,"stepsRun":400}}}`:                  "nil",
		`{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"finished":true,"backlogPeak":0}}}`:                 "0",
		`{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"finished":true,"backlogPeak":4999,"stepsRun":5}}}`: "4999",
	} {
		st, err := ReadProbe(clients.Message{Raw: []byte(raw), Env: jsonrpc.Parse([]byte(raw))}, "tag", "T")
		if err != nil {
			t.Fatal(err)
		}
		got := "nil"
		if st.BacklogPeak != nil {
			got = strconv.Itoa(*st.BacklogPeak)
		}
		if got != want {
			t.Errorf("%s: BacklogPeak = %s, want %s", raw, got, want)
		}
	}
}

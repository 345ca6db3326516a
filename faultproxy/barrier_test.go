package faultproxy

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// TestBarrierReleasesPartiesTogether: one barrier shared by two links holds
// the first request until the second arrives on the other link.
func TestBarrierReleasesPartiesTogether(t *testing.T) {
	b := NewBarrier(2, 5*time.Second)
	rule := Rule{Name: "race", Match: Match{Dir: ClientToServer, Kind: jsonrpc.Request, Method: "tools/call"}, Fault: b}
	a, c := startEcho(t, "echo", rule), startEcho(t, "echo", rule)
	la, lc := newLineReader(a.Client()), newLineReader(c.Client())
	fmt.Fprintln(a.Client(), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`)
	// Held: nothing comes back on the first link while it is alone.
	fmt.Fprintln(a.Client(), `{"jsonrpc":"2.0","id":9,"result":{}}`)
	if got := la.next(t, wait); !strings.Contains(got, `"id":9`) {
		t.Fatalf("first link echoed %q before the barrier opened", got)
	}
	if b.Arrived() != 1 {
		t.Fatalf("arrived %d, want 1", b.Arrived())
	}
	fmt.Fprintln(c.Client(), `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{}}`)
	if got := la.next(t, wait); !strings.Contains(got, `"id":1`) {
		t.Fatalf("first link %q", got)
	}
	if got := lc.next(t, wait); !strings.Contains(got, `"id":2`) {
		t.Fatalf("second link %q", got)
	}
	if !hasFault(a.Transcript(), "race", "barrier") || !hasFault(c.Transcript(), "race", "release") {
		t.Fatal("barrier and release not recorded")
	}
}

func TestBarrierIsBounded(t *testing.T) {
	s := startEcho(t, "echo", Rule{Name: "alone", Match: Match{Dir: ClientToServer}, Fault: NewBarrier(2, 50*time.Millisecond)})
	lr := newLineReader(s.Client())
	fmt.Fprintln(s.Client(), `{"a":1}`)
	if got := lr.next(t, wait); strings.TrimSpace(got) != `{"a":1}` {
		t.Fatalf("got %q", got)
	}
}

package faultproxy

import (
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

func TestParseRules(t *testing.T) {
	rules, err := ParseRules([]byte(`
rules:
  - name: lose
    match: {dir: s2c, kind: response, repliesTo: tools/call, id: 3}
    nth: 1
    fault: {drop: true}
  - name: late-cancel
    match: {dir: c2s, method: notifications/cancelled, cancelledId: "a"}
    fault: {holdUntil: {dir: s2c, id: "a"}, max: 2s}
  - name: slow
    match: {progressToken: 7}
    after: {method: go}
    fault: {delay: 150ms}
  - name: garbage
    match: {method: ping}
    fault: {inject: "{oops", injectDir: s2c, before: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 4 {
		t.Fatalf("%d rules", len(rules))
	}
	if rules[0].Match.ID != jsonrpc.IntID(3) || rules[0].Nth != 1 {
		t.Errorf("rule 0: %+v", rules[0])
	}
	if _, ok := rules[0].Fault.(Drop); !ok {
		t.Errorf("rule 0 fault %T", rules[0].Fault)
	}
	h, ok := rules[1].Fault.(HoldUntil)
	if !ok || h.Until.ID != jsonrpc.StringID("a") || h.Max != 2*time.Second || rules[1].Match.CancelledID != jsonrpc.StringID("a") {
		t.Errorf("rule 1: %+v %+v", rules[1], rules[1].Fault)
	}
	if d, ok := rules[2].Fault.(Delay); !ok || d.For != 150*time.Millisecond || rules[2].After == nil || rules[2].Match.ProgressToken != jsonrpc.IntID(7) {
		t.Errorf("rule 2: %+v", rules[2])
	}
	if in, ok := rules[3].Fault.(Inject); !ok || string(in.Raw) != "{oops" || in.Dir != ServerToClient || !in.Before {
		t.Errorf("rule 3: %+v", rules[3].Fault)
	}
}

func TestParseRulesRejects(t *testing.T) {
	for name, doc := range map[string]string{
		"typo":        "rules: [{name: a, fault: {dorp: true}}]",
		"no fault":    "rules: [{name: a}]",
		"two faults":  "rules: [{name: a, fault: {drop: true, crash: true}}]",
		"no name":     "rules: [{fault: {drop: true}}]",
		"bad dir":     "rules: [{name: a, match: {dir: up}, fault: {drop: true}}]",
		"bad kind":    "rules: [{name: a, match: {kind: blob}, fault: {drop: true}}]",
		"object id":   "rules: [{name: a, match: {id: {x: 1}}, fault: {drop: true}}]",
		"duplicate":   "rules: [{name: a, fault: {drop: true}}, {name: a, fault: {drop: true}}]",
		"negative":    "rules: [{name: a, nth: -1, fault: {drop: true}}]",
		"not yaml":    "rules: [",
		"bad delay":   "rules: [{name: a, fault: {delay: soon}}]",
		"neg delay":   "rules: [{name: a, fault: {delay: -1s}}]",
		"inject dir":  "rules: [{name: a, fault: {inject: x, injectDir: sideways}}]",
		"hold badkey": "rules: [{name: a, fault: {holdUntil: {dir: nope}}}]",
	} {
		if _, err := ParseRules([]byte(doc)); err == nil {
			t.Errorf("%s: accepted %q", name, doc)
		} else if !strings.Contains(err.Error(), "rule file") {
			t.Errorf("%s: error lacks context: %v", name, err)
		}
	}
}

func TestTranscriptLimitAndPassedHistory(t *testing.T) {
	tr := NewTranscript(nil)
	tr.SetLimit(10)
	for i := 0; i < 1000; i++ {
		tr.Note("n%d", i)
	}
	if tr.Len() != 1000 {
		t.Fatalf("Len %d", tr.Len())
	}
	kept := tr.Entries()
	if len(kept) > 20 || kept[len(kept)-1].Index != 999 || kept[len(kept)-1].Text != "n999" {
		t.Fatalf("kept %d entries, last %+v", len(kept), kept[len(kept)-1])
	}
	if got := tr.Since0(995); len(got) != 5 || got[0].Index != 995 {
		t.Fatalf("Since0(995) = %+v", got)
	}

	c := newCore(t.Context(), NewTranscript(nil), nil, nil)
	for i := 0; i < 3*passedHistory; i++ {
		c.markPassed(&Message{Raw: []byte(`{"method":"x"}`)})
	}
	c.markPassed(&Message{Raw: []byte(`{"method":"last"}`)})
	if len(c.delivered) > 2*passedHistory {
		t.Fatalf("delivered history not bounded: %d", len(c.delivered))
	}
	if err := c.WaitPassed(t.Context(), Match{Method: "last"}); err != nil {
		t.Fatal(err)
	}
}

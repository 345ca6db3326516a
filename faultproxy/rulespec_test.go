package faultproxy

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"
)

// TestRuleSpecRoundTrip: a spec written as JSON by the control API reads
// back as the same rule, through the same parser as a rule file.
func TestRuleSpecRoundTrip(t *testing.T) {
	for name, doc := range map[string]string{
		"yaml": "name: late\nmatch: {dir: c2s, method: notifications/cancelled}\nfault: {holdUntil: {dir: s2c, kind: response}, max: 2s}\n",
		"json": `{"name":"late","match":{"dir":"c2s","method":"notifications/cancelled"},"fault":{"holdUntil":{"dir":"s2c","kind":"response"},"max":"2s"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			rs, err := ParseRuleSpec([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(rs)
			if err != nil {
				t.Fatal(err)
			}
			want := `{"name":"late","match":{"dir":"c2s","method":"notifications/cancelled"},"fault":{"holdUntil":{"dir":"s2c","kind":"response"},"max":"2s"}}`
			if string(b) != want {
				t.Errorf("JSON\n got %s\nwant %s", b, want)
			}
			again, err := ParseRuleSpec(b)
			if err != nil {
				t.Fatal(err)
			}
			r, err := again.Rule()
			if err != nil {
				t.Fatal(err)
			}
			if h, ok := r.Fault.(HoldUntil); !ok || h.Max != 2*time.Second {
				t.Errorf("fault %+v", r.Fault)
			}
		})
	}
}

func TestRuleSpecRejects(t *testing.T) {
	for name, doc := range map[string]string{
		"empty":       "",
		"typo":        `{"name":"a","fault":{"dorp":true}}`,
		"probability": `{"name":"a","probability":1.5,"fault":{"drop":true}}`,
		"duration":    `{"name":"a","fault":{"delay":150}}`,
	} {
		if _, err := ParseRuleSpec([]byte(doc)); err == nil {
			t.Errorf("%s: accepted %q", name, doc)
		}
	}
}

// TestProbabilityIsSeeded: a rule's draws come from its own source, so the
// same seed fires on the same messages, whatever other rules do.
func TestProbabilityIsSeeded(t *testing.T) {
	pattern := func(seed uint64) []int {
		rs := NewRules()
		rules := []Rule{{Name: "flaky", Match: Match{Dir: ServerToClient}, Fault: Drop{}, Probability: 0.5, Seed: seed}}
		if err := rs.Set(rules...); err != nil {
			t.Fatal(err)
		}
		var fired []int
		for i := range 64 {
			sel, ok := rs.evaluate(&Message{Dir: ServerToClient, Raw: []byte(`{"jsonrpc":"2.0","method":"x"}`)})
			if ok && sel.name == "flaky" {
				fired = append(fired, i)
			}
		}
		return fired
	}
	a, b := pattern(7), pattern(7)
	if !slices.Equal(a, b) {
		t.Fatalf("same seed, different draws: %v vs %v", a, b)
	}
	if len(a) < 16 || len(a) > 48 {
		t.Errorf("probability 0.5 fired %d of 64 times", len(a))
	}
	if c := pattern(8); slices.Equal(a, c) {
		t.Errorf("seeds 7 and 8 drew the same pattern %v", a)
	}
	// With no seed given, the listed seed is the one derived from the name.
	rs := NewRules()
	_ = rs.Set(Rule{Name: "n", Fault: Drop{}})
	if got := rs.List()[0].Seed; got != (Rule{Name: "n"}).EffectiveSeed() || got == 0 {
		t.Errorf("listed seed %d", got)
	}
}

func TestInsertReplaceList(t *testing.T) {
	rs := NewRules()
	if err := rs.Insert(Rule{Name: "a", Fault: Drop{}}); err != nil {
		t.Fatal(err)
	}
	if err := rs.Insert(Rule{Name: "a", Fault: Pass{}}); !errors.Is(err, ErrRuleExists) {
		t.Errorf("second insert: %v", err)
	}
	_ = rs.Insert(Rule{Name: "b", Fault: Drop{}, Seed: 5})
	msg := &Message{Dir: ServerToClient, Raw: []byte(`{}`)}
	if sel, ok := rs.evaluate(msg); !ok || sel.name != "a" {
		t.Fatalf("first rule should fire: %+v", sel)
	}
	if err := rs.Replace("a", Rule{Name: "a", Fault: Pass{}, Match: Match{Dir: ClientToServer}}); err != nil {
		t.Fatal(err)
	}
	if err := rs.Replace("zz", Rule{Name: "zz", Fault: Pass{}}); !errors.Is(err, ErrNoRule) {
		t.Errorf("replace missing: %v", err)
	}
	l := rs.List()
	if len(l) != 2 || l[0].Name != "a" || l[0].Fired != 0 || l[1].Name != "b" || l[1].Seed != 5 || l[1].Seen != 1 {
		t.Errorf("list %+v", l)
	}
	if _, ok := l[0].Fault.(Pass); !ok {
		t.Errorf("replaced fault %T", l[0].Fault)
	}
}

package faultproxy

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// truncate is a fault defined, as every fault is, in one place: its type,
// its Apply and its registration. It has a key of its own (no FaultSpec
// field): the test shows that such a fault needs no other file.
type truncate struct{ Keep int }

var _ Fault = truncate{}

func (tr truncate) Apply(_ context.Context, c Conduit, msg *Message) {
	out := msg.clone()
	if len(out.Raw) > tr.Keep {
		out.Raw = out.Raw[:tr.Keep]
	}
	c.Record(msg, "truncate", OutcomeDelivered, fmt.Sprintf("cut to %d bytes", tr.Keep))
	_ = c.Deliver(out)
}

func init() {
	RegisterFault(FaultType{
		Name: "truncateTo", Of: truncate{},
		Parse: func(fs FaultSpec) (Fault, bool, error) {
			var keep int
			ok, err := fs.Param("truncateTo", &keep)
			if err != nil || !ok {
				return nil, ok, err
			}
			if keep < 0 {
				return nil, true, fmt.Errorf("truncateTo must not be negative")
			}
			return truncate{Keep: keep}, true, nil
		},
	})
}

// TestEveryFaultRegistered: each rule-file form parses to the fault its
// file registered, with that file's capabilities, and reads back the same
// through JSON (the control API's form).
func TestEveryFaultRegistered(t *testing.T) {
	cases := []struct {
		doc   string
		want  Fault
		needs Caps
		uses  Caps
	}{
		{`{pass: true}`, Pass{}, 0, 0},
		{`{drop: true}`, Drop{}, 0, 0},
		{`{delay: 150ms}`, Delay{For: 150 * time.Millisecond}, 0, 0},
		{`{holdUntil: {dir: s2c}, max: 2s}`, HoldUntil{Until: Match{Dir: ServerToClient}, Max: 2 * time.Second}, 0, 0},
		{`{duplicate: 2}`, Duplicate{Count: 2}, 0, 0},
		{`{inject: "x", injectDir: c2s, replace: true}`, Inject{Dir: ClientToServer, Raw: []byte("x"), Replace: true}, 0, 0},
		{`{crash: true, deliverFirst: true}`, Crash{DeliverFirst: true}, CapProcess, 0},
		{`{pause: 1s}`, Pause{For: time.Second}, CapProcess, 0},
		{`{cut: true, deliver: true}`, Cut{Deliver: true}, 0, CapStream},
		{`{reset: true}`, Reset{}, 0, CapStream},
		{`{buffer: 0}`, Buffer{}, 0, CapStream},
		{`{throttle: 1024}`, Throttle{BytesPerSecond: 1024}, 0, CapStream},
		{`{status: 404, body: "{}"}`, Status{Code: 404, Body: []byte("{}")}, 0, CapStream},
		{`{truncateTo: 3}`, truncate{Keep: 3}, 0, 0},
	}
	seen := map[string]bool{}
	for _, tc := range cases {
		t.Run(tc.doc, func(t *testing.T) {
			rs, err := ParseRuleSpec([]byte("name: r\nfault: " + tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			r, err := rs.Rule()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(r.Fault, tc.want) {
				t.Fatalf("fault %#v, want %#v", r.Fault, tc.want)
			}
			ft, ok := FaultTypeOf(r.Fault)
			if !ok || ft.Needs != tc.needs || ft.Uses != tc.uses {
				t.Fatalf("registration %+v (found %v), want needs %v uses %v", ft, ok, tc.needs, tc.uses)
			}
			seen[ft.Name] = true
			b, err := json.Marshal(rs)
			if err != nil {
				t.Fatal(err)
			}
			again, err := ParseRuleSpec(b)
			if err != nil {
				t.Fatalf("%s: %v", b, err)
			}
			var viaJSON RuleSpec
			if err := json.Unmarshal(b, &viaJSON); err != nil {
				t.Fatal(err)
			}
			for _, s := range []RuleSpec{again, viaJSON} {
				r2, err := s.Rule()
				if err != nil || !reflect.DeepEqual(r2.Fault, tc.want) {
					t.Fatalf("%s reads back as %#v, %v", b, r2.Fault, err)
				}
			}
		})
	}
	for _, ft := range FaultTypes() {
		if ft.Parse != nil && !seen[ft.Name] {
			t.Errorf("fault %s is registered but has no case here", ft.Name)
		}
	}
}

// TestFaultSpecFieldsAreRegistered: every key of the fault object that has
// a FaultSpec field is read by a registered fault, so no key is parsed and
// then ignored by every fault.
func TestFaultSpecFieldsAreRegistered(t *testing.T) {
	for k := range specKeys {
		if !isFaultKey(k) {
			t.Errorf("FaultSpec field %q is read by no registered fault", k)
		}
	}
}

func TestFaultParamRejects(t *testing.T) {
	for name, doc := range map[string]string{
		"unknown key": `{truncateTo: 3, truncateTypo: 1}`,
		"bad value":   `{truncateTo: many}`,
		"negative":    `{truncateTo: -1}`,
		"two faults":  `{truncateTo: 3, drop: true}`,
	} {
		if _, err := ParseRuleSpec([]byte("name: r\nfault: " + doc)); err == nil {
			t.Errorf("%s: %s accepted", name, doc)
		}
	}
}

// TestCheckRule: the registry's capabilities decide which rules a link
// refuses: a fault that needs a process is refused without one; one that
// only uses a stream falls back and is not refused.
func TestCheckRule(t *testing.T) {
	for _, tc := range []struct {
		fault  Fault
		offers Caps
		ok     bool
	}{
		{Crash{}, CapStream, false},
		{Pause{}, 0, false},
		{Crash{}, CapProcess, true},
		{Cut{}, 0, true},
		{Cut{}, CapStream, true},
		{Drop{}, 0, true},
		{NewBarrier(2, 0), 0, true},
		{truncate{}, 0, true},
	} {
		err := CheckRule(Rule{Name: "r", Fault: tc.fault}, tc.offers)
		if (err == nil) != tc.ok {
			t.Errorf("%T offered %v: %v", tc.fault, tc.offers, err)
		}
		if err != nil && !strings.Contains(err.Error(), "server process") {
			t.Errorf("%T: error %q does not say what is missing", tc.fault, err)
		}
	}
}

// TestRegisteredFaultRuns: the test's own fault, installed from a rule
// file, acts on a real stdio link.
func TestRegisteredFaultRuns(t *testing.T) {
	rules, err := ParseRules([]byte("rules:\n  - name: short\n    match: {dir: s2c}\n    fault: {truncateTo: 5}\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := startEcho(t, "echo", rules...)
	lr := newLineReader(s.Client())
	if _, err := s.Client().Write([]byte(`{"jsonrpc":"2.0","method":"x"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	if got := lr.next(t, 5*time.Second); got != `{"jso`+"\n" {
		t.Fatalf("got %q", got)
	}
}

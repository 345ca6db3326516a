package faultproxy

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// Rule is a match and a fault: when a message satisfies Match (and the
// occurrence and arming conditions), Fault decides what happens to it.
type Rule struct {
	// Name identifies the rule in the transcript and the control API.
	Name string
	// Match selects the messages the rule considers.
	Match Match
	// Nth, when > 0, fires only on the nth message (1-based) that satisfies
	// Match (and After); otherwise every such message fires.
	Nth int
	// After, when set, arms the rule only once a message satisfying it has
	// been seen by the proxy; messages before that are not counted.
	After *Match
	// Times, when > 0, bounds how many times the rule fires.
	Times int
	// Fault is what happens to a selected message.
	Fault Fault
	// Seed seeds the rule's own random source, for faults that draw
	// (probabilistic drops, jitter). Zero means a seed derived from Name
	// (see EffectiveSeed).
	Seed uint64
	// Probability, when in (0,1), fires the rule on a message it would
	// fire on only when a draw from its own random source falls below it,
	// so a run is reproduced exactly by the same seed. Zero means always.
	Probability float64
}

// EffectiveSeed is the seed of the rule's random source: Seed, or when
// zero a seed derived from Name.
func (r Rule) EffectiveSeed() uint64 {
	if r.Seed != 0 {
		return r.Seed
	}
	var seed uint64
	for _, c := range r.Name {
		seed = seed*131 + uint64(c)
	}
	return seed + 1
}

// RunSeed mixes a run's seed into a rule's own seed: every rule of a run
// started with the same run seed draws the same numbers, and the rules of
// one run differ from each other (their own seeds differ). A zero run
// seed leaves the rule's seed as is.
func RunSeed(run, rule uint64) uint64 {
	if run == 0 {
		return rule
	}
	x := run ^ (rule * 0x9e3779b97f4a7c15)
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	if x == 0 {
		x = 1
	}
	return x
}

// ruleState is the mutable state of an installed rule.
type ruleState struct {
	Rule
	seed  uint64 // the seed its source was made with
	armed bool
	seen  int
	fired int
	rng   *rand.Rand
}

// Rules is the rule set of a link. Rules are evaluated in order for every
// message; the first that fires applies its fault. Set replaces the whole set
// atomically, so a fault set is installed before traffic starts.
type Rules struct {
	mu    sync.Mutex
	rules []*ruleState
	// count is len(rules), stored under mu at every change: evaluate's
	// fast path (no rule) reads it without the lock.
	count atomic.Int32
	// methods remembers the method of each request seen, per direction of
	// the request, so replies can be matched with RepliesTo.
	methods map[Direction]map[jsonrpc.ID]string
	// runSeed is mixed into every rule's seed (RunSeed); zero: none.
	runSeed uint64
}

// NewRules returns an empty rule set.
func NewRules() *Rules { return NewRulesSeed(0) }

// NewRulesSeed returns an empty rule set whose rules draw from sources
// seeded with RunSeed(seed, rule's EffectiveSeed): the run's --seed
// reproduces every draw of every rule.
func NewRulesSeed(seed uint64) *Rules {
	return &Rules{methods: map[Direction]map[jsonrpc.ID]string{ClientToServer: {}, ServerToClient: {}}, runSeed: seed}
}

func (rs *Rules) newState(r Rule) (*ruleState, error) {
	if r.Fault == nil {
		return nil, fmt.Errorf("rule %q: no fault", r.Name)
	}
	seed := RunSeed(rs.runSeed, r.EffectiveSeed())
	return &ruleState{Rule: r, seed: seed, armed: r.After == nil, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}, nil
}

// Set replaces every rule at once.
func (rs *Rules) Set(rules ...Rule) error {
	states := make([]*ruleState, 0, len(rules))
	for _, r := range rules {
		st, err := rs.newState(r)
		if err != nil {
			return err
		}
		states = append(states, st)
	}
	rs.mu.Lock()
	rs.rules = states
	rs.count.Store(int32(len(rs.rules)))
	rs.mu.Unlock()
	return nil
}

// Add appends a rule.
func (rs *Rules) Add(r Rule) error {
	st, err := rs.newState(r)
	if err != nil {
		return err
	}
	rs.mu.Lock()
	rs.rules = append(rs.rules, st)
	rs.count.Store(int32(len(rs.rules)))
	rs.mu.Unlock()
	return nil
}

// Remove deletes the rules named name and reports whether any existed.
func (rs *Rules) Remove(name string) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	kept := rs.rules[:0]
	found := false
	for _, st := range rs.rules {
		if st.Name == name {
			found = true
			continue
		}
		kept = append(kept, st)
	}
	rs.rules = kept
	rs.count.Store(int32(len(rs.rules)))
	return found
}

// ErrRuleExists is returned by Insert when a rule of that name is installed.
var ErrRuleExists = errors.New("faultproxy: a rule of that name is installed")

// ErrNoRule is returned by Replace when no rule of that name is installed.
var ErrNoRule = errors.New("faultproxy: no rule of that name")

// Insert appends a rule unless one of the same name is installed
// (ErrRuleExists); the check and the append are one atomic step.
func (rs *Rules) Insert(r Rule) error {
	st, err := rs.newState(r)
	if err != nil {
		return err
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for _, old := range rs.rules {
		if old.Name == r.Name {
			return fmt.Errorf("%w: %q", ErrRuleExists, r.Name)
		}
	}
	rs.rules = append(rs.rules, st)
	rs.count.Store(int32(len(rs.rules)))
	return nil
}

// Replace swaps the installed rule named name for r, in the same place in
// the evaluation order, with fresh counters and a fresh random source; it
// fails with ErrNoRule when there is none.
func (rs *Rules) Replace(name string, r Rule) error {
	st, err := rs.newState(r)
	if err != nil {
		return err
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for i, old := range rs.rules {
		if old.Name == name {
			rs.rules[i] = st
			return nil
		}
	}
	return fmt.Errorf("%w: %q", ErrNoRule, name)
}

// RuleStatus is an installed rule and its counters.
type RuleStatus struct {
	Rule
	// Seed is the seed of the rule's random source: EffectiveSeed, mixed
	// with the run's seed (RunSeed) in a set made by NewRulesSeed.
	Seed uint64
	// Armed is false while the rule waits for its After message.
	Armed bool
	// Seen counts the messages that satisfied Match once armed; Fired
	// counts those the rule acted on.
	Seen, Fired int
}

// List returns the installed rules in evaluation order with their
// counters.
func (rs *Rules) List() []RuleStatus {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	out := make([]RuleStatus, 0, len(rs.rules))
	for _, st := range rs.rules {
		out = append(out, RuleStatus{Rule: st.Rule, Seed: st.seed, Armed: st.armed, Seen: st.seen, Fired: st.fired})
	}
	return out
}

// Clear removes every rule.
func (rs *Rules) Clear() { _ = rs.Set() }

// Fired returns how many times the named rule has fired.
func (rs *Rules) Fired(name string) int {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	n := 0
	for _, st := range rs.rules {
		if st.Name == name {
			n += st.fired
		}
	}
	return n
}

// selected is a rule that fired on a message.
type selected struct {
	name  string
	fault Fault
	rng   *rand.Rand
}

// evaluate updates every rule's counters for msg and returns the first rule
// that fires, if any.
func (rs *Rules) evaluate(msg *Message) (selected, bool) {
	if rs.count.Load() == 0 {
		// No rule (the lock would say the same): nothing to evaluate.
		return selected{}, false
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if len(rs.rules) == 0 {
		// The fast path: with no rule the message is not even parsed.
		return selected{}, false
	}
	env := msg.Envelope()
	replied := ""
	if env.Kind.IsReply() && env.ID != "" {
		replied = rs.methods[msg.Dir.Reverse()][env.ID]
	}
	if env.Kind == jsonrpc.Request && env.ID != "" {
		rs.methods[msg.Dir][env.ID] = env.Method
	}
	var out selected
	found := false
	for _, st := range rs.rules {
		if !st.armed {
			if st.After.matches(msg, replied) {
				st.armed = true
			}
			continue
		}
		if !st.Match.matches(msg, replied) {
			continue
		}
		st.seen++
		if st.Nth > 0 && st.seen != st.Nth {
			continue
		}
		if st.Times > 0 && st.fired >= st.Times {
			continue
		}
		if found {
			continue
		}
		if st.Probability > 0 && st.Probability < 1 && st.rng.Float64() >= st.Probability {
			continue
		}
		st.fired++
		out, found = selected{name: st.Name, fault: st.Fault, rng: st.rng}, true
	}
	return out, found
}

// Fault acts on one selected message. It decides whether, when and how often
// the message reaches its destination, through the Conduit.
type Fault interface {
	// Apply handles msg. It must not block the link for long: a fault that
	// waits starts its work with Conduit.Go.
	Apply(ctx context.Context, c Conduit, msg *Message)
}

// Conduit is what a fault may do to a link.
type Conduit interface {
	// Deliver writes msg to its destination now.
	Deliver(msg *Message) error
	// Inject sends a synthetic message in dir.
	Inject(dir Direction, raw []byte) error
	// WaitPassed blocks until a message satisfying m has been delivered
	// (including before the call), or ctx ends.
	WaitPassed(ctx context.Context, m Match) error
	// Signal sends sig to the server's process group.
	Signal(sig Signal) error
	// Record writes a fault entry for msg in the transcript: the name the
	// entry shows (drop, hold, release …), what became of msg, and a
	// sentence for people.
	Record(msg *Message, fault string, o Outcome, text string)
	// Go runs fn on its own goroutine, bounded by the link's lifetime.
	Go(fn func(ctx context.Context))
	// Rand is the firing rule's own seeded random source.
	Rand() *rand.Rand
	// Rule names the firing rule.
	Rule() string
	// Stream controls the message's HTTP response stream; nil on stdio.
	Stream() StreamControl
}

// repliedMethod returns the method of the request msg answers, if known.
func (rs *Rules) repliedMethod(msg *Message) string {
	env := msg.Envelope()
	if !env.Kind.IsReply() || env.ID == "" {
		return ""
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.methods[msg.Dir.Reverse()][env.ID]
}

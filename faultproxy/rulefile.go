package faultproxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// A rule file is YAML (or JSON) of the form:
//
//	rules:
//	  - name: lose-first-call-response
//	    match: {dir: s2c, kind: response, repliesTo: tools/call}
//	    nth: 1
//	    fault: {drop: true}
//	  - name: late-cancel
//	    match: {dir: c2s, method: notifications/cancelled}
//	    fault: {holdUntil: {dir: s2c, kind: response}, max: 10s}
//
// Ids and progress tokens are written as JSON values: id: 3 is the number,
// id: "3" the string. Faults (FaultTypes lists them, each registered in its
// own file fault_*.go): drop, delay, holdUntil (+max), duplicate, inject
// (+injectDir, before, replace), crash (+deliverFirst), pause, pass, and on
// HTTP: cut (+deliver), reset, buffer (bytes), throttle (bytes/s), status
// (+body). A rule may also carry probability (fire on a matching
// message with this probability, drawn from the rule's own source) and seed
// (that source's seed; zero derives one from the name). The control API of
// package faultproxy/control takes the same schema, one rule at a time or a
// whole file.
type ruleFile struct {
	Rules []RuleSpec `yaml:"rules" json:"rules"`
}

// RuleSpec is one rule as written in a rule file and sent to the control
// API: the one schema both share. Decode it with ParseRuleSpec (YAML or
// JSON); Rule turns it into an installable Rule.
type RuleSpec struct {
	Name  string     `yaml:"name" json:"name"`
	Match MatchSpec  `yaml:"match" json:"match"`
	After *MatchSpec `yaml:"after,omitempty" json:"after,omitempty"`
	Nth   int        `yaml:"nth,omitempty" json:"nth,omitempty"`
	Times int        `yaml:"times,omitempty" json:"times,omitempty"`
	// Probability, when in (0,1), fires the rule on a matching message
	// only when a draw from the rule's own seeded source falls below it.
	Probability float64   `yaml:"probability,omitempty" json:"probability,omitempty"`
	Seed        uint64    `yaml:"seed,omitempty" json:"seed,omitempty"`
	Fault       FaultSpec `yaml:"fault" json:"fault"`
}

// MatchSpec is the written form of a Match. Ids and progress tokens are
// JSON values: 3 is the number, "3" the string.
type MatchSpec struct {
	Dir           Direction    `yaml:"dir,omitempty" json:"dir,omitempty"`
	Kind          jsonrpc.Kind `yaml:"kind,omitempty" json:"kind,omitempty"`
	Method        string       `yaml:"method,omitempty" json:"method,omitempty"`
	ID            any          `yaml:"id,omitempty" json:"id,omitempty"`
	ProgressToken any          `yaml:"progressToken,omitempty" json:"progressToken,omitempty"`
	CancelledID   any          `yaml:"cancelledId,omitempty" json:"cancelledId,omitempty"`
	RepliesTo     string       `yaml:"repliesTo,omitempty" json:"repliesTo,omitempty"`
	HTTPMethod    string       `yaml:"httpMethod,omitempty" json:"httpMethod,omitempty"`
	Comment       bool         `yaml:"comment,omitempty" json:"comment,omitempty"`
}

// FaultSpec is the written form of a Fault: exactly one fault named (each
// fault's file registers the keys it reads; see RegisterFault).
type FaultSpec struct {
	Pass         bool       `yaml:"pass,omitempty" json:"pass,omitempty"`
	Drop         bool       `yaml:"drop,omitempty" json:"drop,omitempty"`
	Delay        *Duration  `yaml:"delay,omitempty" json:"delay,omitempty"`
	HoldUntil    *MatchSpec `yaml:"holdUntil,omitempty" json:"holdUntil,omitempty"`
	Max          Duration   `yaml:"max,omitempty" json:"max,omitempty"`
	Duplicate    int        `yaml:"duplicate,omitempty" json:"duplicate,omitempty"`
	Inject       *string    `yaml:"inject,omitempty" json:"inject,omitempty"`
	InjectDir    Direction  `yaml:"injectDir,omitempty" json:"injectDir,omitempty"`
	Before       bool       `yaml:"before,omitempty" json:"before,omitempty"`
	Replace      bool       `yaml:"replace,omitempty" json:"replace,omitempty"`
	Crash        bool       `yaml:"crash,omitempty" json:"crash,omitempty"`
	DeliverFirst bool       `yaml:"deliverFirst,omitempty" json:"deliverFirst,omitempty"`
	Pause        *Duration  `yaml:"pause,omitempty" json:"pause,omitempty"`
	Cut          bool       `yaml:"cut,omitempty" json:"cut,omitempty"`
	Deliver      bool       `yaml:"deliver,omitempty" json:"deliver,omitempty"`
	Reset        bool       `yaml:"reset,omitempty" json:"reset,omitempty"`
	Buffer       *int       `yaml:"buffer,omitempty" json:"buffer,omitempty"`
	Throttle     int        `yaml:"throttle,omitempty" json:"throttle,omitempty"`
	Status       int        `yaml:"status,omitempty" json:"status,omitempty"`
	Body         string     `yaml:"body,omitempty" json:"body,omitempty"`
	// Params holds the keys of faults registered with keys of their own,
	// which have no field above (key → value as written); Param decodes
	// one. The fields above are those of the faults this package had
	// before faults registered themselves; they stay for Go callers.
	Params map[string]any `yaml:",inline" json:"-"`
}

// Duration is a time.Duration written as Go duration text ("150ms", "2s")
// in both YAML and JSON.
type Duration time.Duration

// String returns the duration as Go duration text.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes the duration as text.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads duration text.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration: want text such as \"150ms\": %w", err)
	}
	return d.parse(s)
}

// MarshalYAML writes the duration as text.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// UnmarshalYAML reads duration text.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: duration: want text such as 150ms", n.Line)
	}
	return d.parse(n.Value)
}

func (d *Duration) parse(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration %q: %w", s, err)
	}
	*d = Duration(v)
	return nil
}

// ParseRuleSpecs reads a rule file (YAML or JSON, {rules: [...]}) into its
// specs, checking each as ParseRules does.
func ParseRuleSpecs(data []byte) ([]RuleSpec, error) {
	var rf ruleFile
	if err := decodeStrict(data, &rf); err != nil {
		return nil, fmt.Errorf("rule file: %w", err)
	}
	seen := map[string]bool{}
	for i, rs := range rf.Rules {
		if _, err := rs.Rule(); err != nil {
			return nil, fmt.Errorf("rule file: rule %d (%s): %w", i+1, rs.Name, err)
		}
		if seen[rs.Name] {
			return nil, fmt.Errorf("rule file: rule name %q used twice", rs.Name)
		}
		seen[rs.Name] = true
	}
	return rf.Rules, nil
}

// ParseRuleSpec reads one rule (YAML or JSON, the form of one entry of a
// rule file) and checks it.
func ParseRuleSpec(data []byte) (RuleSpec, error) { return ParseRuleSpecNamed(data, "") }

// ParseRuleSpecNamed is ParseRuleSpec for a rule whose name is known from
// elsewhere (a URL path): a spec without a name gets it, one with another
// name is an error.
func ParseRuleSpecNamed(data []byte, name string) (RuleSpec, error) {
	var rs RuleSpec
	if err := decodeStrict(data, &rs); err != nil {
		return rs, fmt.Errorf("rule: %w", err)
	}
	switch {
	case name == "":
	case rs.Name == "":
		rs.Name = name
	case rs.Name != name:
		return rs, fmt.Errorf("rule: body names rule %q, not %q", rs.Name, name)
	}
	if _, err := rs.Rule(); err != nil {
		return rs, fmt.Errorf("rule %s: %w", rs.Name, err)
	}
	return rs, nil
}

// decodeStrict decodes YAML (JSON is YAML) refusing unknown fields.
func decodeStrict(data []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("empty document")
		}
		return err
	}
	return nil
}

// ParseRules reads a rule file. Every rule needs a name and exactly one
// fault; unknown fields are errors, so a typo never silently disables a
// fault.
func ParseRules(data []byte) ([]Rule, error) {
	specs, err := ParseRuleSpecs(data)
	if err != nil {
		return nil, err
	}
	out := make([]Rule, 0, len(specs))
	for _, rs := range specs {
		r, err := rs.Rule()
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// Rule checks the spec and builds the Rule it describes.
func (rs RuleSpec) Rule() (Rule, error) {
	if rs.Name == "" {
		return Rule{}, errors.New("no name")
	}
	if rs.Nth < 0 || rs.Times < 0 {
		return Rule{}, errors.New("nth and times must not be negative")
	}
	if rs.Probability < 0 || rs.Probability > 1 {
		return Rule{}, errors.New("probability must be between 0 and 1")
	}
	m, err := rs.Match.match()
	if err != nil {
		return Rule{}, fmt.Errorf("match: %w", err)
	}
	r := Rule{Name: rs.Name, Match: m, Nth: rs.Nth, Times: rs.Times, Seed: rs.Seed, Probability: rs.Probability}
	if rs.After != nil {
		a, err := rs.After.match()
		if err != nil {
			return Rule{}, fmt.Errorf("after: %w", err)
		}
		r.After = &a
	}
	r.Fault, err = rs.Fault.fault()
	return r, err
}

func (ms MatchSpec) match() (Match, error) {
	m := Match{Dir: ms.Dir, Kind: ms.Kind, Method: ms.Method, RepliesTo: ms.RepliesTo, HTTPMethod: ms.HTTPMethod, Comment: ms.Comment}
	switch ms.Dir {
	case "", ClientToServer, ServerToClient:
	default:
		return m, fmt.Errorf("dir %q: want c2s or s2c", ms.Dir)
	}
	switch ms.Kind {
	case "", jsonrpc.Request, jsonrpc.Notification, jsonrpc.Response, jsonrpc.ErrorReply, jsonrpc.Batch, jsonrpc.Invalid:
	default:
		return m, fmt.Errorf("kind %q: want request, notification, response, error, batch or invalid", ms.Kind)
	}
	var err error
	if m.ID, err = idValue(ms.ID); err != nil {
		return m, fmt.Errorf("id: %w", err)
	}
	if m.ProgressToken, err = idValue(ms.ProgressToken); err != nil {
		return m, fmt.Errorf("progressToken: %w", err)
	}
	if m.CancelledID, err = idValue(ms.CancelledID); err != nil {
		return m, fmt.Errorf("cancelledId: %w", err)
	}
	return m, nil
}

// idValue turns a YAML scalar into a canonical JSON id.
func idValue(v any) (jsonrpc.ID, error) {
	switch v.(type) {
	case nil:
		return "", nil
	case string, int, int64, uint64, float64:
		b, err := json.Marshal(v)
		if err != nil {
			return "", err
		}
		return jsonrpc.IDFrom(b), nil
	default:
		return "", fmt.Errorf("%v is not a string or a number", v)
	}
}

// fault builds the one fault the spec names, asking every registered fault
// whether the spec names it.
func (fs FaultSpec) fault() (Fault, error) {
	for k := range fs.Params {
		if !isFaultKey(k) {
			return nil, fmt.Errorf("unknown fault field %q (a fault has: %s)", k, strings.Join(faultKeys(), ", "))
		}
	}
	var faults []Fault
	for _, ft := range FaultTypes() {
		if ft.Parse == nil {
			continue
		}
		f, ok, err := ft.Parse(fs)
		if err != nil {
			return nil, err
		}
		if ok {
			faults = append(faults, f)
		}
	}
	switch len(faults) {
	case 0:
		return nil, fmt.Errorf("no fault (%s)", faultNames())
	case 1:
		return faults[0], nil
	default:
		return nil, errors.New("more than one fault in one rule; write one rule per fault")
	}
}

// Param decodes the written value of key into v (as a rule file would
// decode it: durations as text, ids as JSON values), for a fault whose key
// has no field in FaultSpec. It reports false when the spec lacks key.
func (fs FaultSpec) Param(key string, v any) (bool, error) {
	raw, ok := fs.Params[key]
	if !ok {
		return false, nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return true, fmt.Errorf("%s: %w", key, err)
	}
	if err := decodeStrict(b, v); err != nil {
		return true, fmt.Errorf("%s: %w", key, err)
	}
	return true, nil
}

// faultSpecFields is FaultSpec without its methods, for the JSON codec.
type faultSpecFields FaultSpec

// MarshalJSON writes the fields, then the Params of faults registered
// with keys of their own.
func (fs FaultSpec) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(faultSpecFields(fs))
	if err != nil || len(fs.Params) == 0 {
		return b, err
	}
	keys := make([]string, 0, len(fs.Params))
	for k := range fs.Params {
		if !specKeys[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var out bytes.Buffer
	out.Write(b[:len(b)-1])
	for i, k := range keys {
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(fs.Params[k])
		if err != nil {
			return nil, fmt.Errorf("fault field %s: %w", k, err)
		}
		if i > 0 || len(b) > 2 {
			out.WriteByte(',')
		}
		out.Write(kb)
		out.WriteByte(':')
		out.Write(vb)
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// UnmarshalJSON reads the fields, and keys without a field into Params.
func (fs *FaultSpec) UnmarshalJSON(b []byte) error {
	var plain faultSpecFields
	if err := json.Unmarshal(b, &plain); err != nil {
		return err
	}
	var all map[string]any
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	for k, v := range all {
		if specKeys[k] {
			continue
		}
		if plain.Params == nil {
			plain.Params = map[string]any{}
		}
		plain.Params[k] = v
	}
	*fs = FaultSpec(plain)
	return nil
}

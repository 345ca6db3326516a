package faultproxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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
// id: "3" the string. Faults: drop, delay, holdUntil (+max), duplicate,
// inject (+injectDir, before, replace), crash (+deliverFirst), pause, pass,
// and on HTTP: cut (+deliver), reset, buffer (bytes), throttle (bytes/s),
// status (+body).
type ruleFile struct {
	Rules []ruleSpec `yaml:"rules"`
}

type ruleSpec struct {
	Name  string     `yaml:"name"`
	Match matchSpec  `yaml:"match"`
	After *matchSpec `yaml:"after"`
	Nth   int        `yaml:"nth"`
	Times int        `yaml:"times"`
	Seed  uint64     `yaml:"seed"`
	Fault faultSpec  `yaml:"fault"`
}

type matchSpec struct {
	Dir           Direction    `yaml:"dir"`
	Kind          jsonrpc.Kind `yaml:"kind"`
	Method        string       `yaml:"method"`
	ID            any          `yaml:"id"`
	ProgressToken any          `yaml:"progressToken"`
	CancelledID   any          `yaml:"cancelledId"`
	RepliesTo     string       `yaml:"repliesTo"`
	HTTPMethod    string       `yaml:"httpMethod"`
	Comment       bool         `yaml:"comment"`
}

type faultSpec struct {
	Pass         bool           `yaml:"pass"`
	Drop         bool           `yaml:"drop"`
	Delay        *time.Duration `yaml:"delay"`
	HoldUntil    *matchSpec     `yaml:"holdUntil"`
	Max          time.Duration  `yaml:"max"`
	Duplicate    int            `yaml:"duplicate"`
	Inject       *string        `yaml:"inject"`
	InjectDir    Direction      `yaml:"injectDir"`
	Before       bool           `yaml:"before"`
	Replace      bool           `yaml:"replace"`
	Crash        bool           `yaml:"crash"`
	DeliverFirst bool           `yaml:"deliverFirst"`
	Pause        *time.Duration `yaml:"pause"`
	Cut          bool           `yaml:"cut"`
	Deliver      bool           `yaml:"deliver"`
	Reset        bool           `yaml:"reset"`
	Buffer       *int           `yaml:"buffer"`
	Throttle     int            `yaml:"throttle"`
	Status       int            `yaml:"status"`
	Body         string         `yaml:"body"`
}

// ParseRules reads a rule file. Every rule needs a name and exactly one
// fault; unknown fields are errors, so a typo never silently disables a
// fault.
func ParseRules(data []byte) ([]Rule, error) {
	var rf ruleFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&rf); err != nil {
		return nil, fmt.Errorf("rule file: %w", err)
	}
	out := make([]Rule, 0, len(rf.Rules))
	seen := map[string]bool{}
	for i, rs := range rf.Rules {
		r, err := rs.rule()
		if err != nil {
			return nil, fmt.Errorf("rule file: rule %d (%s): %w", i+1, rs.Name, err)
		}
		if seen[r.Name] {
			return nil, fmt.Errorf("rule file: rule name %q used twice", r.Name)
		}
		seen[r.Name] = true
		out = append(out, r)
	}
	return out, nil
}

func (rs ruleSpec) rule() (Rule, error) {
	if rs.Name == "" {
		return Rule{}, errors.New("no name")
	}
	if rs.Nth < 0 || rs.Times < 0 {
		return Rule{}, errors.New("nth and times must not be negative")
	}
	m, err := rs.Match.match()
	if err != nil {
		return Rule{}, fmt.Errorf("match: %w", err)
	}
	r := Rule{Name: rs.Name, Match: m, Nth: rs.Nth, Times: rs.Times, Seed: rs.Seed}
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

func (ms matchSpec) match() (Match, error) {
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

func (fs faultSpec) fault() (Fault, error) {
	var faults []Fault
	if fs.Pass {
		faults = append(faults, Pass{})
	}
	if fs.Drop {
		faults = append(faults, Drop{})
	}
	if fs.Delay != nil {
		if *fs.Delay < 0 {
			return nil, errors.New("delay must not be negative")
		}
		faults = append(faults, Delay{For: *fs.Delay})
	}
	if fs.HoldUntil != nil {
		m, err := fs.HoldUntil.match()
		if err != nil {
			return nil, fmt.Errorf("holdUntil: %w", err)
		}
		faults = append(faults, HoldUntil{Until: m, Max: fs.Max})
	}
	if fs.Duplicate > 0 {
		faults = append(faults, Duplicate{Count: fs.Duplicate})
	}
	if fs.Inject != nil {
		switch fs.InjectDir {
		case "", ClientToServer, ServerToClient:
		default:
			return nil, fmt.Errorf("injectDir %q: want c2s or s2c", fs.InjectDir)
		}
		faults = append(faults, Inject{Dir: fs.InjectDir, Raw: []byte(*fs.Inject), Before: fs.Before, Replace: fs.Replace})
	}
	if fs.Crash {
		faults = append(faults, Crash{DeliverFirst: fs.DeliverFirst})
	}
	if fs.Pause != nil {
		faults = append(faults, Pause{For: *fs.Pause})
	}
	if fs.Cut {
		faults = append(faults, Cut{Deliver: fs.Deliver})
	}
	if fs.Reset {
		faults = append(faults, Reset{})
	}
	if fs.Buffer != nil {
		if *fs.Buffer < 0 {
			return nil, errors.New("buffer must not be negative")
		}
		faults = append(faults, Buffer{Bytes: *fs.Buffer})
	}
	if fs.Throttle < 0 {
		return nil, errors.New("throttle must not be negative")
	}
	if fs.Throttle > 0 {
		faults = append(faults, Throttle{BytesPerSecond: fs.Throttle})
	}
	if fs.Status != 0 {
		if fs.Status < 100 || fs.Status > 599 {
			return nil, fmt.Errorf("status %d is not an HTTP status", fs.Status)
		}
		faults = append(faults, Status{Code: fs.Status, Body: []byte(fs.Body)})
	}
	switch len(faults) {
	case 0:
		return nil, errors.New("no fault (drop, delay, holdUntil, duplicate, inject, crash, pause, cut, reset, buffer, throttle, status or pass)")
	case 1:
		return faults[0], nil
	default:
		return nil, errors.New("more than one fault in one rule; write one rule per fault")
	}
}

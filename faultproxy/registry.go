package faultproxy

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// Every fault registers itself in the file that defines it, as toxiproxy's
// toxics do: the file holds the fault's type, its Apply, and an init that
// calls RegisterFault with the fault's name, the rule-file keys it reads,
// its capabilities and its parser. Nothing else lists faults: the rule-file
// parser, the control API and the proxy command's checks ask the registry.

// Caps are capabilities: what a fault needs or uses of the link it runs
// on, and what a link offers.
type Caps uint8

const (
	// CapProcess: the server's process group can be signalled (the stdio
	// link; an HTTP or WebSocket link when the harness started the server
	// and passed its Signal).
	CapProcess Caps = 1 << iota
	// CapStream: a message belongs to an HTTP exchange whose response
	// stream the fault can cut, reset, buffer, throttle or answer itself
	// (StreamControl; Streamable HTTP only).
	CapStream
)

// capWords names each capability, and says what a link without it lacks.
var capWords = []struct {
	c          Caps
	name, need string
}{
	{CapProcess, "process", "a server process (stdio mode)"},
	{CapStream, "stream", "an HTTP response stream"},
}

// words lists, for each capability in c, its name or its need.
func (c Caps) words(need bool) []string {
	var out []string
	for _, w := range capWords {
		switch {
		case c&w.c == 0:
		case need:
			out = append(out, w.need)
		default:
			out = append(out, w.name)
		}
	}
	return out
}

// String names the capabilities: "process", "stream", "process|stream".
func (c Caps) String() string {
	if c == 0 {
		return "none"
	}
	return strings.Join(c.words(false), "|")
}

// FaultType is the registration of one fault.
type FaultType struct {
	// Name names the fault: in a rule file it is the key of the fault
	// object that selects it ({drop: true}, {holdUntil: {...}}).
	Name string
	// Fields are the other keys of the fault object the fault reads
	// (holdUntil reads max; inject reads injectDir, before, replace).
	Fields []string
	// Needs are the capabilities the fault cannot do without: CheckRule
	// refuses it on a link that does not offer them.
	Needs Caps
	// Uses are capabilities the fault acts through where the link offers
	// them; elsewhere it falls back as its doc says, and the transcript
	// records the fallback.
	Uses Caps
	// Of is a value of the fault's Go type (Drop{}, (*Barrier)(nil)), so
	// that FaultTypeOf finds the registration of an installed Fault.
	Of Fault
	// Parse builds the fault from a written fault object. ok is false when
	// the object does not name this fault. A key that is a field of
	// FaultSpec is read from that field; any other key the fault
	// registered is read with FaultSpec.Param. Parse is nil for a fault
	// with no written form (a Barrier is shared between links in Go).
	Parse func(fs FaultSpec) (f Fault, ok bool, err error)
}

// keys returns the rule-file keys of the fault: its name, then its fields.
func (ft FaultType) keys() []string {
	if ft.Parse == nil {
		return nil
	}
	return append([]string{ft.Name}, ft.Fields...)
}

var registry struct {
	sync.RWMutex
	byName map[string]FaultType
	byType map[reflect.Type]string
	keys   map[string]bool // every rule-file key of a fault object
}

// specKeys are the keys of the fault object that have a field in
// FaultSpec, by the field's yaml name.
var specKeys = func() map[string]bool {
	keys := map[string]bool{}
	t := reflect.TypeFor[FaultSpec]()
	for i := range t.NumField() {
		name, opts, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name != "" && !strings.Contains(opts, "inline") {
			keys[name] = true
		}
	}
	return keys
}()

// RegisterFault registers a fault. It is called from the init of the
// fault's own file and panics on a registration that would make rule files
// ambiguous: an empty or taken name, a Go type registered twice, or a name
// that another fault reads as a field.
func RegisterFault(ft FaultType) {
	registry.Lock()
	defer registry.Unlock()
	if registry.byName == nil {
		registry.byName = map[string]FaultType{}
		registry.byType = map[reflect.Type]string{}
		registry.keys = map[string]bool{}
	}
	switch {
	case ft.Name == "":
		panic("faultproxy: RegisterFault with no name")
	case ft.Of == nil:
		panic(fmt.Sprintf("faultproxy: fault %s registered without a value of its type", ft.Name))
	}
	if _, ok := registry.byName[ft.Name]; ok {
		panic(fmt.Sprintf("faultproxy: fault %s registered twice", ft.Name))
	}
	typ := reflect.TypeOf(ft.Of)
	if other, ok := registry.byType[typ]; ok {
		panic(fmt.Sprintf("faultproxy: type %v registered as %s and %s", typ, other, ft.Name))
	}
	for _, other := range registry.byName {
		if slices.Contains(other.Fields, ft.Name) {
			panic(fmt.Sprintf("faultproxy: fault %s is named by a key fault %s reads", ft.Name, other.Name))
		}
		if slices.Contains(ft.Fields, other.Name) {
			panic(fmt.Sprintf("faultproxy: fault %s reads the key that names fault %s", ft.Name, other.Name))
		}
	}
	ft.Fields = slices.Clone(ft.Fields)
	registry.byName[ft.Name] = ft
	registry.byType[typ] = ft.Name
	for _, k := range ft.keys() {
		registry.keys[k] = true
	}
}

// FaultTypes returns every registered fault, by name.
func FaultTypes() []FaultType {
	registry.RLock()
	defer registry.RUnlock()
	out := make([]FaultType, 0, len(registry.byName))
	for _, ft := range registry.byName {
		out = append(out, ft)
	}
	slices.SortFunc(out, func(a, b FaultType) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// LookupFault returns the fault registered under name.
func LookupFault(name string) (FaultType, bool) {
	registry.RLock()
	defer registry.RUnlock()
	ft, ok := registry.byName[name]
	return ft, ok
}

// FaultTypeOf returns the registration of f's Go type (or, for a pointer
// to a registered value type, of that type); false for a fault no file
// registered (a test's own).
func FaultTypeOf(f Fault) (FaultType, bool) {
	if f == nil {
		return FaultType{}, false
	}
	registry.RLock()
	defer registry.RUnlock()
	t := reflect.TypeOf(f)
	name, ok := registry.byType[t]
	if !ok && t.Kind() == reflect.Pointer {
		name, ok = registry.byType[t.Elem()]
	}
	if !ok {
		return FaultType{}, false
	}
	return registry.byName[name], true
}

// CheckRule refuses a rule whose fault needs a capability the link does
// not offer (crash and pause on a link with no server process). A fault
// that only uses a capability is never refused: it falls back.
func CheckRule(r Rule, offers Caps) error {
	ft, ok := FaultTypeOf(r.Fault)
	if !ok {
		return nil
	}
	if missing := ft.Needs &^ offers; missing != 0 {
		return fmt.Errorf("rule %s: %s needs %s", r.Name, ft.Name, strings.Join(missing.words(true), " and "))
	}
	return nil
}

// faultNames lists the names of the faults a rule file can write, for
// error messages: "buffer, crash, … or throttle".
func faultNames() string {
	var names []string
	for _, ft := range FaultTypes() {
		if ft.Parse != nil {
			names = append(names, ft.Name)
		}
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// faultKeys lists every key a fault object may have, sorted.
func faultKeys() []string {
	registry.RLock()
	defer registry.RUnlock()
	keys := make([]string, 0, len(registry.keys))
	for k := range registry.keys {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// isFaultKey reports whether a registered fault reads key.
func isFaultKey(key string) bool {
	registry.RLock()
	defer registry.RUnlock()
	return registry.keys[key]
}

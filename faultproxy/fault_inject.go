package faultproxy

import (
	"context"
	"fmt"
)

// Inject sends a synthetic message when the matched one passes: before it,
// after it, or instead of it. Raw may be any bytes, malformed ones included.
type Inject struct {
	// Dir is where the synthetic message goes; empty means the matched
	// message's direction.
	Dir Direction
	// Raw is the synthetic message, without a newline.
	Raw []byte
	// Before injects before delivering the matched message; Replace drops
	// the matched message instead. Default: after.
	Before, Replace bool
}

var _ Fault = Inject{}

// Apply injects i.Raw around msg.
func (i Inject) Apply(_ context.Context, c Conduit, msg *Message) {
	dir := i.Dir
	if dir == "" {
		dir = msg.Dir
	}
	switch {
	case i.Replace:
		c.Record(msg, "inject", OutcomeReplaced, "replaced by a synthetic message")
		_ = c.Inject(dir, i.Raw)
	case i.Before:
		c.Record(msg, "inject", OutcomeDelivered, "synthetic message sent before this one")
		_ = c.Inject(dir, i.Raw)
		_ = c.Deliver(msg)
	default:
		c.Record(msg, "inject", OutcomeDelivered, "synthetic message sent after this one")
		_ = c.Deliver(msg)
		_ = c.Inject(dir, i.Raw)
	}
}

func init() {
	RegisterFault(FaultType{
		Name: "inject", Fields: []string{"injectDir", "before", "replace"}, Of: Inject{},
		Parse: func(fs FaultSpec) (Fault, bool, error) {
			if fs.Inject == nil {
				return nil, false, nil
			}
			switch fs.InjectDir {
			case "", ClientToServer, ServerToClient:
			default:
				return nil, true, fmt.Errorf("injectDir %q: want c2s or s2c", fs.InjectDir)
			}
			return Inject{Dir: fs.InjectDir, Raw: []byte(*fs.Inject), Before: fs.Before, Replace: fs.Replace}, true, nil
		},
	})
}

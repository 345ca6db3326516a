package faultproxy

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Delay holds the message for a duration. Later messages in the same
// direction overtake it: that is the fault.
type Delay struct {
	// For is how long the message is held.
	For time.Duration
}

var _ Fault = Delay{}

// Apply holds msg for d.For, then delivers it.
func (d Delay) Apply(_ context.Context, c Conduit, msg *Message) {
	c.Record(msg, "delay", OutcomeHeld, fmt.Sprintf("held for %s", d.For))
	c.Go(func(ctx context.Context) {
		t := time.NewTimer(d.For)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			c.Record(msg, "delay", OutcomeDropped, "link closed while held; message not delivered")
			return
		}
		c.Record(msg, "release", OutcomeReleased, "delay elapsed")
		_ = c.Deliver(msg)
	})
}

func init() {
	RegisterFault(FaultType{
		Name: "delay", Of: Delay{},
		Parse: func(fs FaultSpec) (Fault, bool, error) {
			if fs.Delay == nil {
				return nil, false, nil
			}
			if *fs.Delay < 0 {
				return nil, true, errors.New("delay must not be negative")
			}
			return Delay{For: time.Duration(*fs.Delay)}, true, nil
		},
	})
}

package faultproxy

import (
	"context"
	"fmt"
	"time"
)

// HoldUntil holds the message until another message satisfying Until has
// been delivered (or had been already), then delivers it. Max bounds the
// hold so that a trigger that never comes cannot hang a run; on expiry the
// message is delivered and the transcript says so.
type HoldUntil struct {
	// Until is the message whose passage releases the held one.
	Until Match
	// Max bounds the hold; zero means 10 s.
	Max time.Duration
}

var _ Fault = HoldUntil{}

// Apply holds msg until h.Until passed.
func (h HoldUntil) Apply(_ context.Context, c Conduit, msg *Message) {
	max := h.Max
	if max <= 0 {
		max = 10 * time.Second
	}
	c.Record(msg, "hold", OutcomeHeld, "held until a matching message passes")
	c.Go(func(ctx context.Context) {
		wctx, cancel := context.WithTimeout(ctx, max)
		defer cancel()
		err := c.WaitPassed(wctx, h.Until)
		switch {
		case err == nil:
			c.Record(msg, "release", OutcomeReleased, "trigger message passed")
		case ctx.Err() != nil:
			c.Record(msg, "hold", OutcomeDropped, "link closed while held; message not delivered")
			return
		default:
			c.Record(msg, "release", OutcomeReleased, fmt.Sprintf("trigger never passed within %s; released anyway", max))
		}
		_ = c.Deliver(msg)
	})
}

func init() {
	RegisterFault(FaultType{
		Name: "holdUntil", Fields: []string{"max"}, Of: HoldUntil{},
		Parse: func(fs FaultSpec) (Fault, bool, error) {
			if fs.HoldUntil == nil {
				return nil, false, nil
			}
			m, err := fs.HoldUntil.match()
			if err != nil {
				return nil, true, fmt.Errorf("holdUntil: %w", err)
			}
			return HoldUntil{Until: m, Max: time.Duration(fs.Max)}, true, nil
		},
	})
}

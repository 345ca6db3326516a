package faultproxy

import (
	"context"
	"errors"
	"fmt"
)

// Throttle limits the response stream of the matched message to a number
// of bytes per second toward the client (a slow consumer).
type Throttle struct {
	BytesPerSecond int
}

var _ Fault = Throttle{}

// Apply throttles msg's stream and delivers msg.
func (t Throttle) Apply(_ context.Context, c Conduit, msg *Message) {
	if st := c.Stream(); st != nil && t.BytesPerSecond > 0 {
		st.Throttle(t.BytesPerSecond)
		c.Record(msg, "throttle", OutcomeDelivered, fmt.Sprintf("stream limited to %d bytes/s", t.BytesPerSecond))
	}
	_ = c.Deliver(msg)
}

func init() {
	RegisterFault(FaultType{
		Name: "throttle", Uses: CapStream, Of: Throttle{},
		Parse: func(fs FaultSpec) (Fault, bool, error) {
			if fs.Throttle < 0 {
				return nil, true, errors.New("throttle must not be negative")
			}
			return Throttle{BytesPerSecond: fs.Throttle}, fs.Throttle > 0, nil
		},
	})
}

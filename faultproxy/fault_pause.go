package faultproxy

import (
	"context"
	"fmt"
	"time"
)

// Pause SIGSTOPs the server's process group after delivering the message,
// and SIGCONTs it after For (a hung server that comes back).
type Pause struct {
	// For is how long the server stays stopped; zero means 1 s.
	For time.Duration
}

var _ Fault = Pause{}

// Apply delivers msg, stops the server, and resumes it later.
func (p Pause) Apply(_ context.Context, c Conduit, msg *Message) {
	d := p.For
	if d <= 0 {
		d = time.Second
	}
	_ = c.Deliver(msg)
	if err := c.Signal(sigStop); err != nil {
		c.Record(msg, "pause", OutcomeDelivered, "signal failed: "+err.Error())
		return
	}
	c.Record(msg, "pause", OutcomeDelivered, fmt.Sprintf("SIGSTOP to the server for %s", d))
	c.Go(func(ctx context.Context) {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		_ = c.Signal(sigCont)
		c.Record(msg, "resume", OutcomeDelivered, "SIGCONT to the server")
	})
}

func init() {
	RegisterFault(FaultType{
		Name: "pause", Needs: CapProcess, Of: Pause{},
		Parse: func(fs FaultSpec) (Fault, bool, error) {
			if fs.Pause == nil {
				return nil, false, nil
			}
			return Pause{For: time.Duration(*fs.Pause)}, true, nil
		},
	})
}

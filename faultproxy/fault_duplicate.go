package faultproxy

import (
	"context"
	"fmt"
)

// Duplicate delivers the message Count+1 times in a row.
type Duplicate struct {
	// Count is the number of extra copies; zero means one.
	Count int
}

var _ Fault = Duplicate{}

// Apply delivers msg and its copies.
func (d Duplicate) Apply(_ context.Context, c Conduit, msg *Message) {
	n := d.Count
	if n <= 0 {
		n = 1
	}
	c.Record(msg, "duplicate", OutcomeDuplicated, fmt.Sprintf("delivered %d extra time(s)", n))
	for i := 0; i <= n; i++ {
		if c.Deliver(msg.clone()) != nil {
			return
		}
	}
}

func init() {
	RegisterFault(FaultType{
		Name: "duplicate", Of: Duplicate{},
		Parse: func(fs FaultSpec) (Fault, bool, error) {
			return Duplicate{Count: fs.Duplicate}, fs.Duplicate > 0, nil
		},
	})
}

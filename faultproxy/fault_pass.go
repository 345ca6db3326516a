package faultproxy

import "context"

// Pass delivers the message unchanged. It is useful to count occurrences or
// to arm other rules without acting.
type Pass struct{}

var _ Fault = Pass{}

// Apply delivers msg.
func (Pass) Apply(_ context.Context, c Conduit, msg *Message) { _ = c.Deliver(msg) }

func init() {
	RegisterFault(FaultType{
		Name: "pass", Of: Pass{},
		Parse: func(fs FaultSpec) (Fault, bool, error) { return Pass{}, fs.Pass, nil },
	})
}

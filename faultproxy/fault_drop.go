package faultproxy

import "context"

// Drop swallows the message; the transcript records it.
type Drop struct{}

var _ Fault = Drop{}

// Apply records the drop and does not deliver msg.
func (Drop) Apply(_ context.Context, c Conduit, msg *Message) {
	c.Record(msg, "drop", OutcomeDropped, "message swallowed")
}

func init() {
	RegisterFault(FaultType{
		Name: "drop", Of: Drop{},
		Parse: func(fs FaultSpec) (Fault, bool, error) { return Drop{}, fs.Drop, nil },
	})
}

package faultproxy

import "context"

// Reset closes the client's connection abruptly at the matched message (a
// network failure rather than a clean end of stream).
type Reset struct{}

var _ Fault = Reset{}

// Apply resets the connection of msg's exchange.
func (Reset) Apply(_ context.Context, c Conduit, msg *Message) {
	st := streamOf(c, msg, "reset", OutcomeDropped, "no connection of its own on this transport; message dropped instead")
	if st == nil {
		return
	}
	c.Record(msg, "reset", OutcomeReset, "connection closed abruptly")
	st.Reset("rule " + c.Rule())
}

func init() {
	RegisterFault(FaultType{
		Name: "reset", Uses: CapStream, Of: Reset{},
		Parse: func(fs FaultSpec) (Fault, bool, error) { return Reset{}, fs.Reset, nil },
	})
}

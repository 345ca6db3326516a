package faultproxy

import "context"

// Cut closes the HTTP response stream at the matched message: the message
// is not delivered (Deliver true hands it over first), the client sees its
// stream end, and the upstream request is cancelled (the server sees the
// disconnect). On stdio, where there is no per-request stream, Cut drops
// the message and says so.
type Cut struct {
	// Deliver hands the matched message over before cutting.
	Deliver bool
}

var _ Fault = Cut{}

// Apply cuts the stream of msg.
func (cf Cut) Apply(_ context.Context, c Conduit, msg *Message) {
	st := streamOf(c, msg, "cut", OutcomeDropped, "no response stream on this transport; message dropped instead")
	if st == nil {
		return
	}
	if cf.Deliver {
		_ = c.Deliver(msg)
		c.Record(msg, "cut", OutcomeDelivered, "delivered, then the stream was closed")
	} else {
		c.Record(msg, "cut", OutcomeCut, "stream closed before this message")
	}
	st.Cut("rule " + c.Rule())
}

func init() {
	RegisterFault(FaultType{
		Name: "cut", Fields: []string{"deliver"}, Uses: CapStream, Of: Cut{},
		Parse: func(fs FaultSpec) (Fault, bool, error) { return Cut{Deliver: fs.Deliver}, fs.Cut, nil },
	})
}

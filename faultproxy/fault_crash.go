package faultproxy

import "context"

// Crash SIGKILLs the server's process group when the message passes. By
// default the message is lost with the process (the server committed, the
// response never arrives); DeliverFirst hands it over before the kill.
type Crash struct {
	// DeliverFirst delivers the matched message before killing.
	DeliverFirst bool
}

var _ Fault = Crash{}

// Apply kills the server.
func (cr Crash) Apply(_ context.Context, c Conduit, msg *Message) {
	outcome := OutcomeDropped
	if cr.DeliverFirst {
		_ = c.Deliver(msg)
		outcome = OutcomeDelivered
		c.Record(msg, "crash", outcome, "delivered, then SIGKILL to the server process group")
	} else {
		c.Record(msg, "crash", outcome, "SIGKILL to the server process group; message lost with it")
	}
	if err := c.Signal(sigKill); err != nil {
		c.Record(msg, "crash", outcome, "signal failed: "+err.Error())
	}
}

func init() {
	RegisterFault(FaultType{
		Name: "crash", Fields: []string{"deliverFirst"}, Needs: CapProcess, Of: Crash{},
		Parse: func(fs FaultSpec) (Fault, bool, error) {
			return Crash{DeliverFirst: fs.DeliverFirst}, fs.Crash, nil
		},
	})
}

package faultproxy

import (
	"context"
	"fmt"
)

// Status answers the client with an HTTP status (and optional body) instead
// of the server's response: 404 for a session, 202 with no body, 503 ...
// Matched on a client message it answers without forwarding; matched on a
// JSON response it replaces it. On an event stream whose head was already
// sent it cuts the stream instead, and says so.
type Status struct {
	Code int
	Body []byte
}

var _ Fault = Status{}

// Apply replaces the response of msg's exchange.
func (s Status) Apply(_ context.Context, c Conduit, msg *Message) {
	st := streamOf(c, msg, "status", OutcomeDropped, "no HTTP response on this transport; message dropped instead")
	if st == nil {
		return
	}
	if st.ReplaceStatus(s.Code, s.Body) {
		c.Record(msg, "status", OutcomeAnswered, fmt.Sprintf("answered %d by the proxy", s.Code))
		return
	}
	c.Record(msg, "status", OutcomeCut, fmt.Sprintf("headers already sent; stream cut instead of answering %d", s.Code))
	st.Cut("rule " + c.Rule())
}

func init() {
	RegisterFault(FaultType{
		Name: "status", Fields: []string{"body"}, Uses: CapStream, Of: Status{},
		Parse: func(fs FaultSpec) (Fault, bool, error) {
			if fs.Status == 0 {
				return nil, false, nil
			}
			if fs.Status < 100 || fs.Status > 599 {
				return nil, true, fmt.Errorf("status %d is not an HTTP status", fs.Status)
			}
			return Status{Code: fs.Status, Body: []byte(fs.Body)}, true, nil
		},
	})
}

package faultproxy

import (
	"context"
	"errors"
	"fmt"
)

// Buffer makes the response stream of the matched message accumulate its
// bytes until Bytes have gathered or the stream ends, as a buffering reverse
// proxy does. The matched message is delivered into the buffer.
type Buffer struct {
	// Bytes is the threshold; zero means hold everything until the end.
	Bytes int
}

var _ Fault = Buffer{}

// Apply buffers msg's stream.
func (b Buffer) Apply(_ context.Context, c Conduit, msg *Message) {
	st := streamOf(c, msg, "buffer", OutcomeDelivered, "no response stream on this transport; delivered as is")
	if st == nil {
		_ = c.Deliver(msg)
		return
	}
	n := b.Bytes
	if n <= 0 {
		n = int(^uint(0) >> 1)
	}
	st.Buffer(n)
	c.Record(msg, "buffer", OutcomeDelivered, fmt.Sprintf("stream buffered until %d bytes or its end", b.Bytes))
	_ = c.Deliver(msg)
}

func init() {
	RegisterFault(FaultType{
		Name: "buffer", Uses: CapStream, Of: Buffer{},
		Parse: func(fs FaultSpec) (Fault, bool, error) {
			if fs.Buffer == nil {
				return nil, false, nil
			}
			if *fs.Buffer < 0 {
				return nil, true, errors.New("buffer must not be negative")
			}
			return Buffer{Bytes: *fs.Buffer}, true, nil
		},
	})
}

package faultproxy

import (
	"fmt"
	"testing"
)

// BenchmarkTranscriptAdd records message entries (as the relay does, one
// per message) into an unbounded transcript (a check's) and a bounded one
// (the proxy command's, SetLimit 4096).
func BenchmarkTranscriptAdd(b *testing.B) {
	raw := []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`)
	for _, limit := range []int{0, 4096} {
		b.Run(fmt.Sprintf("limit=%d", limit), func(b *testing.B) {
			tr := NewTranscript(nil)
			tr.SetLimit(limit)
			b.ReportAllocs()
			i := int64(0)
			for b.Loop() {
				i++
				tr.Add(Entry{At: 1, Kind: EntryMessage, Dir: ServerToClient, Seq: i, Raw: raw, Stream: "GET#1"})
			}
		})
	}
}

package sse

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
)

// eventStream returns n events of about size bytes each.
func eventStream(n, size int, eol string) []byte {
	var b bytes.Buffer
	for i := range n {
		head := fmt.Sprintf("id: %d%sevent: message%sdata: ", i, eol, eol)
		pad := max(size-len(head)-len(eol)*2-len(`{"jsonrpc":"2.0","params":{"p":""}}`), 0)
		fmt.Fprintf(&b, `%s{"jsonrpc":"2.0","params":{"p":"%s"}}%s%s`, head, strings.Repeat("x", pad), eol, eol)
	}
	return b.Bytes()
}

// BenchmarkReader measures throughput on 200-byte events.
func BenchmarkReader(b *testing.B) {
	for _, eol := range []string{"\n", "\r\n", "\r"} {
		in := eventStream(10_000, 200, eol)
		b.Run(fmt.Sprintf("200B/eol=%q", eol), func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				rd := NewReader(bytes.NewReader(in), Options{})
				n := 0
				for {
					_, err := rd.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				if n != 10_000 {
					b.Fatal(n)
				}
			}
		})
	}
	big := []byte("data: " + strings.Repeat("y", 1<<20) + "\n\n")
	b.Run("1MiB", func(b *testing.B) {
		b.SetBytes(int64(len(big)))
		for b.Loop() {
			rd := NewReader(bytes.NewReader(big), Options{})
			if _, err := rd.Next(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkEncode(b *testing.B) {
	ev := Event{ID: "123", Type: "message", Data: strings.Repeat("d", 160), HasData: true}
	b.SetBytes(int64(len(Encode(ev))))
	b.ReportAllocs()
	for b.Loop() {
		Encode(ev)
	}
}

package faultproxy

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"testing"
)

// Each benchmark has a direct twin: the same echo child over plain OS pipes,
// measured in the same run, so the proxy's cost is read as a ratio.
var benchLine = []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` +
	"0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789" +
	`"},"_meta":{"progressToken":"bench"}}}` + "\n")

// directEcho starts the echo child with plain pipes.
func directEcho(b *testing.B) (io.WriteCloser, io.Reader, func()) {
	argv, env := helperCommand("echo")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	return in, out, func() { _ = in.Close(); _ = cmd.Wait() }
}

// proxiedEcho starts the echo child behind a link with no rule.
func proxiedEcho(b *testing.B) (io.WriteCloser, io.Reader, func()) {
	argv, env := helperCommand("echo")
	s, err := StartStdio(context.Background(), StdioOptions{Command: argv, Env: env})
	if err != nil {
		b.Fatal(err)
	}
	c := s.Client()
	return nopCloser{c}, c, func() { _ = s.Close() }
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

func benchRoundTrip(b *testing.B, start func(*testing.B) (io.WriteCloser, io.Reader, func())) {
	w, r, stop := start(b)
	defer stop()
	br := bufio.NewReader(r)
	b.SetBytes(int64(len(benchLine)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := w.Write(benchLine); err != nil {
			b.Fatal(err)
		}
		if _, err := br.ReadSlice('\n'); err != nil {
			b.Fatal(err)
		}
	}
}

func benchThroughput(b *testing.B, start func(*testing.B) (io.WriteCloser, io.Reader, func())) {
	w, r, stop := start(b)
	defer stop()
	br := bufio.NewReader(r)
	b.SetBytes(int64(len(benchLine)))
	b.ResetTimer()
	errc := make(chan error, 1)
	go func() {
		for i := 0; i < b.N; i++ {
			if _, err := w.Write(benchLine); err != nil {
				errc <- err
				return
			}
		}
		errc <- nil
	}()
	for i := 0; i < b.N; i++ {
		if _, err := br.ReadSlice('\n'); err != nil {
			b.Fatal(err)
		}
	}
	if err := <-errc; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkStdioRoundTrip measures one request line out and its echo back,
// sequentially: the latency a proxy adds per round trip.
func BenchmarkStdioRoundTrip(b *testing.B) {
	b.Run("direct", func(b *testing.B) { benchRoundTrip(b, directEcho) })
	b.Run("proxy", func(b *testing.B) { benchRoundTrip(b, proxiedEcho) })
}

// BenchmarkStdioThroughput measures pipelined messages per second.
func BenchmarkStdioThroughput(b *testing.B) {
	b.Run("direct", func(b *testing.B) { benchThroughput(b, directEcho) })
	b.Run("proxy", func(b *testing.B) { benchThroughput(b, proxiedEcho) })
}

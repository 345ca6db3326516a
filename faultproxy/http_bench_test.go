package faultproxy

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/benchwire"
)

// The HTTP benchmarks measure the same exchanges direct to an httptest
// upstream and through a proxy with no rule, in one run (b.Run("direct"),
// b.Run("proxy")), so the proxy's cost is read as a ratio. Run with
//
//	go test -run '^$' -bench HTTP -benchtime 2s ./faultproxy/

// A tools/call of about 300 bytes and its result of about 300 bytes.
var (
	benchCall = []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"open_ticket","arguments":{"title":"Cannot sign in","body":"` +
		strings.Repeat("lorem ipsum ", 12) + `","operation_key":"5f0c2a8e-7d1b-4f7e-9a52-0c1d2e3f4a5b"},"_meta":{"progressToken":"bench-42"}}}`)
	benchResult = []byte(`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"ticket T-1042 opened: ` +
		strings.Repeat("lorem ipsum ", 14) + `"}],"structuredContent":{"ticket":"T-1042","executions":1},"isError":false}}`)
	benchProgress = func(n int) []byte {
		return []byte(fmt.Sprintf("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"bench-42\",\"progress\":%d,\"total\":2}}\n\n", n))
	}
	// benchEvent is one 200-byte event of the streaming benchmark.
	benchEvent = benchwire.Event
)

const benchStreamEvents = 10_000

// benchUpstream serves /json (a JSON answer), /sse3 (two progress events
// and the answer as an event stream) and /stream (benchStreamEvents events,
// one write and flush each, as a server emits them).
func benchUpstream(b *testing.B) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		switch r.URL.Path {
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", fmt.Sprint(len(benchResult)))
			_, _ = w.Write(benchResult)
		case "/sse3":
			sseHead(w)
			sendEvent(w, benchProgress(1))
			sendEvent(w, benchProgress(2))
			sendEvent(w, []byte("data: "+string(benchResult)+"\n\n"))
		case "/stream":
			sseHead(w)
			benchwire.WriteEvents(w, benchEvent, benchStreamEvents)
		default:
			http.NotFound(w, r)
		}
	}))
	b.Cleanup(srv.Close)
	return srv
}

// benchTarget returns the base URL to call: the upstream itself, or a
// proxy with no rule in front of it.
func benchTarget(b *testing.B, up *httptest.Server, viaProxy bool) string {
	if !viaProxy {
		return up.URL
	}
	p, err := StartHTTP(context.Background(), HTTPOptions{Upstream: up.URL})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.Close() })
	return p.URL()
}

// readStream GETs url and reads the whole body, failing unless it is want
// bytes long.
func readStream(b *testing.B, c *http.Client, url string, want int64) {
	resp, err := c.Get(url)
	if err != nil {
		b.Fatal(err)
	}
	n, err := benchwire.Drain(resp)
	if err != nil || n != want {
		b.Fatalf("read %d of %d bytes: %v", n, want, err)
	}
}

func benchClient(b *testing.B) *http.Client {
	tr := &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 64}
	b.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// cpuTime is the process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// roundTrip posts benchCall and reads the whole answer.
func roundTrip(c *http.Client, url string, want int) error {
	req, err := benchwire.NewPost(url, benchCall)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	n, err := benchwire.Drain(resp)
	if err != nil {
		return err
	}
	if n != int64(want) {
		return fmt.Errorf("answer of %d bytes, want %d", n, want)
	}
	return nil
}

func benchRoundTripHTTP(b *testing.B, path string, want int, viaProxy bool) {
	up := benchUpstream(b)
	url := benchTarget(b, up, viaProxy) + path
	c := benchClient(b)
	if err := roundTrip(c, url, want); err != nil { // warm the connections
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	b.SetBytes(int64(len(benchCall) + want))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if err := roundTrip(c, url, want); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, "p99-µs")
}

// BenchmarkHTTPRoundTrip is a tools/call with a JSON answer, sequential:
// the latency the proxy adds per round trip.
func BenchmarkHTTPRoundTrip(b *testing.B) {
	b.Run("direct", func(b *testing.B) { benchRoundTripHTTP(b, "/json", len(benchResult), false) })
	b.Run("proxy", func(b *testing.B) { benchRoundTripHTTP(b, "/json", len(benchResult), true) })
}

// BenchmarkHTTPRoundTripSSE is the same call answered with an event stream
// of two progress notifications and the result.
func BenchmarkHTTPRoundTripSSE(b *testing.B) {
	want := 2*len(benchProgress(1)) + len("data: ") + len(benchResult) + 2
	b.Run("direct", func(b *testing.B) { benchRoundTripHTTP(b, "/sse3", want, false) })
	b.Run("proxy", func(b *testing.B) { benchRoundTripHTTP(b, "/sse3", want, true) })
}

// BenchmarkHTTPRoundTripParallel is the JSON round trip from 16 concurrent
// callers on this machine's cores: throughput rather than latency.
func BenchmarkHTTPRoundTripParallel(b *testing.B) {
	run := func(b *testing.B, viaProxy bool) {
		up := benchUpstream(b)
		url := benchTarget(b, up, viaProxy) + "/json"
		c := benchClient(b)
		b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0)))
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := roundTrip(c, url, len(benchResult)); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
	}
	b.Run("direct", func(b *testing.B) { run(b, false) })
	b.Run("proxy", func(b *testing.B) { run(b, true) })
}

// BenchmarkHTTPSSEThroughput streams benchStreamEvents 200-byte events per
// iteration; events/s is the figure to compare, and cpu-µs/event the
// whole process's CPU per event (upstream, client and, in "proxy", the
// proxy: the difference between the two is the proxy's own cost).
func BenchmarkHTTPSSEThroughput(b *testing.B) {
	run := func(b *testing.B, viaProxy bool) {
		up := benchUpstream(b)
		url := benchTarget(b, up, viaProxy) + "/stream"
		c := benchClient(b)
		want := int64(benchStreamEvents * len(benchEvent))
		b.SetBytes(want)
		b.ResetTimer()
		cpu0 := cpuTime()
		for i := 0; i < b.N; i++ {
			readStream(b, c, url, want)
		}
		cpu := cpuTime() - cpu0
		b.StopTimer()
		events := float64(b.N) * benchStreamEvents
		b.ReportMetric(events/b.Elapsed().Seconds(), "events/s")
		b.ReportMetric(float64(cpu.Nanoseconds())/1e3/events, "cpu-µs/event")
	}
	b.Run("direct", func(b *testing.B) { run(b, false) })
	b.Run("proxy", func(b *testing.B) { run(b, true) })
}

package faultproxy

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// floodResult is what one flood through a throttled proxy measured.
type floodResult struct {
	received  int64         // bytes the client read
	final     bool          // the final response arrived, last
	elapsed   time.Duration // first byte sent to last byte read
	peakHeap  uint64        // highest HeapInuse sampled during the flood
	baseHeap  uint64        // HeapInuse before the flood
	peakRSSkB int64         // the process's VmHWM at the end (whole test binary)
}

// floodThroughProxy pushes total bytes of progress events (eventSize each)
// and then the final response from an upstream that writes as fast as its
// socket takes them, through a proxy that throttles the stream toward the
// client to bps, to a client that reads and discards. The proxy keeps its
// in-memory transcript to the last 4096 entries, as `mcp-conform proxy`
// does. The heap is sampled every 10 ms.
func floodThroughProxy(tb testing.TB, total int64, eventSize, bps int) floodResult {
	tb.Helper()
	final := []byte("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}\n\n")
	events := total / int64(eventSize)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		sseHead(w)
		bw := bufio.NewWriterSize(w, 64<<10)
		for k := int64(1); k <= events; k++ {
			head := `data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"flood","progress":` + strconv.FormatInt(k, 10) + `,"message":"`
			tail := "\"}}\n\n"
			if _, err := bw.WriteString(head + strings.Repeat("x", max(0, eventSize-len(head)-len(tail))) + tail); err != nil {
				return
			}
		}
		_, _ = bw.Write(final)
		_ = bw.Flush()
	}))
	defer up.Close()
	rs := NewRules()
	if err := rs.Set(Rule{Name: "slow-consumer", Match: Match{Dir: ServerToClient}, Nth: 1, Fault: Throttle{BytesPerSecond: bps}}); err != nil {
		tb.Fatal(err)
	}
	p, err := StartHTTP(context.Background(), HTTPOptions{Upstream: up.URL + "/mcp", Rules: rs})
	if err != nil {
		tb.Fatal(err)
	}
	defer p.Close()
	p.Transcript().SetLimit(4096)

	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	res := floodResult{baseHeap: ms.HeapInuse, peakHeap: ms.HeapInuse}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				mu.Lock()
				res.peakHeap = max(res.peakHeap, ms.HeapInuse)
				mu.Unlock()
			}
		}
	}()
	start := time.Now()
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	resp := post(tb, &http.Client{Transport: tr}, p.URL(), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flood","_meta":{"progressToken":"flood"}}}`)
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	var last []byte
	for {
		line, err := br.ReadSlice('\n')
		res.received += int64(len(line))
		if bytes.HasPrefix(line, []byte("data: ")) {
			last = append(last[:0], line...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			break
		}
	}
	_ = resp.Body.Close()
	res.elapsed = time.Since(start)
	close(stop)
	wg.Wait()
	res.final = bytes.Equal(append(last, '\n'), final)
	res.peakRSSkB = vmHWM()
	return res
}

// vmHWM is the process's peak resident set in kB (Linux), or -1.
func vmHWM() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return -1
}

func (r floodResult) String() string {
	return fmt.Sprintf("%d MiB in %s (%.1f MiB/s), final=%v, heap in use %.1f MiB before, peak %.1f MiB (+%.1f MiB), process peak RSS %d MiB",
		r.received>>20, r.elapsed.Round(time.Millisecond), float64(r.received)/(1<<20)/r.elapsed.Seconds(), r.final,
		float64(r.baseHeap)/(1<<20), float64(r.peakHeap)/(1<<20), float64(r.peakHeap-r.baseHeap)/(1<<20), r.peakRSSkB>>10)
}

// TestProxyFloodMemoryBounded: floods of 16 MiB and 64 MiB through a proxy
// throttled to 96 MiB/s toward the client. The relay is unbuffered — it
// reads the next event from the server only after the previous one went
// out — so backpressure reaches the server; what the proxy keeps is its
// bounded histories (the last 4096..8192 transcript entries and delivered
// messages, about 24 MiB of 1 KiB events). The heap must not grow with the
// flood: four times the flood, the same peak (within 16 MiB), below 96 MiB;
// and the final response arrives last both times.
func TestProxyFloodMemoryBounded(t *testing.T) {
	small := floodThroughProxy(t, 16<<20, 1024, 96<<20)
	t.Log(small)
	large := floodThroughProxy(t, 64<<20, 1024, 96<<20)
	t.Log(large)
	for _, r := range []floodResult{small, large} {
		if !r.final {
			t.Fatalf("the final response did not arrive last: %v", r)
		}
	}
	if large.received < 64<<20 {
		t.Fatalf("received %d bytes, want the whole flood", large.received)
	}
	gs, gl := int64(small.peakHeap)-int64(small.baseHeap), int64(large.peakHeap)-int64(large.baseHeap)
	if gl > gs+16<<20 || gl > 96<<20 {
		t.Fatalf("heap growth %d MiB for 16 MiB, %d MiB for 64 MiB: the proxy's memory grows with the flood", gs>>20, gl>>20)
	}
}

// BenchmarkProxyFloodMemory pushes 1 GiB of 1 KiB progress events through a
// proxy throttled to 48 MiB/s and reports the peak heap and RSS. Run with
//
//	go test -run '^$' -bench ProxyFloodMemory -benchtime 1x ./faultproxy/
func BenchmarkProxyFloodMemory(b *testing.B) {
	for b.Loop() {
		r := floodThroughProxy(b, 1<<30, 1024, 48<<20)
		if !r.final {
			b.Fatal("the final response did not arrive last")
		}
		b.Log(r)
		b.ReportMetric(float64(r.peakHeap-r.baseHeap)/(1<<20), "heap-growth-MiB")
		b.ReportMetric(float64(r.peakRSSkB)/1024, "peak-RSS-MiB")
		b.ReportMetric(float64(r.received)/(1<<20)/r.elapsed.Seconds(), "MiB/s")
	}
}

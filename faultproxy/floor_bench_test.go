package faultproxy

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"
)

// BenchmarkFloorReverseProxy measures the floor any HTTP-terminating proxy
// pays: the standard library's httputil.ReverseProxy (no parsing, no
// transcript, no rules; it flushes an event stream at every write) in front
// of the same upstream, beside the direct call and this proxy, in one run:
// a JSON round trip and the 10 000-event stream. cpu-µs/op (per event) is
// the whole process's CPU (client, proxy and upstream), the figure that
// holds up on a loaded machine. Its name keeps it out of bench/run.sh
// (-bench 'Stdio|HTTP'); bench/RESULTS.md quotes it under "What bounds it".
//
//	go test -run '^$' -bench FloorReverseProxy -benchtime 2s ./faultproxy/
func BenchmarkFloorReverseProxy(b *testing.B) {
	stdlib := func(b *testing.B, up *httptest.Server) string {
		u, err := url.Parse(up.URL)
		if err != nil {
			b.Fatal(err)
		}
		rp := httputil.NewSingleHostReverseProxy(u)
		tr := &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 64}
		b.Cleanup(tr.CloseIdleConnections)
		rp.Transport = tr
		srv := httptest.NewServer(rp)
		b.Cleanup(srv.Close)
		return srv.URL
	}
	for _, c := range []struct {
		name string
		base func(*testing.B, *httptest.Server) string
	}{
		{"direct", func(b *testing.B, up *httptest.Server) string { return benchTarget(b, up, false) }},
		{"httputil", stdlib},
		{"proxy", func(b *testing.B, up *httptest.Server) string { return benchTarget(b, up, true) }},
	} {
		b.Run("json/"+c.name, func(b *testing.B) {
			up := benchUpstream(b)
			url := c.base(b, up) + "/json"
			cl := benchClient(b)
			if err := roundTrip(cl, url, len(benchResult)); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				if err := roundTrip(cl, url, len(benchResult)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
		})
		b.Run("stream/"+c.name, func(b *testing.B) {
			up := benchUpstream(b)
			url := c.base(b, up) + "/stream"
			cl := benchClient(b)
			want := int64(benchStreamEvents * len(benchEvent))
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				readStream(b, cl, url, want)
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/1e3/(float64(b.N)*benchStreamEvents), "cpu-µs/event")
			b.ReportMetric(float64(b.N)*benchStreamEvents/b.Elapsed().Seconds(), "events/s")
		})
	}
}

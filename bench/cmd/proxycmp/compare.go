//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-conform/mcp-conform/bench/internal/piped"
	"github.com/mcp-conform/mcp-conform/internal/benchwire"
	"github.com/mcp-conform/mcp-conform/sse"
)

// The request the HTTP measurements send: a tools/call of about 300 bytes
// (the echo server answers with the same bytes).
var call = []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"open_ticket","arguments":{"title":"Cannot sign in","body":"` +
	strings.Repeat("lorem ipsum ", 12) + `","operation_key":"5f0c2a8e-7d1b-4f7e-9a52-0c1d2e3f4a5b"},"_meta":{"progressToken":"bench-42"}}}`)

// The stdio line (faultproxy/bench_test.go's).
var stdioLine = []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` +
	"0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789" +
	`"},"_meta":{"progressToken":"bench"}}}` + "\n")

// Per-round sizes of each measurement.
type sizes struct {
	Seq      int           // sequential JSON round trips
	Parallel time.Duration // how long 16 callers run
	Callers  int
	TTFE     int // event-stream POSTs timed to their first event
	Stream   int // events in one /stream
	Streams  int // /stream GETs per measurement
	Stdio    int // stdio round trips
}

// sample is one measurement of one path in one round.
type sample struct {
	Round  int     `json:"round"`
	Metric string  `json:"metric"`
	Path   string  `json:"path"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
	// CPUus is the proxy process's CPU per request (or per event) in µs
	// during this measurement, when there is a proxy process.
	CPUus float64 `json:"cpuUs,omitempty"`
}

type httpPath struct {
	name string
	base string // http://host:port
	pid  int    // the proxy process; 0 direct
}

func runCompare(args []string) error {
	fs := flag.NewFlagSet("compare", flag.ExitOnError)
	toxi := fs.String("toxiproxy", "", "toxiproxy server binary (v2.12.0)")
	mcp := fs.String("mcp-conform", "", "mcp-conform binary")
	rounds := fs.Int("rounds", 7, "rounds (each measures every metric on the three paths)")
	budget := fs.Duration("budget", 150*time.Second, "start no round after this long (the first always runs)")
	mdOut := fs.String("md", "", "write the Markdown table here")
	jsonOut := fs.String("json", "", "write the raw samples here")
	quick := fs.Bool("quick", false, "small sizes (a smoke run)")
	withStdio := fs.Bool("stdio", true, "measure the stdio round trip too (cat, the line relay, mcp-conform proxy -- cat)")
	metrics := fs.String("metrics", "seq,par,ttfe,sse", "HTTP measurements to make, of seq, par, ttfe, sse")
	diag := fs.Bool("diag", false, "print, per metric and proxy, user/system ticks and context switches per 1000 requests (stderr)")
	only := fs.String("only", "", "measure only this HTTP path's proxy (toxiproxy or mcp-conform) besides direct: for profiling")
	_ = fs.Parse(args)
	if *toxi == "" || *mcp == "" {
		return errors.New("compare: -toxiproxy and -mcp-conform are required")
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	sz := sizes{Seq: 2000, Parallel: time.Second, Callers: 16, TTFE: 300, Stream: 10_000, Streams: 2, Stdio: 3000}
	if *quick {
		sz = sizes{Seq: 200, Parallel: 200 * time.Millisecond, Callers: 16, TTFE: 30, Stream: 2000, Streams: 1, Stdio: 300}
	}
	dir, err := os.MkdirTemp("", "proxycmp.")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	// A hard stop, whatever hangs.
	hard := time.AfterFunc(*budget+90*time.Second, func() {
		fmt.Fprintln(os.Stderr, "proxycmp: over the budget by 90 s; giving up")
		os.Exit(1)
	})
	defer hard.Stop()

	echoP, echoURL, err := start("echo", []string{self, "echo"}, nil, filepath.Join(dir, "echo.err"), 10*time.Second)
	if err != nil {
		return err
	}
	defer echoP.stop()
	eu, _ := url.Parse(echoURL)
	toxiP, toxiAddr, err := startToxiproxy(*toxi, eu.Host, dir)
	if err != nil {
		return err
	}
	defer toxiP.stop()
	mcpP, mcpURL, err := start("mcp-conform proxy", []string{*mcp, "proxy", "--url", echoURL + "/json", "--listen", "127.0.0.1:0"},
		nil, filepath.Join(dir, "mcp.err"), 10*time.Second)
	if err != nil {
		return err
	}
	defer mcpP.stop()
	mu, err := url.Parse(mcpURL)
	if err != nil || mu.Host == "" {
		return fmt.Errorf("mcp-conform proxy printed %q, not a URL", mcpURL)
	}
	paths := []httpPath{
		{"direct", echoURL, 0},
		{"toxiproxy", "http://" + toxiAddr, toxiP.pid()},
		{"mcp-conform", "http://" + mu.Host, mcpP.pid()},
	}
	stdioPaths := []struct {
		name string
		argv []string
	}{
		{"direct", []string{"cat"}},
		{"relay", []string{self, "relay", "--", "cat"}},
		{"mcp-conform", []string{*mcp, "proxy", "--", "cat"}},
	}

	if *only != "" {
		paths = slices.DeleteFunc(paths, func(p httpPath) bool { return p.name != "direct" && p.name != *only })
	}
	client := newClient(sz.Callers)
	for _, p := range paths { // warm the connections and check each path
		if _, err := seqRoundTrips(client, p.base, 50); err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
	}

	t0 := time.Now()
	var samples []sample
	add := func(s sample) { samples = append(samples, s) }
	done := 0
	for r := 1; r <= *rounds; r++ {
		if r > 1 && time.Since(t0) > *budget {
			fmt.Fprintf(os.Stderr, "proxycmp: budget %s reached after %d rounds\n", *budget, done)
			break
		}
		fmt.Fprintf(os.Stderr, "proxycmp: round %d/%d (%.0f s)\n", r, *rounds, time.Since(t0).Seconds())
		want := func(m string) bool { return slices.Contains(strings.Split(*metrics, ","), m) }
		for _, p := range paths {
			if !want("seq") {
				break
			}
			var lat []time.Duration
			cpu, err := withCPU(p.pid, func() (e error) { lat, e = seqRoundTrips(client, p.base, sz.Seq); return })
			if err != nil {
				return fmt.Errorf("%s sequential: %w", p.name, err)
			}
			add(sample{r, "seq-p50", p.name, us(pct(lat, 50)), "µs", perReq(cpu, len(lat))})
			diagLine(*diag && p.pid != 0, "seq", p.name, len(lat))
			add(sample{r, "seq-p99", p.name, us(pct(lat, 99)), "µs", 0})
		}
		for _, p := range paths {
			if !want("par") {
				break
			}
			var n int
			var el time.Duration
			cpu, err := withCPU(p.pid, func() (e error) { n, el, e = parallel(client, p.base, sz.Callers, sz.Parallel); return })
			if err != nil {
				return fmt.Errorf("%s parallel: %w", p.name, err)
			}
			add(sample{r, "par-rps", p.name, float64(n) / el.Seconds(), "req/s", perReq(cpu, n)})
			diagLine(*diag && p.pid != 0, "par", p.name, n)
		}
		for _, p := range paths {
			if !want("ttfe") {
				break
			}
			lat, err := ttfe(client, p.base, sz.TTFE)
			if err != nil {
				return fmt.Errorf("%s time to first event: %w", p.name, err)
			}
			add(sample{r, "ttfe-p50", p.name, us(pct(lat, 50)), "µs", 0})
			add(sample{r, "ttfe-p99", p.name, us(pct(lat, 99)), "µs", 0})
		}
		for _, p := range paths {
			if !want("sse") {
				break
			}
			var el time.Duration
			cpu, err := withCPU(p.pid, func() (e error) { el, e = streams(client, p.base, sz.Stream, sz.Streams); return })
			if err != nil {
				return fmt.Errorf("%s stream: %w", p.name, err)
			}
			ev := sz.Stream * sz.Streams
			add(sample{r, "sse-eps", p.name, float64(ev) / el.Seconds(), "events/s", perReq(cpu, ev)})
			diagLine(*diag && p.pid != 0, "sse", p.name, ev)
		}
		for _, p := range stdioPaths {
			if !*withStdio {
				break
			}
			lat, err := stdioRoundTrips(p.argv, sz.Stdio)
			if err != nil {
				return fmt.Errorf("stdio %s: %w", p.name, err)
			}
			add(sample{r, "stdio-p50", p.name, us(pct(lat, 50)), "µs", 0})
		}
		done = r
	}
	elapsed := time.Since(t0)
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(samples, "", " ")
		if err := os.WriteFile(*jsonOut, b, 0o644); err != nil {
			return err
		}
	}
	md := report(samples, done, sz, elapsed)
	if *mdOut != "" {
		return os.WriteFile(*mdOut, []byte(md), 0o644)
	}
	fmt.Print(md)
	return nil
}

func newClient(callers int) *http.Client {
	tr := &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 2 * callers, MaxIdleConns: 4 * callers}
	return &http.Client{Transport: tr, Timeout: 20 * time.Second}
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

func pct(lat []time.Duration, p int) time.Duration {
	s := slices.Clone(lat)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

func perReq(cpu time.Duration, n int) float64 {
	if cpu < 0 || n == 0 {
		return 0
	}
	return us(cpu) / float64(n)
}

// withCPU runs fn and returns the CPU time process pid used meanwhile (-1
// when pid is 0).
func withCPU(pid int, fn func() error) (time.Duration, error) {
	if pid == 0 {
		return -1, fn()
	}
	c0, err := cpuTime(pid)
	if err != nil {
		return 0, err
	}
	p0 := readProcStats(pid)
	if err := fn(); err != nil {
		return 0, err
	}
	c1, err := cpuTime(pid)
	if err != nil {
		return 0, err
	}
	lastStats = readProcStats(pid).sub(p0)
	return c1 - c0, nil
}

// lastStats are the counters of the last withCPU, for -diag.
var lastStats procStats

func diagLine(on bool, metric, path string, n int) {
	if !on || n == 0 {
		return
	}
	k := 1000 / float64(n)
	fmt.Fprintf(os.Stderr, "diag %-8s %-12s per 1000: utime %.1f stime %.1f ticks, csw %.0f voluntary %.0f involuntary\n",
		metric, path, float64(lastStats.utime)*k, float64(lastStats.stime)*k, float64(lastStats.vcsw)*k, float64(lastStats.ivcsw)*k)
}

// post sends call to base+path with an MCP client's headers.
func post(c *http.Client, base, path string) (*http.Response, error) {
	req, err := benchwire.NewPost(base+path, call)
	if err != nil {
		return nil, err
	}
	return c.Do(req)
}

func roundTrip(c *http.Client, base string) error {
	resp, err := post(c, base, "/json")
	if err != nil {
		return err
	}
	n, err := benchwire.Drain(resp)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || n != int64(len(call)) {
		return fmt.Errorf("status %d, %d bytes, want 200 and %d", resp.StatusCode, n, len(call))
	}
	return nil
}

func seqRoundTrips(c *http.Client, base string, n int) ([]time.Duration, error) {
	lat := make([]time.Duration, 0, n)
	for range n {
		t := time.Now()
		if err := roundTrip(c, base); err != nil {
			return nil, err
		}
		lat = append(lat, time.Since(t))
	}
	return lat, nil
}

// parallel runs callers goroutines doing round trips for d and returns how
// many completed and in how long.
func parallel(c *http.Client, base string, callers int, d time.Duration) (int, time.Duration, error) {
	var n atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	t := time.Now()
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				if err := roundTrip(c, base); err != nil {
					errs <- err
					return
				}
				n.Add(1)
			}
		}()
	}
	time.Sleep(d)
	stop.Store(true)
	wg.Wait()
	el := time.Since(t)
	select {
	case err := <-errs:
		return 0, 0, err
	default:
	}
	return int(n.Load()), el, nil
}

// ttfe times n event-stream POSTs from the request to the end of their
// first event (the blank line), then reads each to its end.
func ttfe(c *http.Client, base string, n int) ([]time.Duration, error) {
	lat := make([]time.Duration, 0, n)
	for range n {
		t := time.Now()
		resp, err := post(c, base, "/sse")
		if err != nil {
			return nil, err
		}
		br := bufio.NewReader(resp.Body)
		var first time.Duration
		events := 0
		for {
			line, err := br.ReadSlice('\n')
			if err != nil {
				if errors.Is(err, io.EOF) && len(line) == 0 {
					break
				}
				resp.Body.Close()
				return nil, fmt.Errorf("after %d events: %w", events, err)
			}
			if len(line) == 1 { // the blank line ends an event
				events++
				if events == 1 {
					first = time.Since(t)
				}
			}
		}
		resp.Body.Close()
		if events != 2 {
			return nil, fmt.Errorf("%d events, want 2", events)
		}
		lat = append(lat, first)
	}
	return lat, nil
}

// streams reads k streams of n events, as an MCP client does (each event
// parsed, with the project's sse.Reader), and returns the time they took.
func streams(c *http.Client, base string, n, k int) (time.Duration, error) {
	t := time.Now()
	for range k {
		resp, err := c.Get(fmt.Sprintf("%s/stream?n=%d", base, n))
		if err != nil {
			return 0, err
		}
		rd := sse.NewReader(resp.Body, sse.Options{})
		got := 0
		for {
			ev, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				resp.Body.Close()
				return 0, fmt.Errorf("after %d events: %w", got, err)
			}
			if !bytes.Equal(ev.Raw, streamEvent) {
				resp.Body.Close()
				return 0, fmt.Errorf("event %d is %q", got, ev.Raw)
			}
			got++
		}
		resp.Body.Close()
		if got != n {
			return 0, fmt.Errorf("read %d of %d events", got, n)
		}
	}
	return time.Since(t), nil
}

// stdioRoundTrips starts argv (a line echo, possibly behind a relay) and
// times n sequential line round trips after 200 unmeasured ones.
func stdioRoundTrips(argv []string, n int) ([]time.Duration, error) {
	cmd, in, out, err := piped.Start(argv, nil)
	if err != nil {
		return nil, err
	}
	watchdog := time.AfterFunc(30*time.Second, func() { _ = cmd.Process.Kill() })
	defer watchdog.Stop()
	br := bufio.NewReaderSize(out, 64<<10)
	const warm = 200
	lat := make([]time.Duration, 0, n)
	var rerr error
	for i := range warm + n {
		t := time.Now()
		if _, err := in.Write(stdioLine); err != nil {
			rerr = err
			break
		}
		got, err := br.ReadSlice('\n')
		if err != nil {
			rerr = err
			break
		}
		if !bytes.Equal(got, stdioLine) {
			rerr = fmt.Errorf("round trip %d: echoed %q", i, got)
			break
		}
		if i >= warm {
			lat = append(lat, time.Since(t))
		}
	}
	_ = in.Close()
	_, _ = io.Copy(io.Discard, br)
	werr := cmd.Wait()
	if rerr == nil && werr != nil {
		rerr = werr
	}
	return lat, rerr
}

// Command stdiolat measures the latency of sequential line round trips to a
// stdio child process: it starts the command given after "--", writes one
// ~200-byte tools/call line, waits for the line echoed back, and repeats.
// It prints the percentiles of the round trips on one line:
//
//	n=20000 mean-µs=31.2 p50-µs=28.9 p99-µs=71.4
//
// bench/run.sh runs it against "cat" (direct) and against
// "mcp-conform proxy -- cat" (the proxy as its own process, as a client
// sees it), alternately, to give the stdio path a p50 and p99: the
// faultproxy Go benchmark of the stdio round trip reports only a mean.
// With -any-reply any one line counts as the answer, to time a real
// server's tools/call (e.g. "mcp-conform fixture", whose echo tool answers
// the line with a result) direct and through the proxy.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/mcp-conform/mcp-conform/bench/internal/piped"
)

// The same request line as faultproxy/bench_test.go.
var line = []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` +
	"0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789" +
	`"},"_meta":{"progressToken":"bench"}}}` + "\n")

func main() {
	n := flag.Int("n", 20000, "measured round trips")
	warm := flag.Int("warmup", 500, "round trips before measuring")
	limit := flag.Duration("timeout", 60*time.Second, "give up (exit 1) after this long")
	anyReply := flag.Bool("any-reply", false, "accept any one line as the answer (a real server's response) instead of the echoed line")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: stdiolat [-n N] [-warmup N] [-timeout D] [-any-reply] -- COMMAND [ARGS...]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 || *n < 1 || *warm < 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(flag.Args(), *n, *warm, *limit, *anyReply); err != nil {
		fmt.Fprintln(os.Stderr, "stdiolat:", err)
		os.Exit(1)
	}
}

func run(argv []string, n, warm int, limit time.Duration, anyReply bool) error {
	cmd, in, out, err := piped.Start(argv, os.Stderr)
	if err != nil {
		return err
	}
	// A child that stops answering must not hang the caller.
	watchdog := time.AfterFunc(limit, func() {
		fmt.Fprintf(os.Stderr, "stdiolat: no result after %s; killing %s\n", limit, argv[0])
		_ = cmd.Process.Kill()
	})
	defer watchdog.Stop()

	lat, rerr := measure(in, out, n, warm, anyReply)
	_ = in.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case werr := <-done:
		if rerr == nil && werr != nil {
			rerr = fmt.Errorf("%s: %w", argv[0], werr)
		}
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		if rerr == nil {
			rerr = fmt.Errorf("%s did not exit within 5s of its stdin closing", argv[0])
		}
	}
	if rerr != nil {
		return rerr
	}
	slices.Sort(lat)
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
	fmt.Printf("n=%d mean-µs=%.1f p50-µs=%.1f p99-µs=%.1f\n", len(lat),
		us(sum/time.Duration(len(lat))), us(lat[len(lat)/2]), us(lat[len(lat)*99/100]))
	return nil
}

func measure(w io.Writer, r io.Reader, n, warm int, anyReply bool) ([]time.Duration, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	lat := make([]time.Duration, 0, n)
	for i := 0; i < warm+n; i++ {
		t0 := time.Now()
		if _, err := w.Write(line); err != nil {
			return nil, err
		}
		got, err := br.ReadSlice('\n')
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("the child closed its stdout")
			}
			return nil, err
		}
		if !anyReply && !bytes.Equal(got, line) {
			return nil, fmt.Errorf("round trip %d: echoed %q, want the line sent", i, got)
		}
		if i >= warm {
			lat = append(lat, time.Since(t0))
		}
	}
	return lat, nil
}

package faultproxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// The test binary doubles as a tiny line server, started as a real child
// process: FAULTPROXY_HELPER selects its behaviour. As a test binary it
// fails when any goroutine outlives the tests (goleak).
func TestMain(m *testing.M) {
	switch os.Getenv("FAULTPROXY_HELPER") {
	case "echo":
		echoServer(false)
		os.Exit(0)
	case "echo-stderr":
		echoServer(true)
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// echoServer writes every line back unchanged; with stderr it also logs it.
func echoServer(stderr bool) {
	br := bufio.NewReaderSize(os.Stdin, 1<<20)
	bw := bufio.NewWriter(os.Stdout)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			_, _ = bw.Write(line)
			_ = bw.Flush()
			if stderr {
				fmt.Fprintf(os.Stderr, "got %d bytes\n", len(line))
			}
		}
		if err != nil {
			return
		}
	}
}

// helperCommand returns the argv and env that start the test binary as a
// helper server.
func helperCommand(mode string) ([]string, []string) {
	return []string{os.Args[0], "-test.run=^$"}, []string{"FAULTPROXY_HELPER=" + mode, "GORACE=atexit_sleep_ms=0"}
}

// startEcho starts an echo child behind a link with the given rules.
func startEcho(t testing.TB, mode string, rules ...Rule) *Stdio {
	t.Helper()
	argv, env := helperCommand(mode)
	rs := NewRules()
	if err := rs.Set(rules...); err != nil {
		t.Fatal(err)
	}
	s, err := StartStdio(context.Background(), StdioOptions{Command: argv, Env: env, Rules: rs, Grace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// lineReader reads lines from r on a goroutine so tests can wait with a
// deadline.
type lineReader struct {
	lines chan string
}

func newLineReader(r io.Reader) *lineReader {
	lr := &lineReader{lines: make(chan string, 1024)}
	go func() {
		defer close(lr.lines)
		br := bufio.NewReaderSize(r, 1<<20)
		for {
			line, err := br.ReadString('\n')
			if line != "" {
				lr.lines <- line
			}
			if err != nil {
				return
			}
		}
	}()
	return lr
}

// next returns the next line or fails after d.
func (lr *lineReader) next(t testing.TB, d time.Duration) string {
	t.Helper()
	select {
	case l, ok := <-lr.lines:
		if !ok {
			t.Fatalf("stream ended while waiting for a line")
		}
		return l
	case <-time.After(d):
		t.Fatalf("no line within %s", d)
	}
	return ""
}

// none asserts that no line arrives within d.
func (lr *lineReader) none(t testing.TB, d time.Duration) {
	t.Helper()
	select {
	case l, ok := <-lr.lines:
		if ok {
			t.Fatalf("unexpected line %q", l)
		}
	case <-time.After(d):
	}
}

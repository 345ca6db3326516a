package faultproxy

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

const wait = 5 * time.Second

func TestTransparentWithoutRules(t *testing.T) {
	s := startEcho(t, "echo")
	c := s.Client()
	lr := newLineReader(c)
	rng := rand.New(rand.NewPCG(1, 2))
	var sent []string
	for i := 0; i < 500; i++ {
		var line string
		switch rng.IntN(6) {
		case 0:
			line = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i)
		case 1:
			line = fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":%d}}`, i)
		case 2:
			line = "not json at all \x00 \xff"
		case 3:
			line = ""
		case 4:
			line = fmt.Sprintf(`{ "id" : "%d" , "result" : {} }`+"\r", i)
		default:
			b := make([]byte, rng.IntN(300))
			for j := range b {
				b[j] = byte(rng.IntN(255) + 1)
				if b[j] == '\n' {
					b[j] = ' '
				}
			}
			line = string(b)
		}
		sent = append(sent, line+"\n")
	}
	go func() {
		for _, l := range sent {
			if _, err := c.Write([]byte(l)); err != nil {
				return
			}
		}
	}()
	for i, want := range sent {
		got := lr.next(t, wait)
		if got != want {
			t.Fatalf("line %d: got %q want %q", i, got, want)
		}
	}
	// Every line was recorded twice (c2s and s2c), none dropped.
	n := 0
	for _, e := range s.Transcript().Entries() {
		if e.Kind == EntryMessage {
			n++
		}
	}
	if n != 2*len(sent) {
		t.Fatalf("transcript has %d messages, want %d", n, 2*len(sent))
	}
}

func TestDropResponse(t *testing.T) {
	s := startEcho(t, "echo", Rule{Name: "lose", Match: Match{Dir: ServerToClient, ID: jsonrpc.IntID(2)}, Fault: Drop{}})
	lr := newLineReader(s.Client())
	for i := 1; i <= 3; i++ {
		fmt.Fprintf(s.Client(), `{"jsonrpc":"2.0","id":%d,"result":{}}`+"\n", i)
	}
	if got := lr.next(t, wait); !strings.Contains(got, `"id":1`) {
		t.Fatalf("first line %q", got)
	}
	// The next line is id 3: id 2 was dropped, and nothing else was.
	if got := lr.next(t, wait); !strings.Contains(got, `"id":3`) {
		t.Fatalf("second line %q, want id 3", got)
	}
	if !hasFault(s.Transcript(), "lose", "drop") {
		t.Fatalf("no drop recorded: %v", s.Transcript().Entries())
	}
}

func TestHoldUntilReleasesAfterTrigger(t *testing.T) {
	// Hold the client's cancellation of id 7 until the server's reply to
	// id 7 has passed: the cancellation must arrive after the response.
	s := startEcho(t, "echo", Rule{
		Name:  "late-cancel",
		Match: Match{Dir: ClientToServer, Method: "notifications/cancelled"},
		Fault: HoldUntil{Until: Match{Dir: ServerToClient, Kind: jsonrpc.Response, ID: jsonrpc.IntID(8)}},
	})
	lr := newLineReader(s.Client())
	cancel := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`
	fmt.Fprintln(s.Client(), cancel)
	fmt.Fprintln(s.Client(), `{"jsonrpc":"2.0","id":8,"result":{}}`)
	if got := lr.next(t, wait); !strings.Contains(got, `"id":8`) {
		t.Fatalf("first echoed %q, want the response first", got)
	}
	if got := lr.next(t, wait); strings.TrimSpace(got) != cancel {
		t.Fatalf("second echoed %q, want the released cancellation", got)
	}
	if !hasFault(s.Transcript(), "late-cancel", "release") {
		t.Fatal("release not recorded")
	}
}

func TestHoldUntilIsBounded(t *testing.T) {
	s := startEcho(t, "echo", Rule{Name: "forever", Match: Match{Dir: ClientToServer}, Times: 1,
		Fault: HoldUntil{Until: Match{Method: "never"}, Max: 50 * time.Millisecond}})
	lr := newLineReader(s.Client())
	fmt.Fprintln(s.Client(), `{"a":1}`)
	if got := lr.next(t, wait); strings.TrimSpace(got) != `{"a":1}` {
		t.Fatalf("got %q", got)
	}
}

func TestDuplicateAndInject(t *testing.T) {
	s := startEcho(t, "echo",
		Rule{Name: "twice", Match: Match{Dir: ServerToClient, Method: "a"}, Fault: Duplicate{}},
		Rule{Name: "garbage", Match: Match{Dir: ClientToServer, Method: "b"}, Fault: Inject{Raw: []byte("{oops")}},
	)
	lr := newLineReader(s.Client())
	fmt.Fprintln(s.Client(), `{"jsonrpc":"2.0","method":"a"}`)
	fmt.Fprintln(s.Client(), `{"jsonrpc":"2.0","method":"b"}`)
	want := []string{`{"jsonrpc":"2.0","method":"a"}`, `{"jsonrpc":"2.0","method":"a"}`, `{"jsonrpc":"2.0","method":"b"}`, `{oops`}
	for i, w := range want {
		if got := strings.TrimSpace(lr.next(t, wait)); got != w {
			t.Fatalf("line %d: got %q want %q", i, got, w)
		}
	}
}

func TestNthAndAfter(t *testing.T) {
	s := startEcho(t, "echo", Rule{
		Name:  "second-after-go",
		Match: Match{Dir: ServerToClient, Method: "x"},
		After: &Match{Dir: ServerToClient, Method: "go"},
		Nth:   2,
		Fault: Drop{},
	})
	lr := newLineReader(s.Client())
	for _, m := range []string{"x", "go", "x", "x", "x", "end"} {
		fmt.Fprintf(s.Client(), `{"method":%q}`+"\n", m)
	}
	var got []string
	for i := 0; i < 5; i++ {
		got = append(got, strings.TrimSpace(lr.next(t, wait)))
	}
	want := []string{`{"method":"x"}`, `{"method":"go"}`, `{"method":"x"}`, `{"method":"x"}`, `{"method":"end"}`}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("got %v want %v", got, want)
	}
}

func TestCrashKillsServer(t *testing.T) {
	s := startEcho(t, "echo", Rule{Name: "boom", Match: Match{Dir: ClientToServer, Method: "die"}, Fault: Crash{}})
	lr := newLineReader(s.Client())
	fmt.Fprintln(s.Client(), `{"method":"die"}`)
	select {
	case <-s.Exited():
	case <-time.After(wait):
		t.Fatal("server not killed")
	}
	if err := s.ExitErr(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("exit = %v, want killed", err)
	}
	// The client sees the end of the stream, not a hang.
	select {
	case _, ok := <-lr.lines:
		if ok {
			t.Fatal("unexpected line after crash")
		}
	case <-time.After(wait):
		t.Fatal("client stream did not end after the crash")
	}
}

func TestPauseStopsAndResumes(t *testing.T) {
	s := startEcho(t, "echo", Rule{Name: "freeze", Match: Match{Dir: ClientToServer, Method: "freeze"}, Fault: Pause{For: 300 * time.Millisecond}})
	lr := newLineReader(s.Client())
	start := time.Now()
	fmt.Fprintln(s.Client(), `{"method":"freeze"}`)
	lr.next(t, wait)
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Fatalf("answered after %s, the server was not stopped", d)
	}
	if !hasFault(s.Transcript(), "freeze", "resume") {
		t.Fatal("resume not recorded")
	}
}

func TestStderrAndFinalFragment(t *testing.T) {
	s := startEcho(t, "echo-stderr")
	lr := newLineReader(s.Client())
	_, _ = s.Client().Write([]byte("{\"x\":1}\nno newline"))
	_ = s.client.closeWrite()
	if got := lr.next(t, wait); got != "{\"x\":1}\n" {
		t.Fatalf("got %q", got)
	}
	if got := lr.next(t, wait); got != "no newline" {
		t.Fatalf("fragment %q", got)
	}
	select {
	case <-s.Exited():
	case <-time.After(wait):
		t.Fatal("server did not exit on stdin EOF")
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	for {
		n := 0
		for _, e := range s.Transcript().Entries() {
			if e.Kind == EntryStderr && strings.HasPrefix(e.Text, "got ") {
				n++
			}
		}
		if n == 2 {
			break
		}
		select {
		case <-s.Transcript().Changed():
		case <-ctx.Done():
			t.Fatalf("stderr lines recorded: %d", n)
		}
	}
}

func TestOversizeFramePassesUnparsed(t *testing.T) {
	argv, env := helperCommand("echo")
	s, err := StartStdio(context.Background(), StdioOptions{Command: argv, Env: env, Options: Options{MaxFrame: 1024}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	lr := newLineReader(s.Client())
	big := bytes.Repeat([]byte("a"), 200_000)
	go func() {
		_, _ = s.Client().Write(append(big, '\n'))
		fmt.Fprintln(s.Client(), `{"after":true}`)
	}()
	if got := lr.next(t, wait); got != string(big)+"\n" {
		t.Fatalf("oversize line altered: %d bytes", len(got))
	}
	if got := lr.next(t, wait); got != "{\"after\":true}\n" {
		t.Fatalf("next line %q", got)
	}
	found := false
	for _, e := range s.Transcript().Entries() {
		if e.Kind == EntryNote && strings.Contains(e.Text, "oversize") {
			found = true
		}
	}
	if !found {
		t.Fatal("oversize frame not recorded")
	}
}

func TestCloseReapsProcessGroup(t *testing.T) {
	s := startEcho(t, "echo")
	pid := s.Pid()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(-pid, 0); err == nil {
		t.Fatalf("process group %d still alive after Close", pid)
	}
}

// wantFault fails the test unless tr records the fault of rule.
func wantFault(t testing.TB, tr *Transcript, rule, fault string) {
	t.Helper()
	if !hasFault(tr, rule, fault) {
		t.Fatalf("%s not recorded", fault)
	}
}

func hasFault(tr *Transcript, rule, fault string) bool {
	for _, e := range tr.Entries() {
		if e.Kind == EntryFault && e.Rule == rule && e.Fault == fault {
			return true
		}
	}
	return false
}

// TestCloseInputEndsTheServer: CloseInput delivers what the client wrote,
// then closes the server's stdin (the echo helper exits on EOF); no signal
// is sent, and Close afterwards is still safe.
func TestCloseInputEndsTheServer(t *testing.T) {
	s := startEcho(t, "echo")
	c := s.Client()
	lr := newLineReader(c)
	if _, err := c.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"last"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	if err := s.CloseInput(); err != nil {
		t.Fatal(err)
	}
	if line := lr.next(t, wait); !strings.Contains(line, `"last"`) {
		t.Fatalf("the message written before CloseInput was not echoed: %q", line)
	}
	select {
	case <-s.Exited():
	case <-time.After(5 * time.Second):
		t.Fatal("the server did not exit after its stdin closed")
	}
	if err := s.ExitErr(); err != nil {
		t.Errorf("the server ended with %v, want a clean exit on EOF (no signal)", err)
	}
}

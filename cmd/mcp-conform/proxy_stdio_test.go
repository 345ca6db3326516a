package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestProxyDropsOneResponse drives `mcp-conform proxy` as a client would,
// over its stdin and stdout, in front of the reference server, with a rule
// that drops the response to the ping with id 2: the next ping's answer
// arrives, id 2's never does, the transcript records the drop, and closing
// stdin ends the proxy with exit 0.
func TestProxyDropsOneResponse(t *testing.T) {
	limitParallel(t)
	transcript := filepath.Join(t.TempDir(), "transcript.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd, stdin, stdout, stderr := startPiped(t, ctx, "proxy", "--transcript", transcript,
		"--faults", testdataFile(t, "drop-ping-2.yaml"), "--", binary, "fixture")
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var seen []string
	// next returns the id of the next response, failing after 10 s.
	next := func() string {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("proxy output ended; seen %q\nstderr:\n%s", seen, stderr.String())
			}
			seen = append(seen, l)
			var m struct{ ID json.RawMessage }
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("proxy wrote a line that is not JSON: %q", l)
			}
			return string(m.ID)
		case <-time.After(10 * time.Second):
			t.Fatalf("no response within 10 s; seen %q\nstderr:\n%s", seen, stderr.String())
			return ""
		}
	}
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatalf("write to the proxy: %v", err)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"hostile_test","version":"1"}}}`)
	if id := next(); id != "1" {
		t.Fatalf("first response has id %s, want 1", id)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if id := next(); id != "3" {
		t.Fatalf("after pings 2 and 3 the next response has id %s, want 3 (2 is dropped)", id)
	}
	// A further ping: both it and id 2 were sent before, so by the time its
	// answer is through, id 2's would have been too.
	send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	if id := next(); id != "4" {
		t.Fatalf("response id %s, want 4", id)
	}
	closed := time.Now()
	if err := stdin.Close(); err != nil {
		t.Fatal(err)
	}
	for l := range lines {
		seen = append(seen, l)
	}
	err := cmd.Wait()
	if ctx.Err() != nil {
		t.Fatalf("the proxy did not end after its stdin closed\nstderr:\n%s", stderr.String())
	}
	if err != nil {
		t.Fatalf("proxy: %v\nstderr:\n%s", err, stderr.String())
	}
	if d := time.Since(closed); d > 5*time.Second {
		t.Errorf("the proxy took %s to end after its stdin closed", d)
	}
	for _, l := range seen {
		if strings.Contains(l, `"id":2`) {
			t.Errorf("the dropped response arrived: %s", l)
		}
	}

	// The transcript: every message, the drop of exactly id 2's response,
	// and the server's exit.
	data, err := os.ReadFile(transcript)
	if err != nil {
		t.Fatal(err)
	}
	type entry struct {
		Kind, Dir, Rule, Fault, Text string
		Seq                          int64
		Msg                          json.RawMessage
	}
	var entries []entry
	for _, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var e entry
		if err := json.Unmarshal(l, &e); err != nil {
			t.Fatalf("transcript line is not JSON: %q", l)
		}
		entries = append(entries, e)
	}
	s2c := map[int64]string{} // seq → id of server messages
	var drops []entry
	exited := false
	for _, e := range entries {
		switch {
		case e.Kind == "message" && e.Dir == "s2c":
			var m struct{ ID json.RawMessage }
			_ = json.Unmarshal(e.Msg, &m)
			s2c[e.Seq] = string(m.ID)
		case e.Kind == "fault":
			drops = append(drops, e)
		case e.Kind == "process" && strings.Contains(e.Text, "exited with status 0"):
			exited = true
		}
	}
	if len(drops) != 1 || drops[0].Fault != "drop" || drops[0].Rule != "lose-ping-2" || drops[0].Dir != "s2c" {
		t.Fatalf("transcript faults %+v, want one drop by lose-ping-2\n%s", drops, data)
	}
	if id := s2c[drops[0].Seq]; id != "2" {
		t.Errorf("the drop acted on the server message with id %q, want 2\n%s", id, data)
	}
	for _, id := range []string{"1", "2", "3", "4"} {
		found := false
		for _, got := range s2c {
			found = found || got == id
		}
		if !found {
			t.Errorf("the transcript has no server message with id %s", id)
		}
	}
	if !exited {
		t.Errorf("the transcript does not record the server's clean exit\n%s", data)
	}
}

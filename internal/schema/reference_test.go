package schema

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/fixtures"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// conversation drives the reference server (fixtures.Serve) over a pair of
// pipes, line by line, and validates every message it writes.
type conversation struct {
	t       *testing.T
	in      *io.PipeWriter
	lines   chan []byte
	sess    *Session
	mu      sync.Mutex
	seq     int64
	results []Outcome
	sent    []string
	// lastLine is the last message read.
	lastLine []byte
}

func startReference(t *testing.T, version, mutant string) *conversation {
	t.Helper()
	v, err := For(version)
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		err := fixtures.Serve(ctx, inR, outW, fixtures.Options{Mutant: mutant, Ledger: t.TempDir() + "/ledger.db"})
		outW.Close()
		done <- err
	}()
	c := &conversation{t: t, in: inW, lines: make(chan []byte, 1024), sess: v.NewSession()}
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			c.lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(c.lines)
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cancel()
			<-done
		}
		cancel()
	})
	return c
}

// send writes one line; requests are recorded in the session.
func (c *conversation) send(line string) {
	c.t.Helper()
	c.sess.ClientSent([]byte(line))
	c.sent = append(c.sent, line)
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatalf("write %s: %v", line, err)
	}
}

// call sends a request and validates every server message up to and
// including the response with that id.
func (c *conversation) call(id, line string) Outcome {
	c.t.Helper()
	c.send(line)
	want := jsonrpc.IDFrom(json.RawMessage(id))
	deadline := time.After(10 * time.Second)
	for {
		select {
		case raw, ok := <-c.lines:
			if !ok {
				c.t.Fatalf("server closed its output before answering %s", id)
			}
			o := c.observe(raw)
			if (o.Kind == KindResult || o.Kind == KindError) && o.ID == want {
				return o
			}
			if o.Kind == KindError && want == "null" && o.ID.IsZero() {
				return o
			}
		case <-deadline:
			c.t.Fatalf("no response to %s within 10s", line)
		}
	}
}

func (c *conversation) observe(raw []byte) Outcome {
	c.mu.Lock()
	c.seq++
	seq := c.seq
	c.mu.Unlock()
	o := c.sess.ServerSent(seq, raw)
	c.lastLine = raw
	c.results = append(c.results, o)
	if testing.Verbose() {
		state := "ok"
		if !o.OK() {
			state = fmt.Sprintf("%d violation(s)", len(o.Violations))
		}
		c.t.Logf("seq %d %s %s against %s: %s %s", seq, o.Kind, o.Method, o.Against, state, o.NotValidated)
	}
	return o
}

func req(id any, method string, params any) string {
	m := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func note(method string, params any) string {
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		m["params"] = params
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func modernMeta(extra map[string]any) map[string]any {
	m := map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}},
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "schema-test", "version": "0"},
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// converse runs the version's script: every method the reference server
// offers, its errors, progress, tasks and a line that is not JSON.
func converse(c *conversation, version string) {
	n := 0
	next := func() int { n++; return n }
	id := func(i int) string { return fmt.Sprint(i) }
	if version == "2026-07-28" {
		meta := modernMeta(nil)
		p := func(kv ...any) map[string]any {
			m := map[string]any{"_meta": meta}
			for i := 0; i+1 < len(kv); i += 2 {
				m[kv[i].(string)] = kv[i+1]
			}
			return m
		}
		i := next()
		c.call(id(i), req(i, "server/discover", p()))
		i = next()
		c.call(id(i), req(i, "tools/list", p()))
		i = next()
		c.call(id(i), req(i, "tools/call", p("name", "echo", "arguments", map[string]any{"text": "hi"})))
		i = next()
		c.call(id(i), req(i, "tools/call", map[string]any{"_meta": modernMeta(map[string]any{"progressToken": "p1"}),
			"name": "slow", "arguments": map[string]any{"steps": 3, "stepMs": 0}}))
		i = next()
		c.call(id(i), req(i, "tools/call", p("name", "echo", "arguments", map[string]any{})))
		i = next()
		c.call(id(i), req(i, "no/such/method", p()))
		i = next()
		c.call(id(i), req(i, "ping", p()))
		i = next()
		created := c.call(id(i), req(i, "tools/call", p("name", "research", "arguments", map[string]any{"topic": "x", "steps": 1, "stepMs": 0})))
		if task := taskID(c, created); task != "" {
			i = next()
			c.call(id(i), req(i, "tasks/get", p("taskId", task)))
			i = next()
			c.call(id(i), req(i, "tasks/cancel", p("taskId", task)))
		}
		i = next()
		c.call(id(i), req(i, "tools/list", map[string]any{"_meta": modernMeta(map[string]any{"io.modelcontextprotocol/protocolVersion": "1999-01-01"})}))
		i = next()
		c.call(id(i), req(i, "tools/list", map[string]any{"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}))
	} else {
		i := next()
		c.call(id(i), req(i, "initialize", map[string]any{"protocolVersion": version, "capabilities": map[string]any{},
			"clientInfo": map[string]any{"name": "schema-test", "version": "0"}}))
		c.send(note("notifications/initialized", nil))
		i = next()
		c.call(id(i), req(i, "ping", nil))
		i = next()
		c.call(id(i), req(i, "tools/list", nil))
		i = next()
		c.call(id(i), req(i, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}}))
		i = next()
		c.call(fmt.Sprintf("%q", "s"+id(i)), req("s"+id(i), "tools/call", map[string]any{"_meta": map[string]any{"progressToken": 7},
			"name": "slow", "arguments": map[string]any{"steps": 3, "stepMs": 0}}))
		i = next()
		c.call(id(i), req(i, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{}}))
		i = next()
		c.call(id(i), req(i, "no/such/method", nil))
		i = next()
		c.call(id(i), req(i, "tools/call", map[string]any{"name": "create_support_ticket",
			"arguments": map[string]any{"operation_key": "schema-test-key-0001", "title": "Cannot sign in"}}))
		i = next()
		c.call(id(i), req(i, "tools/call", map[string]any{"name": "ticket_stats", "arguments": map[string]any{"operation_key": "schema-test-key-0001"}}))
		i = next()
		c.call(id(i), req(i, "tools/call", map[string]any{"name": "lookup_ticket", "arguments": map[string]any{"operation_key": "schema-test-key-0001"}}))
		i = next()
		created := c.call(id(i), req(i, "tools/call", map[string]any{"name": "research", "task": map[string]any{"ttl": 60000},
			"arguments": map[string]any{"topic": "x", "steps": 1, "stepMs": 0}}))
		if task := taskID(c, created); task != "" {
			i = next()
			c.call(id(i), req(i, "tasks/result", map[string]any{"taskId": task}))
			i = next()
			c.call(id(i), req(i, "tasks/get", map[string]any{"taskId": task}))
			i = next()
			c.call(id(i), req(i, "tasks/cancel", map[string]any{"taskId": task}))
		}
		i = next()
		c.call(id(i), req(i, "tasks/list", nil))
	}
	c.call("null", "this is not JSON")
	c.call("null", `{"jsonrpc":"2.0","id":null,"method":"tools/list"}`)
}

// taskID reads the task id of a CreateTaskResult (2025-11-25:
// result.task.taskId; 2026-07-28 tasks extension: result.taskId).
func taskID(c *conversation, o Outcome) string {
	if o.Kind != KindResult {
		return ""
	}
	raw := c.lastRaw()
	var m struct {
		Result struct {
			TaskID string `json:"taskId"`
			Task   struct {
				TaskID string `json:"taskId"`
			} `json:"task"`
		} `json:"result"`
	}
	_ = json.Unmarshal(raw, &m)
	if m.Result.TaskID != "" {
		return m.Result.TaskID
	}
	return m.Result.Task.TaskID
}

func (c *conversation) lastRaw() []byte { return c.lastLine }

// TestReferenceServerMessagesValidate talks to the reference server in each
// version (every method it offers, errors, progress, tasks, a parse error)
// and validates every message it sends: a correct target passes.
func TestReferenceServerMessagesValidate(t *testing.T) {
	for _, version := range Versions() {
		t.Run(version, func(t *testing.T) {
			c := startReference(t, version, "")
			converse(c, version)
			kinds := map[Kind]int{}
			validated := 0
			for _, o := range c.results {
				kinds[o.Kind]++
				if o.NotValidated == "" {
					validated++
				} else {
					t.Logf("seq %d %s %s: not validated: %s", o.Seq, o.Kind, o.Method, o.NotValidated)
				}
				for _, v := range o.Violations {
					t.Errorf("%s %s (against %s): %s", o.Kind, o.Method, o.Against, v)
				}
			}
			t.Logf("%d messages (%v), %d validated against a method definition", len(c.results), kinds, validated)
			if kinds[KindResult] == 0 || kinds[KindError] == 0 || kinds[KindNotification] == 0 {
				t.Errorf("the conversation should have produced results, errors and notifications: %v", kinds)
			}
		})
	}
}

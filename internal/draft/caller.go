package draft

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// Policy says which tools a draft may call to confirm its proposals.
type Policy int

const (
	// CallReadOnly calls only tools annotated readOnlyHint: true (the
	// default of mcp-conform init).
	CallReadOnly Policy = iota
	// CallNone calls no tool at all: tools/list only.
	CallNone
	// CallAll calls any candidate, mutations included (--try-tools).
	CallAll
)

func (p Policy) String() string {
	switch p {
	case CallNone:
		return "no tool calls"
	case CallAll:
		return "any candidate tool (--try-tools)"
	}
	return "read-only tools only"
}

// ErrNotAllowed is returned by Caller.Call for a tool the policy does not
// let the draft call.
var ErrNotAllowed = errors.New("not allowed to call this tool")

// Caller calls the target's tools under a Policy. It is the one place a
// draft sends tools/call, so what the policy forbids is never sent. Safe
// for concurrent use.
type Caller struct {
	conn    clients.Conn
	policy  Policy
	tools   map[string]Tool
	timeout time.Duration

	mu    sync.Mutex
	calls []string
	n     int
}

// NewCaller returns a Caller on conn for the listed tools; timeout bounds
// each call (default 15 s).
func NewCaller(conn clients.Conn, tools []Tool, policy Policy, timeout time.Duration) *Caller {
	if timeout <= 0 {
		timeout = 15 * time.Second
	}
	m := make(map[string]Tool, len(tools))
	for _, t := range tools {
		m[t.Name] = t
	}
	return &Caller{conn: conn, policy: policy, tools: m, timeout: timeout}
}

// Policy returns the caller's policy.
func (c *Caller) Policy() Policy { return c.policy }

// Allowed reports whether the policy lets the draft call the tool named
// name, and if not, why.
func (c *Caller) Allowed(name string) (bool, string) {
	t, ok := c.tools[name]
	switch {
	case !ok:
		return false, "not in tools/list"
	case c.policy == CallNone:
		return false, "no tool calls (--no-calls)"
	case c.policy == CallAll:
		return true, ""
	case t.TaskSupport == "required":
		return false, "task-augmented only"
	case !t.ReadOnlyHinted():
		return false, "not annotated readOnlyHint: true (--try-tools calls it)"
	}
	return true, ""
}

// Called lists the tools called so far, in order, one entry per call.
func (c *Caller) Called() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.calls...)
}

// Result is what one tools/call gave.
type Result struct {
	// Msg is the response (a result or a JSON-RPC error).
	Msg clients.Message
	// IsError is true for a JSON-RPC error or a result with isError.
	IsError bool
	// Object is the result's JSON object: structuredContent, or the first
	// text content that parses as a JSON object; nil when neither.
	Object map[string]json.RawMessage
	// Progress counts the notifications/progress carrying the call's token
	// that arrived before its response.
	Progress int
	// Elapsed is how long the call took.
	Elapsed time.Duration
}

// Call calls the tool with args, with a progress token of its own when
// progress is set, and waits for the response.
func (c *Caller) Call(ctx context.Context, name string, args map[string]any, progress bool) (Result, error) {
	if ok, why := c.Allowed(name); !ok {
		return Result{}, fmt.Errorf("%s: %w: %s", name, ErrNotAllowed, why)
	}
	c.mu.Lock()
	c.n++
	token := "mcp-conform-init-" + strconv.Itoa(c.n)
	c.calls = append(c.calls, name)
	c.mu.Unlock()

	params := map[string]any{"name": name, "arguments": args}
	if args == nil {
		params["arguments"] = map[string]any{}
	}
	if progress {
		params["_meta"] = map[string]any{clients.MetaProgressToken: token}
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	from := c.conn.Len()
	start := time.Now()
	inf, err := c.conn.Send(ctx, c.conn.NewID(), "tools/call", params)
	if err != nil {
		return Result{}, fmt.Errorf("call %s: %w", name, err)
	}
	m, err := inf.Wait(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("call %s: no response within %s: %w", name, c.timeout, err)
	}
	r := Result{Msg: m, Elapsed: time.Since(start)}
	if progress {
		want := jsonrpc.StringID(token)
		for _, p := range c.conn.Since(from) {
			if p.Seq >= m.Seq {
				break
			}
			if p.Env.Method == "notifications/progress" && p.Env.ProgressToken == want {
				r.Progress++
			}
		}
	}
	if m.Env.Kind != jsonrpc.Response {
		r.IsError = true
		return r, nil
	}
	var res struct {
		IsError    bool            `json:"isError"`
		Structured json.RawMessage `json:"structuredContent"`
		Content    []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	_ = json.Unmarshal(m.Env.Result, &res)
	r.IsError = res.IsError
	if json.Unmarshal(res.Structured, &r.Object) != nil {
		r.Object = nil
	}
	for _, ct := range res.Content {
		if r.Object != nil {
			break
		}
		if ct.Type == "text" && json.Unmarshal([]byte(ct.Text), &r.Object) != nil {
			r.Object = nil
		}
	}
	return r, nil
}

// Number reads field of the result's object as a number.
func (r Result) Number(field string) (float64, bool) {
	raw, ok := r.Object[field]
	if !ok {
		return 0, false
	}
	var n float64
	if json.Unmarshal(raw, &n) != nil {
		return 0, false
	}
	return n, true
}

// Text is the response, shortened, for notes.
func (r Result) Text() string { return clip(r.Msg.Raw) }

package harness

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// Waiter is an in-flight request on either transport.
type Waiter interface {
	ID() jsonrpc.ID
	Wait(ctx context.Context) (clients.Message, error)
}

// Endpoint is one client connection to the target, on either transport:
// what the IDEM checks and the manifest validation need of it.
type Endpoint struct {
	start func(ctx context.Context, id jsonrpc.ID, method string, params map[string]any) (Waiter, error)
	// NewID returns a fresh request id on the connection.
	NewID func() jsonrpc.ID
	// Tr is the transcript of the connection's fault proxy.
	Tr *faultproxy.Transcript
	// ExitHint says how the server ended, when it has.
	ExitHint func() string
	// Exited is closed when the server ends (nil when not observable).
	Exited <-chan struct{}
}

func StdioEndpoint(c *Conn) *Endpoint {
	return &Endpoint{
		start: func(ctx context.Context, id jsonrpc.ID, method string, params map[string]any) (Waiter, error) {
			return c.W.Start(ctx, id, method, params)
		},
		NewID: c.W.NewID, Tr: c.Transcript(),
		ExitHint: c.ExitHint, Exited: c.Exited(),
	}
}

// HTTPEndpoint speaks through w (the connection's own wire, or a second
// session on the same proxy). Requests live as long as life.
func HTTPEndpoint(life context.Context, c *HConn, w *clients.HTTPWire) *Endpoint {
	e := &Endpoint{
		start: func(_ context.Context, id jsonrpc.ID, method string, params map[string]any) (Waiter, error) {
			return w.Start(life, id, method, params)
		},
		NewID: w.NewID, Tr: c.Proxy.Transcript(), ExitHint: c.ExitHint,
	}
	if c.Proc != nil {
		e.Exited = c.Proc.Exited()
	}
	return e
}

// ToolOutcome is the answer to one tools/call.
type ToolOutcome struct {
	Msg clients.Message
	// RPCError is a JSON-RPC error response; IsError a tool error result.
	RPCError, IsError bool
	// Structured is structuredContent exactly as it was on the wire, or,
	// without it, the text content when that is JSON.
	Structured json.RawMessage
	// Content is the text of the result's text Content items.
	Content string
}

// Failed reports whether the call was refused (either kind of error).
func (o ToolOutcome) Failed() bool { return o.RPCError || o.IsError }

func ParseOutcome(m clients.Message) ToolOutcome {
	o := ToolOutcome{Msg: m}
	if m.Env.Kind != jsonrpc.Response {
		o.RPCError = true
		return o
	}
	var env struct {
		Result struct {
			IsError    bool            `json:"isError"`
			Structured json.RawMessage `json:"structuredContent"`
			Content    []struct {
				Type, Text string
			} `json:"content"`
		} `json:"result"`
	}
	if json.Unmarshal(m.Raw, &env) != nil {
		o.RPCError = true
		return o
	}
	o.IsError = env.Result.IsError
	var texts []string
	for _, c := range env.Result.Content {
		if c.Type == "text" {
			texts = append(texts, c.Text)
		}
	}
	o.Content = strings.Join(texts, "\n")
	o.Structured = env.Result.Structured
	if len(o.Structured) == 0 && json.Valid([]byte(o.Content)) && strings.HasPrefix(strings.TrimSpace(o.Content), "{") {
		o.Structured = json.RawMessage(o.Content)
	}
	return o
}

// errNoAnswer is a request that got no answer: the server hung or died.
var errNoAnswer = errors.New("no answer")

// CallTool sends tools/call with an explicit id and waits up to d.
func (e *Endpoint) CallTool(ctx context.Context, d time.Duration, id jsonrpc.ID, tool string, args map[string]any) (ToolOutcome, error) {
	w, err := e.StartTool(ctx, id, tool, args)
	if err != nil {
		return ToolOutcome{}, err
	}
	return e.Await(ctx, d, w)
}

func (e *Endpoint) StartTool(ctx context.Context, id jsonrpc.ID, tool string, args map[string]any) (Waiter, error) {
	w, err := e.start(ctx, id, "tools/call", map[string]any{"name": tool, "arguments": args})
	if err != nil {
		return nil, fmt.Errorf("send tools/call %s: %w%s", tool, err, e.ExitHint())
	}
	return w, nil
}

func (e *Endpoint) Await(ctx context.Context, d time.Duration, w Waiter) (ToolOutcome, error) {
	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	m, err := w.Wait(wctx)
	if err != nil {
		return ToolOutcome{}, fmt.Errorf("%w for id %s: %v%s", errNoAnswer, w.ID(), err, e.ExitHint())
	}
	return ParseOutcome(m), nil
}

// listTools returns the tools of tools/list (one page is what the checks
// need; a cursor is followed a few times).
func (e *Endpoint) ListTools(ctx context.Context, d time.Duration) ([]map[string]any, error) {
	var out []map[string]any
	cursor := ""
	for page := 0; page < 10; page++ {
		var params map[string]any
		if cursor != "" {
			params = map[string]any{"cursor": cursor}
		}
		w, err := e.start(ctx, e.NewID(), "tools/list", params)
		if err != nil {
			return nil, fmt.Errorf("send tools/list: %w%s", err, e.ExitHint())
		}
		wctx, cancel := context.WithTimeout(ctx, d)
		m, err := w.Wait(wctx)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("tools/list: %w%s", err, e.ExitHint())
		}
		var res struct {
			Result struct {
				Tools      []map[string]any `json:"tools"`
				NextCursor string           `json:"nextCursor"`
			} `json:"result"`
		}
		if m.Env.Kind != jsonrpc.Response || json.Unmarshal(m.Raw, &res) != nil {
			return nil, fmt.Errorf("tools/list answered %s", Clip(m.Raw))
		}
		out = append(out, res.Result.Tools...)
		if cursor = res.Result.NextCursor; cursor == "" {
			break
		}
	}
	return out, nil
}

// FindTool returns the tool named name.
func FindTool(tools []map[string]any, name string) (map[string]any, bool) {
	i := slices.IndexFunc(tools, func(t map[string]any) bool { return t["name"] == name })
	if i < 0 {
		return nil, false
	}
	return tools[i], true
}

func ToolNames(tools []map[string]any) []string {
	var out []string
	for _, t := range tools {
		if n, ok := t["name"].(string); ok {
			out = append(out, n)
		}
	}
	return out
}

// SchemaProps returns the property names of a tool's inputSchema.
func SchemaProps(tool map[string]any) map[string]any {
	s, _ := tool["inputSchema"].(map[string]any)
	p, _ := s["properties"].(map[string]any)
	return p
}

// Annotation reads a boolean Annotation and whether it was given.
func Annotation(tool map[string]any, name string) (bool, bool) {
	a, _ := tool["annotations"].(map[string]any)
	v, ok := a[name].(bool)
	return v, ok
}

// NewKey returns a fresh operation key: opaque, unguessable, 40 characters
// (inside the 16–128 the seed's schema asks for).
func NewKey(purpose string) string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "mcpc-" + purpose + "-" + hex.EncodeToString(b)
}

// ProbeSpec is the mutation role's probe: a tool, and the field of its
// result that counts the executions of the effect.
type ProbeSpec struct{ Tool, Field string }

func (r Role) MutationProbe() (ProbeSpec, error) {
	tool, _ := r.Probe["tool"].(string)
	field, _ := r.Probe["field"].(string)
	if tool == "" || field == "" {
		return ProbeSpec{}, errors.New("probe needs a tool and a field (e.g. {tool: ticket_stats, field: executions})")
	}
	return ProbeSpec{tool, field}, nil
}

// MutationArgs is the role's arguments with the key set.
func (r Role) MutationArgs(key string) map[string]any {
	args := map[string]any{}
	for k, v := range r.Arguments {
		args[k] = v
	}
	args[r.Key] = key
	return args
}

// readCount reads the probe's count from a probe call's outcome.
func readCount(o ToolOutcome, field string) (float64, error) {
	if o.Failed() {
		return 0, fmt.Errorf("the probe failed: %s", Clip(o.Msg.Raw))
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(o.Structured, &obj); err != nil {
		return 0, fmt.Errorf("the probe returned no JSON object (structuredContent or JSON text): %s", Clip(o.Msg.Raw))
	}
	raw, ok := obj[field]
	if !ok {
		return 0, fmt.Errorf("the probe's result has no field %q: %s", field, Clip(o.Msg.Raw))
	}
	var n float64
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, fmt.Errorf("the probe's field %q is %s, not a number", field, raw)
	}
	return n, nil
}

// Count calls the probe for key ("" asks for the total, without the key
// argument) and returns the number of executions it reports.
func (e *Endpoint) Count(ctx context.Context, d time.Duration, role Role, key string) (float64, ToolOutcome, error) {
	p, err := role.MutationProbe()
	if err != nil {
		return 0, ToolOutcome{}, err
	}
	args := map[string]any{}
	if key != "" {
		args[role.Key] = key
	}
	o, err := e.CallTool(ctx, d, e.NewID(), p.Tool, args)
	if err != nil {
		return 0, o, err
	}
	n, err := readCount(o, p.Field)
	return n, o, err
}

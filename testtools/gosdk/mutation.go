package gosdk

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxKey bounds an operation key's length.
const maxKey = 200

// WriteArgs are the keyed mutation's arguments.
type WriteArgs struct {
	OperationKey string `json:"operation_key" jsonschema:"idempotency key: one execution per key; a retry with the same key and arguments returns the stored result"`
	Note         string `json:"note" jsonschema:"what to record (the same key with another note is refused)"`
}

// WriteResult is the keyed mutation's result, stored at the commit and
// returned byte for byte to every retry.
type WriteResult struct {
	OperationKey string `json:"operation_key"`
	Note         string `json:"note"`
	// Receipt is unique per execution: two executions for one key would
	// answer two receipts.
	Receipt    string `json:"receipt"`
	ExecutedAt string `json:"executedAt"`
}

// KeyArgs name an operation by its key; optional for the stats tool.
type KeyArgs struct {
	OperationKey string `json:"operation_key,omitempty" jsonschema:"the operation key the write was called with (omit it for the total of every key)"`
}

// LookupArgs name an operation by its key.
type LookupArgs struct {
	OperationKey string `json:"operation_key" jsonschema:"the operation key the write was called with"`
}

// Stats is the stats tool's answer.
type Stats struct {
	OperationKey string `json:"operation_key,omitempty"`
	// Executions counts the commits of the write's effect: for the key, or
	// for every key.
	Executions int64 `json:"executions"`
}

// LookupResult is the lookup tool's answer.
type LookupResult struct {
	OperationKey string `json:"operation_key"`
	// Found: the store has a record for the key (claimed or committed).
	Found bool `json:"found"`
	// State is "claimed" or "committed" when found.
	State string `json:"state,omitempty"`
	// Executions counts the key's commits.
	Executions int64 `json:"executions"`
	// Result is the committed result. It is typed (not any) so that its
	// output schema is an object: the 2025 schemas of MCP want every
	// property of a tool's outputSchema to be an object schema, and `any`
	// infers the boolean schema true.
	Result *WriteResult `json:"result,omitempty"`
}

func (t *Tools) addMutation(s *mcp.Server) {
	write, stats := t.name(NameWrite), t.name(NameStats)
	mcp.AddTool(s, &mcp.Tool{
		Name: write,
		Description: "Test tool (mcp-conform): records a note once per operation_key (idempotency key) in the server's store; " +
			"a retry with the same key and note returns the stored result without running again; the same key with another note is refused.",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
	}, t.write)
	mcp.AddTool(s, &mcp.Tool{
		Name: stats,
		Description: "Test tool (mcp-conform): how many times " + write + " executed for operation_key (0 or 1 when the store works), " +
			"or for every key when none is given: a count of executions from the store.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in KeyArgs) (*mcp.CallToolResult, Stats, error) {
		n, err := t.opts.Store.Executions(ctx, in.OperationKey)
		if err != nil {
			return nil, Stats{}, err
		}
		return nil, Stats{OperationKey: in.OperationKey, Executions: n}, nil
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:        t.name(NameLookup),
		Description: "Test tool (mcp-conform): looks up what " + write + " did for an operation_key (reconcile by key): found, state, result.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in LookupArgs) (*mcp.CallToolResult, LookupResult, error) {
		if in.OperationKey == "" {
			return nil, LookupResult{}, errors.New("operation_key is required")
		}
		r, ok, err := t.opts.Store.Lookup(ctx, in.OperationKey)
		if err != nil || !ok {
			return nil, LookupResult{OperationKey: in.OperationKey}, err
		}
		out := LookupResult{OperationKey: in.OperationKey, Found: true, State: r.State, Executions: r.Executions}
		if len(r.Result) > 0 {
			var w WriteResult
			if err := json.Unmarshal(r.Result, &w); err != nil {
				return nil, LookupResult{OperationKey: in.OperationKey}, fmt.Errorf("the store's result for %q is not a %s result: %w", in.OperationKey, write, err)
			}
			out.Result = &w
		}
		return nil, out, nil
	})
}

// write is the keyed mutation: claim, then commit the effect with its
// result; a claim lost to an earlier call answers from the record.
func (t *Tools) write(ctx context.Context, _ *mcp.CallToolRequest, in WriteArgs) (*mcp.CallToolResult, any, error) {
	name := t.name(NameWrite)
	if in.OperationKey == "" || len(in.OperationKey) > maxKey {
		return nil, nil, fmt.Errorf("operation_key must be 1 to %d characters", maxKey)
	}
	// The operation must not be left half done by a cancellation: the
	// client reconciles by key, and the store decides.
	ctx = context.WithoutCancel(ctx)
	fp := Fingerprint(map[string]any{"note": in.Note})
	c, err := t.opts.Store.Claim(ctx, in.OperationKey, fp)
	if err != nil {
		return nil, nil, fmt.Errorf("claim %s: %w", in.OperationKey, err)
	}
	if !c.Won {
		r := c.Record
		switch {
		case r.Fingerprint != fp:
			t.opts.Logf("%s refused key=%s: bound to other arguments", name, in.OperationKey)
			return nil, nil, fmt.Errorf("operation_key %s was already used with other arguments; nothing was done", in.OperationKey)
		case r.State == StateCommitted:
			t.opts.Logf("%s replay key=%s", name, in.OperationKey)
			return jsonResult(r.Result), nil, nil
		default:
			t.opts.Logf("%s refused key=%s: claimed at %s, not committed", name, in.OperationKey, r.ClaimedAt.Format(time.RFC3339Nano))
			return nil, nil, fmt.Errorf("operation_key %s is being executed by another call (claimed %s, not yet committed); retry with the same key for its result",
				in.OperationKey, r.ClaimedAt.Format(time.RFC3339Nano))
		}
	}
	var receipt [8]byte
	_, _ = rand.Read(receipt[:])
	res, err := json.Marshal(WriteResult{
		OperationKey: in.OperationKey,
		Note:         in.Note,
		Receipt:      "W-" + hex.EncodeToString(receipt[:]),
		ExecutedAt:   time.Now().UTC().Format(time.RFC3339Nano),
	})
	if err != nil {
		return nil, nil, err
	}
	if err := t.opts.Store.Commit(ctx, c, res); err != nil {
		return nil, nil, fmt.Errorf("commit %s: %w", in.OperationKey, err)
	}
	t.opts.Logf("%s executed key=%s", name, in.OperationKey)
	return jsonResult(res), nil, nil
}

// jsonResult answers with stored JSON as structured content and as text.
func jsonResult(b json.RawMessage) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: b}
}

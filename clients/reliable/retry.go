package reliable

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// Class is how a call may be retried after its response was lost: the
// seeds' retry matrix (the French lesson's "Matrice de réessayer").
type Class int

// The three retry classes.
const (
	// ClassSafe is a deterministic read without side effect: retry with a
	// new JSON-RPC id.
	ClassSafe Class = iota
	// ClassConditional is a mutation with a durable idempotency key: retry
	// with the same key and identical arguments.
	ClassConditional
	// ClassUnsafe is a mutation without business deduplication: do not
	// retry automatically; reconcile first.
	ClassUnsafe
)

var classNames = [...]string{"safe", "conditional", "unsafe"}

// String names the class as the driver contract does.
func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return "unknown"
}

// ParseClass reads "safe", "conditional" or "unsafe".
func ParseClass(s string) (Class, error) {
	for i, n := range classNames {
		if n == s {
			return Class(i), nil
		}
	}
	return ClassUnsafe, fmt.Errorf("reliable: unknown retry class %q (safe, conditional, unsafe)", s)
}

// Policy says how Do may retry one call.
type Policy struct {
	Class Class
	// Key is the argument that carries the idempotency key (Conditional).
	Key string
	// MaxAttempts bounds the attempts in all; zero or one means no retry.
	MaxAttempts int
}

// Result is how Do ended: the last attempt's Outcome, how many attempts
// were made, and whether the call is left unresolved (an unsafe mutation
// whose outcome is unknown: the caller reconciles it, by key or by asking).
type Result struct {
	Outcome
	Attempts   int
	Unresolved bool
}

// Do calls method with params as Call does and, when the attempt timed out
// or its transport lost it, retries it as p allows: a Safe call with a new
// id, a Conditional one with a new id and the same key and arguments
// (params are sent unchanged), an Unsafe one never. Before each retry it
// waits Backoff(Options.ID, attempt): capped exponential backoff with
// deterministic jitter, so that many clients losing their streams at once
// do not come back at once. params["arguments"][p.Key] must hold the key of
// a Conditional call. On the Streamable HTTP transport of 2026-07-28 a lost
// stream is retried this way: "A broken response stream loses the
// in-flight request; clients MUST re-issue it as a new request with a new
// request ID" (2026-07-28 changelog, 9).
func (c *Client) Do(ctx context.Context, method string, params map[string]any, p Policy) Result {
	var (
		res     Result
		firstID jsonrpc.ID
	)
	for attempt := 0; ; attempt++ {
		var id jsonrpc.ID
		if c.opts.Defect == ReissueSameID {
			id = firstID // the defect: the retry reuses the lost request's id
		}
		out := c.call(ctx, method, params, id)
		if attempt == 0 {
			firstID = out.ID
		}
		res.Outcome, res.Attempts = out, attempt+1
		lost := out.State.TimedOut() || out.State == Failed
		if !lost || ctx.Err() != nil {
			return res
		}
		retryable := p.Class != ClassUnsafe || c.opts.Defect == BlindRetry
		if !retryable {
			res.Unresolved = true
			return res
		}
		if res.Attempts >= p.MaxAttempts {
			return res
		}
		if d := c.backoff(attempt); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return res
			}
		}
		if p.Class == ClassConditional && c.opts.Defect == NewKeyOnRetry {
			params = withFreshKey(params, p.Key, attempt+1)
		}
	}
}

// backoff is the wait before retry number attempt+1.
func (c *Client) backoff(attempt int) time.Duration {
	if c.opts.Defect == NoJitter {
		return 0
	}
	return Backoff(c.opts.ID, attempt)
}

// withFreshKey returns params with arguments[key] replaced by a new value
// (the new-key-on-retry defect).
func withFreshKey(params map[string]any, key string, n int) map[string]any {
	out := maps.Clone(params)
	args, _ := params["arguments"].(map[string]any)
	args = maps.Clone(args)
	if args == nil {
		args = map[string]any{}
	}
	old, _ := args[key].(string)
	args[key] = fmt.Sprintf("%s-retry-%d", old, n)
	out["arguments"] = args
	return out
}

package reliable

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// lossyTransport loses the first lose attempts (their stream ends without
// a response) and answers the next; it records what each attempt sent.
type lossyTransport struct {
	lose int

	mu     sync.Mutex
	params []map[string]any
	ids    []jsonrpc.ID
	n      int64
}

type lossyExchange struct {
	id   jsonrpc.ID
	lost bool
	done bool
}

func (l *lossyTransport) Start(ctx context.Context, method string, params map[string]any, token jsonrpc.ID) (Exchange, error) {
	l.mu.Lock()
	l.n++
	id := jsonrpc.IntID(l.n)
	l.mu.Unlock()
	return l.StartID(ctx, id, method, params, token)
}

func (l *lossyTransport) StartID(_ context.Context, id jsonrpc.ID, _ string, params map[string]any, _ jsonrpc.ID) (Exchange, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, _ := json.Marshal(params)
	var copied map[string]any
	_ = json.Unmarshal(b, &copied)
	l.params = append(l.params, copied)
	l.ids = append(l.ids, id)
	return &lossyExchange{id: id, lost: len(l.params) <= l.lose}, nil
}

func (e *lossyExchange) ID() jsonrpc.ID { return e.id }

func (e *lossyExchange) Next(ctx context.Context) (Event, error) {
	if e.lost || e.done {
		return Event{}, clients.ErrConnEnded
	}
	e.done = true
	return Event{Kind: EvResponse, Msg: clients.Message{Raw: []byte(`{"jsonrpc":"2.0","id":` + string(e.id) + `,"result":{}}`)}}, nil
}

func (e *lossyExchange) Cancel(context.Context, string) (Signal, error) {
	return SignalNotification, nil
}

// TestDoRetriesByClass: a lost safe or keyed call is sent again under a new
// id with the same params, after the jittered backoff; an unsafe one is
// not, and is left unresolved; the defects change exactly that.
func TestDoRetriesByClass(t *testing.T) {
	args := map[string]any{"name": "create_support_ticket", "arguments": map[string]any{"operation_key": "k-0123456789abcdef", "title": "t"}}
	for _, tc := range []struct {
		name       string
		policy     Policy
		defect     Defect
		attempts   int
		state      State
		unresolved bool
		sameParams bool
		sameID     bool
	}{
		{"safe", Policy{Class: ClassSafe, MaxAttempts: 3}, NoDefect, 2, Completed, false, true, false},
		{"conditional", Policy{Class: ClassConditional, Key: "operation_key", MaxAttempts: 3}, NoDefect, 2, Completed, false, true, false},
		{"unsafe", Policy{Class: ClassUnsafe, MaxAttempts: 3}, NoDefect, 1, Failed, true, true, false},
		{"one attempt", Policy{Class: ClassSafe, MaxAttempts: 1}, NoDefect, 1, Failed, false, true, false},
		{"new-key-on-retry", Policy{Class: ClassConditional, Key: "operation_key", MaxAttempts: 3}, NewKeyOnRetry, 2, Completed, false, false, false},
		{"blind-retry", Policy{Class: ClassUnsafe, MaxAttempts: 3}, BlindRetry, 2, Completed, false, true, false},
		{"reissue-same-id", Policy{Class: ClassSafe, MaxAttempts: 3}, ReissueSameID, 2, Completed, false, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				lt := &lossyTransport{lose: 1}
				c := New(lt, Options{ID: "retry-test", Defect: tc.defect})
				defer c.Close()
				start := time.Now()
				res := c.Do(t.Context(), "tools/call", args, tc.policy)
				if res.Attempts != tc.attempts || res.State != tc.state || res.Unresolved != tc.unresolved {
					t.Fatalf("attempts %d state %v unresolved %v, want %d %v %v", res.Attempts, res.State, res.Unresolved, tc.attempts, tc.state, tc.unresolved)
				}
				if tc.attempts < 2 {
					return
				}
				if waited := time.Since(start); waited != Backoff("retry-test", 0) {
					t.Errorf("waited %v before the retry, want Backoff(id, 0) = %v", waited, Backoff("retry-test", 0))
				}
				a, _ := json.Marshal(lt.params[0])
				b, _ := json.Marshal(lt.params[1])
				if (string(a) == string(b)) != tc.sameParams {
					t.Errorf("params %s then %s (same: want %v)", a, b, tc.sameParams)
				}
				if (lt.ids[0] == lt.ids[1]) != tc.sameID {
					t.Errorf("ids %s then %s (same: want %v)", lt.ids[0], lt.ids[1], tc.sameID)
				}
			})
		})
	}
}

// TestDoWithoutJitter: the no-jitter defect retries at once.
func TestDoWithoutJitter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lt := &lossyTransport{lose: 2}
		c := New(lt, Options{ID: "retry-test", Defect: NoJitter})
		defer c.Close()
		start := time.Now()
		res := c.Do(t.Context(), "tools/call", map[string]any{"name": "slow"}, Policy{Class: ClassSafe, MaxAttempts: 3})
		if res.Attempts != 3 || res.State != Completed || time.Since(start) != 0 {
			t.Fatalf("attempts %d state %v after %v", res.Attempts, res.State, time.Since(start))
		}
	})
}

func TestParseClass(t *testing.T) {
	for _, c := range []Class{ClassSafe, ClassConditional, ClassUnsafe} {
		if got, err := ParseClass(c.String()); err != nil || got != c {
			t.Errorf("ParseClass(%q) = %v, %v", c.String(), got, err)
		}
	}
	if _, err := ParseClass("idempotent"); err == nil {
		t.Error("an unknown class parsed")
	}
}

package faultproxy

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// TestHTTPAuthorize: the Authorize hook adds its header to every request
// sent upstream (relayed and injected), keeps the client's own, and the
// transcript hides every credential-like header value; a hook error is a
// 502 with a note, and the server never sees the request.
func TestHTTPAuthorize(t *testing.T) {
	var mu sync.Mutex
	var got []http.Header
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Clone())
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	})
	var fail atomic.Bool
	p, err := StartHTTP(context.Background(), HTTPOptions{Upstream: up.URL + "/mcp", Rules: NewRules(), Redact: []string{"X-Tenant"},
		Authorize: func(req *http.Request) error {
			if fail.Load() {
				return errors.New("token endpoint down")
			}
			if req.Header.Get("Authorization") == "" {
				req.Header.Set("Authorization", "Bearer proxy-held-token")
			}
			req.Header.Set("X-Tenant", "tenant-secret")
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	c := newHTTPClient(t)
	readAll(t, post(t, c, p.URL(), `{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	readAll(t, post(t, c, p.URL(), `{"jsonrpc":"2.0","id":2,"method":"ping"}`, "Authorization", "Bearer client-own", "X-Api-Key", "k-123456789"))
	mu.Lock()
	if len(got) != 2 || got[0].Get("Authorization") != "Bearer proxy-held-token" || got[1].Get("Authorization") != "Bearer client-own" || got[1].Get("X-Tenant") != "tenant-secret" {
		t.Errorf("upstream saw %v", got)
	}
	mu.Unlock()
	for _, e := range p.Transcript().Entries() {
		if e.HTTP == nil {
			continue
		}
		for k, vs := range e.HTTP.Header {
			for _, v := range vs {
				if strings.Contains(v, "client-own") || strings.Contains(v, "k-123456789") || strings.Contains(v, "proxy-held") {
					t.Errorf("transcript header %s: %q", k, v)
				}
			}
		}
	}
	fail.Store(true)
	resp := post(t, c, p.URL(), `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	readAll(t, resp)
	if resp.StatusCode != http.StatusBadGateway || !hasNote(p.Transcript(), "token endpoint down") {
		t.Errorf("hook error: HTTP %d, note %v", resp.StatusCode, hasNote(p.Transcript(), "token endpoint down"))
	}
	mu.Lock()
	if len(got) != 2 {
		t.Errorf("the server saw %d requests, want 2", len(got))
	}
	mu.Unlock()
}

// TestRunSeed: a run seed changes every rule's draws reproducibly; zero
// keeps the rule's own seed.
func TestRunSeed(t *testing.T) {
	r := Rule{Name: "flaky", Match: Match{Dir: ServerToClient}, Fault: Drop{}, Probability: 0.5}
	seedOf := func(run uint64) uint64 {
		rs := NewRulesSeed(run)
		if err := rs.Set(r); err != nil {
			t.Fatal(err)
		}
		return rs.List()[0].Seed
	}
	if seedOf(0) != r.EffectiveSeed() {
		t.Errorf("run seed 0 changed the rule's seed")
	}
	if seedOf(42) != seedOf(42) || seedOf(42) == seedOf(43) || seedOf(42) == r.EffectiveSeed() {
		t.Errorf("run seeds: 42→%d, 42→%d, 43→%d", seedOf(42), seedOf(42), seedOf(43))
	}
}

package draft_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/fixtures"
	"github.com/mcp-conform/mcp-conform/internal/draft"
)

func TestMain(m *testing.M) {
	if log := os.Getenv(recorderEnv); log != "" {
		os.Exit(serveRecorder(log))
	}
	os.Exit(m.Run())
}

// recorderTarget starts the recording target (this test binary, over
// real pipes) and returns it with the path of its call log.
func recorderTarget(t *testing.T) (draft.Target, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "calls.log")
	return draft.Target{Command: []string{exe}, Env: []string{recorderEnv + "=" + log}}, log
}

// readOnly names the recording target's tools annotated readOnlyHint: true.
var readOnly = []string{"wait", "item_stats", "get_item"}

// TestRunCallsOnlyWhatThePolicyAllows: against a server whose tools record
// their calls, a draft calls only read-only tools by default, none with
// --no-calls, and the candidate mutation only with --try-tools; it reads
// every page of tools/list and proposes the same roles whatever it may
// call.
func TestRunCallsOnlyWhatThePolicyAllows(t *testing.T) {
	for _, tc := range []struct {
		policy draft.Policy
		// called must all be called, at least once; anything else called
		// must be in allowed.
		called, allowed []string
	}{
		{draft.CallNone, nil, nil},
		{draft.CallReadOnly, []string{"wait", "item_stats", "get_item"}, readOnly},
		{draft.CallAll, []string{"wait", "item_stats", "get_item", "put_item"}, append([]string{"put_item"}, readOnly...)},
	} {
		t.Run(tc.policy.String(), func(t *testing.T) {
			t.Parallel()
			target, log := recorderTarget(t)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			d, err := draft.Run(ctx, target, draft.Options{Policy: tc.policy, CallTimeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			got := recorded(log)
			for _, name := range got {
				if !slices.Contains(tc.allowed, name) {
					t.Errorf("the draft called %s (calls: %v); with %s it may call only %v", name, got, tc.policy, tc.allowed)
				}
			}
			for _, name := range tc.called {
				if !slices.Contains(got, name) {
					t.Errorf("the draft never called %s (calls: %v)", name, got)
				}
			}
			if !slices.Equal(got, d.Called) {
				t.Errorf("the draft says it called %v, the server recorded %v", d.Called, got)
			}
			if len(d.Tools) != 7 {
				t.Errorf("%d tools, want the 7 of the four pages of tools/list", len(d.Tools))
			}
			want := map[string]string{"slow": "wait", "mutation": "put_item", "lookup": "get_item"}
			for role, tool := range want {
				p := d.Proposal(role)
				if p == nil || p.Tool != tool || !p.Enabled {
					t.Errorf("role %s: %v, want %s enabled", role, p, tool)
				}
			}
			if m := d.Proposal("mutation"); m != nil {
				if m.Key != "idempotency_key" || m.Probe["tool"] != "item_stats" || m.Probe["field"] != "count" {
					t.Errorf("mutation key %q probe %v, want idempotency_key and {item_stats, count}", m.Key, m.Probe)
				}
				if !slices.Contains(m.Others, "purge") {
					t.Errorf("mutation's other candidates %v lack purge", m.Others)
				}
				if tc.policy == draft.CallAll && !anyContains(m.Seen, "counted 1 execution; a replay") {
					t.Errorf("with every call allowed, the mutation was not confirmed: %q", m.Seen)
				}
			}
			if s := d.Proposal("slow"); s != nil && tc.policy != draft.CallNone && !anyContains(s.Seen, "sent 6 notifications/progress") {
				t.Errorf("slow: seen %q, want its 6 progress notifications", s.Seen)
			}
			if _, err := draft.Parse(draft.Render(d)); err != nil {
				t.Errorf("the rendered draft does not load: %v\n%s", err, draft.Render(d))
			}
		})
	}
}

func anyContains(l []string, sub string) bool {
	for _, s := range l {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// TestCallerRefuses: the caller never sends a call its policy forbids; the
// refusal is ErrNotAllowed, and the server sees nothing.
func TestCallerRefuses(t *testing.T) {
	target, log := recorderTarget(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := draft.Connect(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tools, err := draft.ListTools(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	c := draft.NewCaller(s.Conn, tools, draft.CallReadOnly, 5*time.Second)
	for _, name := range []string{"put_item", "purge", "sleepy", "note", "not-listed"} {
		if _, err := c.Call(ctx, name, nil, false); !errors.Is(err, draft.ErrNotAllowed) {
			t.Errorf("Call(%s) = %v, want ErrNotAllowed", name, err)
		}
	}
	if _, err := c.Call(ctx, "item_stats", nil, false); err != nil {
		t.Fatalf("Call(item_stats): %v", err)
	}
	if got := recorded(log); !slices.Equal(got, []string{"item_stats"}) {
		t.Errorf("the server recorded %v, want only item_stats", got)
	}
}

// headerRecorder wraps the reference server's HTTP handler and keeps the
// headers of every request it gets.
type headerRecorder struct {
	next http.Handler
	mu   sync.Mutex
	seen []http.Header
}

func (h *headerRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.seen = append(h.seen, r.Header.Clone())
	h.mu.Unlock()
	h.next.ServeHTTP(w, r)
}

// TestHeadersOnEveryRequest: the headers given to init go with every HTTP
// request it makes (negotiation, tools/list, tool calls), here to the
// reference server on a real socket, in both protocol eras.
func TestHeadersOnEveryRequest(t *testing.T) {
	for _, spec := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(spec, func(t *testing.T) {
			ref, err := fixtures.NewHTTPHandler(fixtures.HTTPOptions{Stderr: io.Discard})
			if err != nil {
				t.Fatal(err)
			}
			defer ref.(io.Closer).Close()
			rec := &headerRecorder{next: ref}
			srv := httptest.NewServer(rec)
			defer srv.Close()
			header := http.Header{"Authorization": {"Bearer t0ken"}, "X-Tenant": {"a", "b"}}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			d, err := draft.Run(ctx, draft.Target{URL: srv.URL + "/mcp", Header: header, Spec: spec}, draft.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if d.Version != spec || len(d.Called) == 0 {
				t.Fatalf("version %s, calls %v: want %s and some read-only calls", d.Version, d.Called, spec)
			}
			rec.mu.Lock()
			defer rec.mu.Unlock()
			for i, h := range rec.seen {
				if h.Get("Authorization") != "Bearer t0ken" || !slices.Equal(h.Values("X-Tenant"), []string{"a", "b"}) {
					t.Errorf("request %d of %d came without the headers: %v", i+1, len(rec.seen), h)
				}
			}
			if y := string(draft.Render(d)); strings.Contains(y, "t0ken") || !strings.Contains(y, "Authorization, X-Tenant") {
				t.Errorf("the draft must name the headers and never hold their values:\n%s", y)
			}
		})
	}
}

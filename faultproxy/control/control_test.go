package control

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/mcp-conform/mcp-conform/faultproxy"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// target is a real WebSocket link (it dials its upstream only when a
// client connects, so none is needed here).
func target(t *testing.T) *faultproxy.WebSocket {
	t.Helper()
	p, err := faultproxy.StartWebSocket(context.Background(), faultproxy.WebSocketOptions{Upstream: "ws://127.0.0.1:9/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func do(t *testing.T, h http.Handler, method, path, body string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, "http://127.0.0.1:8474"+path, strings.NewReader(body))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestRequests(t *testing.T) {
	p := target(t)
	s := New(Options{Target: p, Transport: "websocket", Validate: func(r faultproxy.Rule) error {
		if _, ok := r.Fault.(faultproxy.Crash); ok {
			return http.ErrNotSupported
		}
		return nil
	}})
	ruleFile := "rules:\n  - name: a\n    match: {dir: s2c, repliesTo: tools/call}\n    fault: {drop: true}\n  - name: b\n    fault: {delay: 150ms}\n    seed: 9\n"
	for _, tc := range []struct {
		name, method, path, body string
		code                     int
		contains                 string
	}{
		{"put a YAML rule file", "PUT", "/rules", ruleFile, 200, `"delay": "150ms"`},
		{"list", "GET", "/rules", "", 200, `"repliesTo": "tools/call"`},
		{"one", "GET", "/rules/b", "", 200, `"seed": 9`},
		{"missing", "GET", "/rules/zz", "", 404, "no rule"},
		{"add taken", "POST", "/rules", `{"name":"a","fault":{"pass":true}}`, 409, "a"},
		{"add invalid", "POST", "/rules", `{"name":"c","fault":{"drop":true,"pass":true}}`, 400, "more than one fault"},
		{"add refused by the link", "POST", "/rules", `{"name":"c","fault":{"crash":true}}`, 400, "not supported"},
		{"update other name", "PUT", "/rules/a", `{"name":"b","fault":{"pass":true}}`, 400, "body names rule"},
		{"update unnamed", "PUT", "/rules/a", `{"fault":{"pass":true}}`, 200, `"pass": true`},
		{"bad since", "GET", "/transcript?since=x", "", 400, "since"},
		{"status", "GET", "/status", "", 200, `"b": 9`},
		{"delete", "DELETE", "/rules/a", "", 204, ""},
		{"delete again", "DELETE", "/rules/a", "", 404, ""},
		{"wrong method", "PATCH", "/rules/b", "", 405, ""},
	} {
		rec := do(t, s, tc.method, tc.path, tc.body)
		if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.contains) {
			t.Errorf("%s: %d %s, want %d with %q", tc.name, rec.Code, rec.Body, tc.code, tc.contains)
		}
	}
	var l RuleList
	if err := json.Unmarshal(do(t, s, "GET", "/rules", "").Body.Bytes(), &l); err != nil || len(l.Rules) != 1 || l.Rules[0].Name != "b" {
		t.Errorf("rules at the end: %+v, %v", l, err)
	}
}

func TestTranscriptSince(t *testing.T) {
	p := target(t)
	s := New(Options{Target: p})
	p.Transcript().Note("one")
	p.Transcript().Note("two")
	rec := do(t, s, "GET", "/transcript?since=1", "")
	lines := strings.Split(strings.TrimSpace(rec.Body.String()), "\n")
	if rec.Code != 200 || rec.Header().Get(NextHeader) != "3" || len(lines) != 2 || !strings.Contains(lines[1], `"two"`) {
		t.Fatalf("since=1: %d next=%s %q", rec.Code, rec.Header().Get(NextHeader), lines)
	}
	do(t, s, "POST", "/reset", "")
	rec = do(t, s, "GET", "/transcript?since=0", "")
	if rec.Body.Len() != 0 || rec.Header().Get(NextHeader) != "3" {
		t.Fatalf("after reset: %q next=%s", rec.Body, rec.Header().Get(NextHeader))
	}
}

func TestLocalOnly(t *testing.T) {
	s := New(Options{Target: target(t)})
	for _, tc := range []struct{ host, origin string }{
		{"evil.example", ""}, {"10.0.0.1:8474", ""}, {"127.0.0.1:8474", "http://evil.example"},
	} {
		req := httptest.NewRequest("GET", "http://x/rules", nil)
		req.Host = tc.host
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code != http.StatusForbidden {
			t.Errorf("Host %s Origin %q: %d, want 403", tc.host, tc.origin, rec.Code)
		}
	}
	for _, host := range []string{"localhost:8474", "[::1]:8474", "127.0.0.1"} {
		req := httptest.NewRequest("GET", "http://x/rules", nil)
		req.Host = host
		req.Header.Set("Origin", "http://localhost:3000")
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Errorf("Host %s: %d, want 200", host, rec.Code)
		}
	}
	if err := CheckLoopback("[::1]:0"); err != nil {
		t.Error(err)
	}
	if err := CheckLoopback("example.com:80"); err == nil {
		t.Error("example.com accepted")
	}
}

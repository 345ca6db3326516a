package clients

import (
	"encoding/json"
	"maps"
	"testing"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

func TestMetaInjectionModern(t *testing.T) {
	w, p := newPair(t, WireOptions{})
	w.SetSession(Session{Version: "2026-07-28", Era: EraModern})
	ctx := testCtx(t)
	got, wait := p.receive(3, true)

	// 1. nil params: only the injected _meta.
	if _, err := w.Call(ctx, "ping", nil); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if string(r.Raw) != `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}` {
		t.Fatalf("ping = %s", r.Raw)
	}

	// 2. progress token (an int64 beyond float precision) merged with a
	// caller _meta that overrides protocolVersion and adds its own key.
	callerMeta := map[string]any{MetaProtocolVersion: "1900-01-01", "com.example/k": "v"}
	params := map[string]any{"name": "slow", "_meta": callerMeta}
	before := maps.Clone(callerMeta)
	pp := w.ProgressParams(int64(9007199254740993), params)
	if _, err := w.Call(ctx, "tools/call", pp); err != nil {
		t.Fatal(err)
	}
	r = <-got
	want := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"com.example/k":"v","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/protocolVersion":"1900-01-01","progressToken":9007199254740993},"name":"slow"}}`
	if string(r.Raw) != want {
		t.Fatalf("tools/call = %s\nwant          %s", r.Raw, want)
	}
	if !maps.Equal(callerMeta, before) || len(params) != 2 {
		t.Fatal("caller maps were modified")
	}
	if _, ok := pp["_meta"].(map[string]any)[MetaClientCapabilities]; ok {
		t.Fatal("Start modified the ProgressParams map")
	}

	// 3. string token given as a jsonrpc.ID.
	if _, err := w.Call(ctx, "tools/call", w.ProgressParams(jsonrpc.StringID("tok-1"), nil)); err != nil {
		t.Fatal(err)
	}
	r = <-got
	wait()
	if tok := r.meta()[MetaProgressToken]; tok != "tok-1" {
		t.Fatalf("token = %#v in %s", tok, r.Raw)
	}
	var env = jsonrpc.Parse(r.Raw)
	if env.ProgressToken != jsonrpc.StringID("tok-1") {
		t.Fatalf("envelope token = %s", env.ProgressToken)
	}
}

func TestNoInjectionLegacy(t *testing.T) {
	w, p := newPair(t, WireOptions{})
	w.SetSession(Session{Version: "2025-11-25", Era: EraLegacy})
	ctx := testCtx(t)
	got, wait := p.receive(2, true)
	if _, err := w.Call(ctx, "ping", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Call(ctx, "tools/call", w.ProgressParams("t", map[string]any{"name": "x"})); err != nil {
		t.Fatal(err)
	}
	wait()
	if r := string((<-got).Raw); r != `{"jsonrpc":"2.0","id":1,"method":"ping"}` {
		t.Fatalf("ping = %s", r)
	}
	if r := string((<-got).Raw); r != `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"progressToken":"t"},"name":"x"}}` {
		t.Fatalf("tools/call = %s", r)
	}
}

func TestWithMetaLeavesOddMetaAlone(t *testing.T) {
	in := map[string]any{"_meta": json.RawMessage(`"not an object"`)}
	out := withMeta(in, map[string]any{MetaProtocolVersion: "2026-07-28"})
	if _, ok := out["_meta"].(json.RawMessage); !ok {
		t.Fatalf("_meta replaced: %#v", out["_meta"])
	}
}

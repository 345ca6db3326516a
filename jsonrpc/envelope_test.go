package jsonrpc

import "testing"

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, raw string
		want      Envelope
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":"t"}}}`,
			Envelope{Kind: Request, ID: "1", Method: "tools/call", ProgressToken: `"t"`}},
		{"string id stays string", `{"jsonrpc":"2.0","id":"1","method":"ping"}`,
			Envelope{Kind: Request, ID: `"1"`, Method: "ping"}},
		{"integer token", `{"id":2,"method":"x","params":{"_meta":{"progressToken": 42}}}`,
			Envelope{Kind: Request, ID: "2", Method: "x", ProgressToken: "42"}},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			Envelope{Kind: Notification, Method: "notifications/initialized"}},
		{"progress", `{"method":"notifications/progress","params":{"progressToken":7,"progress":1}}`,
			Envelope{Kind: Notification, Method: "notifications/progress", ProgressToken: "7"}},
		{"cancelled", `{"method":"notifications/cancelled","params":{"requestId":"a b"}}`,
			Envelope{Kind: Notification, Method: "notifications/cancelled", CancelledID: `"a b"`}},
		{"response", `{"jsonrpc":"2.0","id":3,"result":{}}`, Envelope{Kind: Response, ID: "3"}},
		{"error with null id", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}`,
			Envelope{Kind: ErrorReply, ID: "null"}},
		{"batch", `[{"id":1,"method":"ping"}]`, Envelope{Kind: Batch}},
		{"garbage", `not json`, Envelope{Kind: Invalid}},
		{"truncated", `{"id":1,"meth`, Envelope{Kind: Invalid}},
		{"empty", ``, Envelope{Kind: Invalid}},
		{"no shape", `{"jsonrpc":"2.0"}`, Envelope{Kind: Invalid}},
		{"spaces in id", `{"id": { "a" : 1 }, "result": 1}`, Envelope{Kind: Response, ID: `{"a":1}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Parse([]byte(tc.raw))
			if got.Kind != tc.want.Kind || got.ID != tc.want.ID || got.Method != tc.want.Method ||
				got.ProgressToken != tc.want.ProgressToken || got.CancelledID != tc.want.CancelledID {
				t.Errorf("Parse(%s) = %+v, want %+v", tc.raw, got, tc.want)
			}
		})
	}
}

func TestErrorObject(t *testing.T) {
	env := Parse([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"nope"}}`))
	if env.Error == nil || env.Error.Code != CodeMethodNotFound || env.Error.Message != "nope" || !env.Kind.IsReply() {
		t.Fatalf("%+v", env)
	}
}

func TestIDs(t *testing.T) {
	if StringID("1") == IntID(1) {
		t.Fatal("string and integer ids must differ")
	}
	if IDFrom([]byte(" 1 ")) != IntID(1) || !ID("").IsZero() || string(StringID("x").Raw()) != `"x"` {
		t.Fatal("canonical ids")
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"id":1,"method":"x"}`, `[1]`, `{"method":"notifications/progress","params":{"progressToken":1}}`, "\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		env := Parse(b)
		if env.Kind == "" {
			t.Fatalf("no kind for %q", b)
		}
	})
}

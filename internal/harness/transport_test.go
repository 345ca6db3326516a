package harness

import (
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/protocol"
)

// Every transport mcp-conform names has a connection kind registered, and
// the manifest's validation is that kind's.
func TestEveryTransportIsRegistered(t *testing.T) {
	if got, want := RegisteredTransports(), protocol.Transports(); len(got) != len(want) {
		t.Fatalf("registered %v, want %v", got, want)
	}
	for _, name := range protocol.Transports() {
		tr, ok := transportNamed(name)
		if !ok || tr.Validate == nil || tr.Dial == nil {
			t.Errorf("%s: registered %v, with Validate and Dial", name, ok)
		}
	}
}

func TestManifestTransportValidation(t *testing.T) {
	cases := []struct {
		name string
		m    Manifest
		err  string // "" valid; else a part of the error
	}{
		{"default is stdio", Manifest{Command: []string{"srv"}}, ""},
		{"stdio without command", Manifest{Transport: "stdio"}, "stdio target needs a command"},
		{"stdio with headers", Manifest{Command: []string{"srv"}, Headers: map[string]string{"X-A": "b"}}, "not stdio"},
		{"http", Manifest{Transport: "http", URL: "http://127.0.0.1:1/mcp"}, ""},
		{"http without url", Manifest{Transport: "http"}, "http target needs a url"},
		{"websocket", Manifest{Transport: "websocket", URL: "ws://127.0.0.1:1/mcp"}, ""},
		{"websocket over http url", Manifest{Transport: "websocket", URL: "http://127.0.0.1:1/mcp"}, "ws:// or wss://"},
		{"unknown", Manifest{Transport: "carrier-pigeon"}, `unknown transport "carrier-pigeon" (stdio, http or websocket)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := c.m
			err := m.Validate()
			switch {
			case c.err == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Fatalf("Validate: %v, want an error with %q", err, c.err)
			}
			if c.err == "" && transportOf(&m).Name != m.Via() {
				t.Fatalf("transportOf(%s) = %s", m.Via(), transportOf(&m).Name)
			}
		})
	}
}

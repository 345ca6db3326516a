package cmdline

import (
	"slices"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  string
	}{
		{in: "node server.js", want: []string{"node", "server.js"}},
		{in: "  node   server.js\t--port 3000 ", want: []string{"node", "server.js", "--port", "3000"}},
		{in: `node -e 'console.log("a b")'`, want: []string{"node", "-e", `console.log("a b")`}},
		{in: `server --root "/tmp/my dir" --name 'it''s'`, want: []string{"server", "--root", "/tmp/my dir", "--name", "its"}},
		{in: `server --name "it's"`, want: []string{"server", "--name", "it's"}},
		{in: `server a\ b c`, want: []string{"server", "a b", "c"}},
		{in: `server "say \"hi\""`, want: []string{"server", `say "hi"`}},
		{in: `server '$HOME' "\$HOME"`, want: []string{"server", "$HOME", "$HOME"}},
		{in: `server --dir {tmpdir} --glob '*.json' *.go`, want: []string{"server", "--dir", "{tmpdir}", "--glob", "*.json", "*.go"}},
		{in: `server ""`, want: []string{"server", ""}},
		{in: `server '{a,b}' "~/x" a~b`, want: []string{"server", "{a,b}", "~/x", "a~b"}},
		{in: `server {a,b}`, err: "brace expansion"},
		{in: `server x{1..3}`, err: "brace expansion"},
		{in: `server ~/x`, err: "tilde expansion"},
		{in: "", want: nil},
		{in: `server --name "unterminated`, err: "unterminated quote"},
		{in: `server --name 'unterminated`, err: "unterminated quote"},
		{in: `server $HOME`, err: "parameter expansion"},
		{in: `server "$HOME/x"`, err: "parameter expansion"},
		{in: `server $(id -u)`, err: "command substitution"},
		{in: "server `id -u`", err: "command substitution"},
		{in: `server | tee log`, err: "without a shell"},
		{in: `server > log`, err: "without a shell"},
		{in: `server; other`, err: "without a shell"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := Split(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Split(%q) = %q, %v; want an error with %q", tc.in, got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Split(%q): %v", tc.in, err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Split(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

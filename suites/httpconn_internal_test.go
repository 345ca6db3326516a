package suites

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/harness"
)

// TestStartHTTPRetriesATakenPort: a server that exits because its port was
// taken (here: a wrapper that says so the first time) is started again on
// a new port, and the note says why.
func TestStartHTTPRetriesATakenPort(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	once := filepath.Join(t.TempDir(), "failed-once")
	target := &Manifest{
		Name:      "taken-port",
		Transport: "http",
		Command: []string{"sh", "-c", `if [ ! -e "$ONCE" ]; then touch "$ONCE"; ` +
			`echo "listen tcp 127.0.0.1:{port}: bind: address already in use" >&2; exit 1; fi; exec "$EXE"`},
		URL: "http://127.0.0.1:{port}/mcp",
		Env: map[string]string{
			"ONCE": once, "EXE": exe,
			fixtureEnv: "reference", fixtureHTTPEnv: "127.0.0.1:{port}",
		},
	}
	cfg := (&Config{Targets: []*Manifest{target}}).WithDefaults()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := harness.DialHTTP(ctx, cfg, target)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	defer c.Close()
	noted := false
	for _, e := range c.Proxy.Transcript().Entries() {
		noted = noted || strings.Contains(e.Text, "was taken before the server could bind it")
	}
	if !noted {
		t.Error("no note of the retry in the transcript")
	}
	if c.W.Session().Version == "" {
		t.Error("no session negotiated with the restarted server")
	}
}

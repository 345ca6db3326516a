package harness

// Server processes the harness starts for targets that listen (HTTP, WebSocket).

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcp-conform/mcp-conform/faultproxy"
)

// startTargetProcess starts the target's command, when it has one, on a
// free loopback port ({port} in command, env and url) and waits until it
// listens; it returns the process (nil without a command) and the endpoint
// URL. A target without a command must already listen.
func startTargetProcess(ctx context.Context, cfg *Config, target *Manifest, tr *faultproxy.Transcript) (*faultproxy.Process, string, error) {
	if len(target.Command) == 0 {
		return nil, target.URL, waitListening(ctx, target.URL, nil)
	}
	// A port picked free can be taken by another process before the server
	// binds it (a busy machine): a server that exits saying so is started
	// again on a new port, a few times.
	usesPort := strings.Contains(strings.Join(target.Command, " ")+" "+fmt.Sprint(target.Env), "{port}")
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, "", fmt.Errorf("pick a port: %w", err)
		}
		sub := func(s string) string { return strings.ReplaceAll(s, "{port}", port) }
		m := *target
		m.Command = nil
		for _, a := range target.Command {
			m.Command = append(m.Command, sub(a))
		}
		m.Env = map[string]string{}
		for k, v := range target.Env {
			m.Env[k] = sub(v)
		}
		endpoint := sub(target.URL)
		argv, env, err := resolveCommand(&m)
		if err != nil {
			return nil, "", err
		}
		po := faultproxy.ProcessOptions{Command: argv, Env: env, Dir: target.Dir, Transcript: tr}
		if cfg.Verbose {
			po.Tee = os.Stderr
		}
		proc, err := faultproxy.StartProcess(po)
		if err != nil {
			return nil, "", err
		}
		err = waitListening(ctx, endpoint, proc)
		if err == nil {
			return proc, endpoint, nil
		}
		proc.Close(time.Second)
		if attempt < maxPortAttempts && usesPort && portTaken(tr, proc) {
			tr.Note("port %s was taken before the server could bind it; starting it again on another port", port)
			continue
		}
		return nil, "", err
	}
}

// freePort finds a free loopback port for a server the harness starts.
// The port is free when freePort returns but only bound when the server
// starts, so it is drawn below the kernel's ephemeral range: a port the
// kernel hands to any process binding port 0 in between (other servers,
// other test runs on the machine) would otherwise be taken under the
// server, whose start then fails while the harness talks to a stranger.
func freePort() (string, error) {
	lo := ephemeralLow()
	for range 64 {
		if lo <= 11024 {
			break
		}
		port := 10000 + rand.IntN(lo-11024)
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue
		}
		_ = ln.Close()
		return strconv.Itoa(port), nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	_, port, err := net.SplitHostPort(ln.Addr().String())
	return port, err
}

// ephemeralLow is the first port of the kernel's ephemeral range (Linux;
// 32768 elsewhere or when it cannot be read).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) < 1 {
		return 32768
	}
	lo, err := strconv.Atoi(f[0])
	if err != nil {
		return 32768
	}
	return lo
}

// maxPortAttempts bounds the starts of a server whose port was taken.
const maxPortAttempts = 3

// portTaken reports whether the server exited and said that its address
// was in use.
func portTaken(tr *faultproxy.Transcript, p *faultproxy.Process) bool {
	select {
	case <-p.Exited():
	default:
		return false
	}
	// Its last output may still be on the way into the transcript.
	for deadline := time.Now().Add(500 * time.Millisecond); ; {
		for _, e := range tr.Entries() {
			if strings.Contains(strings.ToLower(e.Text), "address already in use") {
				return true
			}
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitListening waits until the endpoint accepts TCP connections, the
// process exits, or ctx ends.
func waitListening(ctx context.Context, endpoint string, p *faultproxy.Process) error {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return fmt.Errorf("target url %q: not an absolute URL", endpoint)
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), map[string]string{"https": "443"}[u.Scheme]+map[bool]string{true: "80"}[u.Scheme != "https"])
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var exited <-chan struct{}
	if p != nil {
		exited = p.Exited()
	}
	for {
		d := net.Dialer{Timeout: 200 * time.Millisecond}
		conn, err := d.DialContext(ctx, "tcp", host)
		if err == nil {
			_ = conn.Close()
			return nil
		}
		if p == nil {
			// A server the harness did not start is up or it is not.
			return fmt.Errorf("the server at %s is not reachable: %w", endpoint, err)
		}
		select {
		case <-exited:
			return fmt.Errorf("the server exited before listening on %s: %v", host, p.ExitErr())
		case <-ctx.Done():
			return fmt.Errorf("the server did not listen on %s in time (last attempt: %v): %w", host, err, ctx.Err())
		case <-tick.C:
		}
	}
}

// exitsWithin reports whether p exits within d.
func exitsWithin(p *faultproxy.Process, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.Exited():
		return true
	case <-t.C:
		return false
	}
}

// CommandResolver turns a manifest's command and environment into the argv
// and environment of the process to start. The default keeps the command
// and appends the manifest's env; the binary that embeds the reference
// server sets one that starts itself for `mcp-conform fixture …`
// (SetCommandResolver).
type CommandResolver func(m *Manifest) (argv, env []string, err error)

var (
	resolverMu sync.Mutex
	resolver   CommandResolver = plainCommand
)

// SetCommandResolver replaces how target commands are resolved (nil
// restores the default). Call it before a run.
func SetCommandResolver(r CommandResolver) {
	resolverMu.Lock()
	defer resolverMu.Unlock()
	if r == nil {
		r = plainCommand
	}
	resolver = r
}

func resolveCommand(m *Manifest) ([]string, []string, error) {
	resolverMu.Lock()
	r := resolver
	resolverMu.Unlock()
	return r(m)
}

// plainCommand is the manifest's command as written, with its env.
func plainCommand(m *Manifest) ([]string, []string, error) {
	var env []string
	for k, v := range m.Env {
		env = append(env, k+"="+v)
	}
	return m.Command, env, nil
}

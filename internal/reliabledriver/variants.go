package reliabledriver

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// Variant is a *correct* client shaped unlike the reliable client's
// default, the way other real clients are: slower to start, slower to
// answer, heavier on the CPU. Each must pass every check, so a variant
// that fails one shows a verdict that depended on how our own client
// happens to behave (the principle issue 11 set for servers). Unlike a
// Defect, a variant breaks no clause.
type Variant string

// The variants (names are stable: tests use them).
const (
	// LatePingAnswer answers the server's ping 300 ms after it came, and
	// abandons an answer not yet sent when the client shuts down (as an
	// SDK whose close aborts what is in flight) — a client that shuts
	// down as soon as its calls end.
	LatePingAnswer Variant = "late-ping-answer"
	// SlowFirstRequest sends its first request 600 ms after the client
	// made it, its clocks running (a node client's first fetch loads its
	// HTTP stack: 190-316 ms at load 13, more under contention).
	SlowFirstRequest Variant = "slow-first-request"
	// StaggeredStart starts herd-N N × 700 ms late (eight processes
	// starting on a loaded machine).
	StaggeredStart Variant = "staggered-start"
	// CostlyReconnect spends 60 ms of CPU before each reconnection (a GET,
	// or a call sent again) leaves, as building a node client's request
	// does: eight of them at the same instant on two cores take 240 ms to
	// get through.
	CostlyReconnect Variant = "costly-reconnect"
	// CloseStreamsOnExit closes every response stream still open when the
	// client shuts down, just before it exits (as an SDK's close aborts
	// its fetches), where the default leaves them to the process's end.
	CloseStreamsOnExit Variant = "close-streams-on-exit"
)

// VariantInfo describes one variant.
type VariantInfo struct {
	Name        Variant
	Description string
}

var variants = []VariantInfo{
	{LatePingAnswer, "answers a server ping 300 ms late and abandons unsent answers when it shuts down (right after its calls end)"},
	{SlowFirstRequest, "its first request leaves 600 ms after it was made, its clocks running (a node client's first fetch)"},
	{StaggeredStart, "herd-N starts N × 700 ms late (a herd of processes starting on a loaded machine)"},
	{CostlyReconnect, "spends 60 ms of CPU before each reconnection leaves (a node client building its request)"},
	{CloseStreamsOnExit, "closes the response streams still open when it shuts down, just before it exits (an SDK's close aborting its fetches)"},
}

// Variants returns the table of variants.
func Variants() []VariantInfo { return slices.Clone(variants) }

// parseVariants reads a comma-separated list of variant names.
func parseVariants(s string) (map[Variant]bool, error) {
	out := map[Variant]bool{}
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !slices.ContainsFunc(variants, func(v VariantInfo) bool { return string(v.Name) == name }) {
			return nil, fmt.Errorf("unknown variant %q (see --list)", name)
		}
		out[Variant(name)] = true
	}
	return out, nil
}

// Timings of the variants.
const (
	latePing        = 300 * time.Millisecond
	slowFirst       = 600 * time.Millisecond
	staggerStep     = 700 * time.Millisecond
	reconnectCPU    = 60 * time.Millisecond
	slowFirstWrites = 1
)

// startDelay is how long the staggered-start variant waits before the
// client connects.
func startDelay(clientID string) time.Duration {
	i := strings.LastIndexByte(clientID, '-')
	n, err := strconv.Atoi(clientID[i+1:])
	if i < 0 || err != nil {
		return 0
	}
	return time.Duration(n) * staggerStep
}

// burn spends d of CPU (not sleep: the point is the contention).
func burn(d time.Duration) {
	end := time.Now().Add(d)
	x := uint64(1)
	for time.Now().Before(end) {
		for i := 0; i < 1000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	_ = x
}

// variantTransport shapes the HTTP client's requests: the first one slow
// (SlowFirstRequest), each reconnection costly (CostlyReconnect).
type variantTransport struct {
	base http.RoundTripper
	on   map[Variant]bool

	mu    sync.Mutex
	sent  int
	calls map[string]bool // tools/call tags already sent
	open  map[*trackedBody]bool
}

// trackedBody is a response body closeAll can close.
type trackedBody struct {
	io.ReadCloser
	t    *variantTransport
	once sync.Once
}

func (b *trackedBody) Close() error {
	b.once.Do(func() {
		b.t.mu.Lock()
		delete(b.t.open, b)
		b.t.mu.Unlock()
	})
	return b.ReadCloser.Close()
}

// closeAll closes every response body still open (CloseStreamsOnExit).
func (t *variantTransport) closeAll() {
	t.mu.Lock()
	var bs []*trackedBody
	for b := range t.open {
		bs = append(bs, b)
	}
	t.mu.Unlock()
	for _, b := range bs {
		_ = b.Close()
	}
}

func (t *variantTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.mu.Lock()
	t.sent++
	first := t.sent == 1
	t.mu.Unlock()
	if first && t.on[SlowFirstRequest] {
		tm := time.NewTimer(slowFirst)
		select {
		case <-tm.C:
		case <-r.Context().Done():
			tm.Stop()
			return nil, r.Context().Err()
		}
	}
	if t.on[CostlyReconnect] && t.reconnection(r) {
		burn(reconnectCPU)
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil || !t.on[CloseStreamsOnExit] {
		return resp, err
	}
	b := &trackedBody{ReadCloser: resp.Body, t: t}
	t.mu.Lock()
	if t.open == nil {
		t.open = map[*trackedBody]bool{}
	}
	t.open[b] = true
	t.mu.Unlock()
	resp.Body = b
	return resp, nil
}

// reconnection reports whether r is a GET (a resumption) or a tools/call
// whose arguments were sent before (a re-issue).
func (t *variantTransport) reconnection(r *http.Request) bool {
	if r.Method == http.MethodGet {
		return true
	}
	if r.Method != http.MethodPost || r.GetBody == nil {
		return false
	}
	body, err := r.GetBody()
	if err != nil {
		return false
	}
	b, _ := io.ReadAll(body)
	_ = body.Close()
	env := jsonrpc.Parse(bytes.TrimSpace(b))
	if env.Method != "tools/call" {
		return false
	}
	key := string(env.Params)
	if i := strings.Index(key, `"arguments"`); i >= 0 {
		key = key[i:]
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.calls == nil {
		t.calls = map[string]bool{}
	}
	again := t.calls[key]
	t.calls[key] = true
	return again
}

// slowWriter delays the first write to a stdio server (SlowFirstRequest).
type slowWriter struct {
	io.ReadWriteCloser
	mu     sync.Mutex
	writes int
}

func (w *slowWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.writes++
	first := w.writes <= slowFirstWrites
	w.mu.Unlock()
	if first {
		time.Sleep(slowFirst)
	}
	return w.ReadWriteCloser.Write(p)
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

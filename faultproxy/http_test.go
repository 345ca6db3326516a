package faultproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/sse"
)

// The HTTP tests run real HTTP over loopback: an httptest upstream written
// in the test (a small scripted MCP-ish server), the proxy in front of it,
// and a plain net/http client. Upstream handlers never block unbounded:
// they wait on a channel, their request's context or `wait`, whichever
// comes first, so a failing test cannot hang httptest.Server.Close.

// ---------------------------------------------------------------------
// Faults.

// progressUpstream answers every POST with an event stream of the given
// notifications, then the response to id 1, then ends.
func progressUpstream(t testing.TB, methods ...string) *httptest.Server {
	return newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		sseHead(w)
		for _, m := range methods {
			sendEvent(w, note(m))
		}
		sendEvent(w, sse.Encode(sse.Event{Data: `{"jsonrpc":"2.0","id":1,"result":{}}`, HasData: true}))
	})
}

func TestHTTPDropEvent(t *testing.T) {
	up := progressUpstream(t, "a", "b", "c")
	p := startHTTPProxy(t, up, Rule{Name: "lose-b", Match: Match{Dir: ServerToClient, Method: "b"}, Fault: Drop{}})
	resp := postCall(t, p)
	es := readEvents(resp.Body)
	got := methodsOf(es.next(t), es.next(t), es.next(t))
	if strings.Join(got, ",") != "a,c," {
		t.Fatalf("events %q, want a, c and the response", got)
	}
	if err := es.end(t); !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	wantFault(t, p.Transcript(), "lose-b", "drop")
}

func TestHTTPDropJSONResponse(t *testing.T) {
	var calls atomic.Int32
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":5,"result":{"done":true}}`)
	})
	p := startHTTPProxy(t, up, Rule{Name: "lose", Match: Match{Dir: ServerToClient, Kind: jsonrpc.Response}, Fault: Drop{}})
	resp := post(t, newHTTPClient(t), p.URL(), `{"jsonrpc":"2.0","id":5,"method":"tools/call"}`)
	body := readAll(t, resp)
	// The server answered; the client gets an event stream that ends with
	// no event: the response was lost in transit.
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" || len(body) != 0 {
		t.Fatalf("client got %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	if calls.Load() != 1 {
		t.Fatalf("upstream called %d times", calls.Load())
	}
	if !hasFault(p.Transcript(), "lose", "drop") || !hasNote(p.Transcript(), "response lost in transit") {
		t.Fatal("drop not recorded")
	}
}

func TestHTTPDropClientMessages(t *testing.T) {
	var calls atomic.Int32
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { calls.Add(1) })
	p := startHTTPProxy(t, up, Rule{Name: "lose", Match: Match{Dir: ClientToServer}, Fault: Drop{}})
	c := newHTTPClient(t)
	// A lost request: an event stream that ends with no event.
	resp := post(t, c, p.URL(), `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`)
	if b := readAll(t, resp); resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" || len(b) != 0 {
		t.Fatalf("lost request answered %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	// A lost notification: 202, as if accepted.
	resp = post(t, c, p.URL(), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
	if readAll(t, resp); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("lost notification answered %d", resp.StatusCode)
	}
	if calls.Load() != 0 {
		t.Fatalf("upstream saw %d requests", calls.Load())
	}
}

func TestHTTPDelayEvent(t *testing.T) {
	const d = 300 * time.Millisecond
	up := progressUpstream(t, "a", "b", "c")
	p := startHTTPProxy(t, up, Rule{Name: "late-a", Match: Match{Dir: ServerToClient, Method: "a"}, Fault: Delay{For: d}})
	start := time.Now()
	resp := postCall(t, p)
	es := readEvents(resp.Body)
	got := methodsOf(es.next(t), es.next(t), es.next(t), es.next(t))
	if strings.Join(got, ",") != "b,c,,a" {
		t.Fatalf("events %q: the delayed event should arrive last", got)
	}
	if el := time.Since(start); el < d {
		t.Fatalf("delayed event arrived after %s", el)
	}
	if err := es.end(t); !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	wantFault(t, p.Transcript(), "late-a", "release")
}

func TestHTTPDelayClientPost(t *testing.T) {
	const d = 250 * time.Millisecond
	arrived := make(chan time.Time, 1)
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		arrived <- time.Now()
		w.WriteHeader(http.StatusAccepted)
	})
	p := startHTTPProxy(t, up, Rule{Name: "slow", Match: Match{Dir: ClientToServer, Method: "notifications/x"}, Fault: Delay{For: d}})
	start := time.Now()
	resp := post(t, newHTTPClient(t), p.URL(), `{"jsonrpc":"2.0","method":"notifications/x"}`)
	readAll(t, resp)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if at := <-arrived; at.Sub(start) < d {
		t.Fatalf("upstream got the POST after %s, want ≥ %s", at.Sub(start), d)
	}
}

func TestHTTPHoldPostUntilEventOnAnotherStream(t *testing.T) {
	// The client's cancellation (a POST) is held until the event "go" has
	// passed on the standalone GET stream: the upstream must see them in
	// that order, whatever the timing.
	var mu sync.Mutex
	var order []string
	log := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	sendGo := make(chan struct{})
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			sseHead(w)
			sendEvent(w, note("hello"))
			if !waitOn(r, sendGo) {
				return
			}
			log("go sent")
			sendEvent(w, note("go"))
			<-r.Context().Done()
			return
		}
		log("post received")
		w.WriteHeader(http.StatusAccepted)
	})
	p := startHTTPProxy(t, up, Rule{
		Name:  "late-cancel",
		Match: Match{Dir: ClientToServer, Method: "notifications/cancelled"},
		Fault: HoldUntil{Until: Match{Dir: ServerToClient, Method: "go"}},
	})
	c := newHTTPClient(t)
	req, _ := http.NewRequest(http.MethodGet, p.URL(), nil)
	req.Header.Set("Accept", "text/event-stream")
	gresp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	es := readEvents(gresp.Body)
	es.next(t) // hello

	posted := make(chan *http.Response, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, p.URL(), strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`))
		resp, err := c.Do(req)
		if err != nil {
			posted <- nil
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		posted <- resp
	}()
	waitTranscript(t, p.Transcript(), "the hold", faultEntry("late-cancel", "hold"))
	mu.Lock()
	early := slices.Clone(order)
	mu.Unlock()
	if len(early) != 0 {
		t.Fatalf("upstream saw %v while the POST was held", early)
	}
	close(sendGo)
	if got := methodsOf(es.next(t)); got[0] != "go" {
		t.Fatalf("GET stream event %v", got)
	}
	select {
	case resp := <-posted:
		if resp == nil || resp.StatusCode != http.StatusAccepted {
			t.Fatalf("held POST answered %v", resp)
		}
	case <-time.After(wait):
		t.Fatal("held POST never answered")
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(order, ",") != "go sent,post received" {
		t.Fatalf("upstream order %v", order)
	}
	wantFault(t, p.Transcript(), "late-cancel", "release")
	gresp.Body.Close()
}

func TestHTTPHoldEventUntilLaterEvent(t *testing.T) {
	up := progressUpstream(t, "first", "second", "third")
	p := startHTTPProxy(t, up, swapFirstAfterSecond)
	resp := postCall(t, p)
	es := readEvents(resp.Body)
	got := methodsOf(es.next(t), es.next(t), es.next(t), es.next(t))
	// The released event may be overtaken by later ones too, but never
	// comes before its trigger.
	if got[0] != "second" || slices.Index(got, "first") < 1 || len(slices.Compact(slices.Sorted(slices.Values(got)))) != 4 {
		t.Fatalf("events %q, want second first and the held event after it", got)
	}
	if err := es.end(t); !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
}

func TestHTTPDuplicatePost(t *testing.T) {
	var calls atomic.Int32
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"result":{"n":%d}}`, n)
	})
	p := startHTTPProxy(t, up, Rule{Name: "twice", Match: Match{Dir: ClientToServer, Method: "tools/call"}, Fault: Duplicate{}})
	resp := postCall(t, p)
	if b := readAll(t, resp); string(b) != `{"jsonrpc":"2.0","id":1,"result":{"n":1}}` {
		t.Fatalf("client got %q, want the first answer only", b)
	}
	if calls.Load() != 2 {
		t.Fatalf("upstream saw the POST %d times, want 2", calls.Load())
	}
	if !hasNote(p.Transcript(), "answer to the duplicate") {
		t.Fatal("the duplicate's answer was not recorded")
	}
}

func TestHTTPInjectTowardClient(t *testing.T) {
	const extra = `{"jsonrpc":"2.0","method":"notifications/injected"}`
	up := progressUpstream(t, "a", "b")
	p := startHTTPProxy(t, up, Rule{Name: "add", Match: Match{Dir: ServerToClient, Method: "a"}, Fault: Inject{Raw: []byte(extra)}})
	resp := postCall(t, p)
	es := readEvents(resp.Body)
	a, inj, b := es.next(t), es.next(t), es.next(t)
	if got := methodsOf(a, inj, b); strings.Join(got, ",") != "a,notifications/injected,b" {
		t.Fatalf("events %q", got)
	}
	if string(inj.Raw) != "data: "+extra+"\n\n" {
		t.Fatalf("injected event %q", inj.Raw)
	}
	es.next(t)
	if err := es.end(t); !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
}

func TestHTTPInjectOnRequestStream(t *testing.T) {
	// Matched on the client's request, a synthetic server message goes out
	// as the first event of that request's response stream, after the
	// stream's head.
	const extra = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}`
	up := progressUpstream(t, "a")
	p := startHTTPProxy(t, up, Rule{Name: "early", Match: Match{Dir: ClientToServer, Method: "tools/call"},
		Fault: Inject{Dir: ServerToClient, Raw: []byte(extra), Before: true}})
	resp := postCall(t, p)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	es := readEvents(resp.Body)
	if got := methodsOf(es.next(t), es.next(t), es.next(t)); strings.Join(got, ",") != "notifications/message,a," {
		t.Fatalf("events %q", got)
	}
	if err := es.end(t); !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}

	// Replacing the request instead: the server never sees it, and the
	// client's stream carries only the synthetic answer.
	var calls atomic.Int32
	up2 := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { calls.Add(1) })
	const fake = `{"jsonrpc":"2.0","id":2,"result":{"fake":true}}`
	p2 := startHTTPProxy(t, up2, Rule{Name: "fake", Match: Match{Dir: ClientToServer, Method: "tools/call"},
		Fault: Inject{Dir: ServerToClient, Raw: []byte(fake), Replace: true}})
	resp = post(t, newHTTPClient(t), p2.URL(), `{"jsonrpc":"2.0","id":2,"method":"tools/call"}`)
	if b := readAll(t, resp); string(b) != "data: "+fake+"\n\n" || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("client got %q %q", resp.Header.Get("Content-Type"), b)
	}
	if calls.Load() != 0 {
		t.Fatal("the replaced request reached the server")
	}
}

func TestHTTPInjectTowardServer(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, r.Header.Get("Mcp-Session-Id")+" "+jsonrpc.Parse(b).Method)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	})
	const extra = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`
	p := startHTTPProxy(t, up, Rule{Name: "add", Match: Match{Dir: ClientToServer, Method: "tools/call"}, Fault: Inject{Raw: []byte(extra)}})
	resp := post(t, newHTTPClient(t), p.URL(), `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, "Mcp-Session-Id", "s1")
	if b := readAll(t, resp); string(b) != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Fatalf("client got %q", b)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(seen, ",") != "s1 tools/call,s1 notifications/cancelled" {
		t.Fatalf("upstream saw %q", seen)
	}
	if !hasNote(p.Transcript(), "answer to the injected message") {
		t.Fatal("injected message's answer not recorded")
	}
}

func TestParseHTTPRules(t *testing.T) {
	rules, err := ParseRules([]byte(`
rules:
  - name: cut-progress
    match: {dir: s2c, method: notifications/progress}
    nth: 2
    fault: {cut: true, deliver: true}
  - name: rst
    match: {dir: s2c, httpMethod: GET}
    fault: {reset: true}
  - name: nginx
    match: {dir: s2c, comment: true}
    times: 1
    fault: {buffer: 4096}
  - name: nginx-all
    match: {dir: s2c}
    fault: {buffer: 0}
  - name: slow
    match: {dir: s2c}
    fault: {throttle: 2000}
  - name: expired
    match: {dir: c2s, method: tools/call}
    fault: {status: 404, body: '{"error":"no session"}'}
  - name: accepted
    match: {dir: c2s}
    fault: {status: 202}
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 7 {
		t.Fatalf("%d rules", len(rules))
	}
	if c, ok := rules[0].Fault.(Cut); !ok || !c.Deliver || rules[0].Nth != 2 {
		t.Errorf("rule 0: %+v %+v", rules[0], rules[0].Fault)
	}
	if _, ok := rules[1].Fault.(Reset); !ok || rules[1].Match.HTTPMethod != "GET" {
		t.Errorf("rule 1: %+v", rules[1])
	}
	if b, ok := rules[2].Fault.(Buffer); !ok || b.Bytes != 4096 || !rules[2].Match.Comment || rules[2].Times != 1 {
		t.Errorf("rule 2: %+v", rules[2])
	}
	if b, ok := rules[3].Fault.(Buffer); !ok || b.Bytes != 0 {
		t.Errorf("rule 3: %+v", rules[3].Fault)
	}
	if th, ok := rules[4].Fault.(Throttle); !ok || th.BytesPerSecond != 2000 {
		t.Errorf("rule 4: %+v", rules[4].Fault)
	}
	if s, ok := rules[5].Fault.(Status); !ok || s.Code != 404 || string(s.Body) != `{"error":"no session"}` {
		t.Errorf("rule 5: %+v", rules[5].Fault)
	}
	if s, ok := rules[6].Fault.(Status); !ok || s.Code != 202 || len(s.Body) != 0 {
		t.Errorf("rule 6: %+v", rules[6].Fault)
	}
	for name, doc := range map[string]string{
		"neg buffer":   "rules: [{name: a, fault: {buffer: -1}}]",
		"neg throttle": "rules: [{name: a, fault: {throttle: -5}}]",
		"low status":   "rules: [{name: a, fault: {status: 99}}]",
		"high status":  "rules: [{name: a, fault: {status: 600}}]",
		"two faults":   "rules: [{name: a, fault: {cut: true, reset: true}}]",
		"cut typo":     "rules: [{name: a, fault: {cut: true, delivr: true}}]",
		"buffer text":  "rules: [{name: a, fault: {buffer: lots}}]",
	} {
		if _, err := ParseRules([]byte(doc)); err == nil {
			t.Errorf("%s: accepted %q", name, doc)
		} else if !strings.Contains(err.Error(), "rule file") {
			t.Errorf("%s: error lacks context: %v", name, err)
		}
	}
}

// ---------------------------------------------------------------------
// Lifetime.

func TestHTTPCloseWithOpenStreamsAndHeldMessages(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			sseHead(w)
			sendEvent(w, note("hello"))
			<-r.Context().Done() // until the proxy goes
			return
		}
		w.WriteHeader(http.StatusAccepted)
	})
	rs := NewRules()
	_ = rs.Set(Rule{Name: "forever", Match: Match{Dir: ClientToServer, HTTPMethod: http.MethodPost},
		Fault: HoldUntil{Until: Match{Method: "never"}, Max: time.Minute}})
	p, err := StartHTTP(context.Background(), HTTPOptions{Upstream: up.URL + "/mcp", Rules: rs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	c := newHTTPClient(t)
	var streams []*evStream
	for range 3 {
		req, _ := http.NewRequest(http.MethodGet, p.URL(), nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		es := readEvents(resp.Body)
		es.next(t)
		streams = append(streams, es)
	}
	posted := make(chan error, 2)
	for range 2 {
		go func() {
			resp, err := c.Post(p.URL(), "application/json", strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/x"}`))
			if err == nil {
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			posted <- err
		}()
	}
	waitTranscript(t, p.Transcript(), "two held POSTs", func(es []Entry) bool {
		n := 0
		for _, e := range es {
			if e.Kind == EntryFault && e.Fault == "hold" {
				n++
			}
		}
		return n == 2
	})
	start := time.Now()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("Close took %s", el)
	}
	for _, es := range streams {
		es.end(t) // ended, one way or another
	}
	for range 2 {
		select {
		case <-posted:
		case <-time.After(wait):
			t.Fatal("a held POST was left hanging after Close")
		}
	}
	if hasNote(p.Transcript(), "did not drain") {
		t.Fatal("handlers did not drain")
	}
	// goleak (TestMain) checks that nothing the proxy started outlives it.
}

func TestHTTPCloseReleasesUpstreamConnections(t *testing.T) {
	// The upstream outlives the proxy (as a real server does): Close must
	// not leave the proxy's idle keep-alive connections to it open, each
	// with its goroutines on both sides.
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	})
	before := goleak.IgnoreCurrent()
	p, err := StartHTTP(context.Background(), HTTPOptions{Upstream: up.URL + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{DisableCompression: true}
	c := &http.Client{Transport: tr, Timeout: wait}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			resp, err := c.Post(p.URL(), "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	tr.CloseIdleConnections()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := goleak.Find(before); err != nil {
		t.Fatalf("after Close: %v", err)
	}
}

package faultproxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// wsFrame is one data frame: its type and bytes.
type wsFrame struct {
	mt   int
	data []byte
}

func (f wsFrame) String() string { return fmt.Sprintf("%d:%q", f.mt, f.data) }

// wsUpstream is a real WebSocket server: on each connection it runs serve.
func wsUpstream(t *testing.T, serve func(c *websocket.Conn)) *httptest.Server {
	t.Helper()
	var wg sync.WaitGroup
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		wg.Add(1)
		defer wg.Done()
		defer c.Close()
		serve(c)
	}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		wg.Wait()
	})
	return srv
}

func startWSProxy(t *testing.T, upstream string, rules ...Rule) *WebSocket {
	t.Helper()
	rs := NewRules()
	if err := rs.Set(rules...); err != nil {
		t.Fatal(err)
	}
	p, err := StartWebSocket(context.Background(), WebSocketOptions{Upstream: "ws" + strings.TrimPrefix(upstream, "http") + "/mcp", Rules: rs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func dial(t *testing.T, url string) *websocket.Conn {
	t.Helper()
	c, _, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	return c
}

// randomFrames draws n frames: valid JSON-RPC, text that is not JSON (with
// newlines, empty), and binary frames of arbitrary bytes.
func randomFrames(r *rand.Rand, n int, who string) []wsFrame {
	out := make([]wsFrame, n)
	for i := range out {
		switch r.IntN(5) {
		case 0:
			out[i] = wsFrame{websocket.TextMessage, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"%s/x","params":{"n":%d}}`, i, who, r.Int())}
		case 1:
			out[i] = wsFrame{websocket.TextMessage, fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"%s","progress":%d}}`, who, i)}
		case 2:
			out[i] = wsFrame{websocket.TextMessage, []byte(strings.Repeat("not json\n{", r.IntN(4)))}
		case 3:
			b := make([]byte, r.IntN(300))
			for j := range b {
				b[j] = byte(r.Uint32())
			}
			out[i] = wsFrame{websocket.BinaryMessage, b}
		default:
			out[i] = wsFrame{websocket.TextMessage, bytes.Repeat([]byte("é"), r.IntN(40000))}
		}
	}
	return out
}

// wsExchange writes send on c while reading want frames from it.
func wsExchange(c *websocket.Conn, send []wsFrame, n int) ([]wsFrame, error) {
	werr := make(chan error, 1)
	go func() {
		for _, f := range send {
			if err := c.WriteMessage(f.mt, f.data); err != nil {
				werr <- err
				return
			}
		}
		werr <- nil
	}()
	var got []wsFrame
	for len(got) < n {
		mt, data, err := c.ReadMessage()
		if err != nil {
			return got, err
		}
		got = append(got, wsFrame{mt, data})
	}
	return got, <-werr
}

// TestWebSocketTransparent is a property test: with no rule, random frames
// (valid and invalid JSON-RPC, text and binary, empty and 80 KB) sent both
// ways at once arrive byte-identical, as the same frame type, in order; a
// close code passes through; the transcript has every frame.
func TestWebSocketTransparent(t *testing.T) {
	for seed := range uint64(5) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 7))
			toServer, toClient := randomFrames(r, 40, "c"), randomFrames(r, 40, "s")
			got := make(chan []wsFrame, 1)
			upstream := wsUpstream(t, func(c *websocket.Conn) {
				frames, err := wsExchange(c, toClient, len(toServer))
				if err != nil {
					t.Errorf("upstream: %v", err)
				}
				got <- frames
				_ = c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(4001, "bye"), time.Now().Add(time.Second))
				_, _, _ = c.ReadMessage() // the client's answering close
			})
			p := startWSProxy(t, upstream.URL)
			c := dial(t, p.URL())
			atClient, err := wsExchange(c, toServer, len(toClient))
			if err != nil {
				t.Fatal(err)
			}
			atServer := <-got
			for name, pair := range map[string][2][]wsFrame{"to server": {toServer, atServer}, "to client": {toClient, atClient}} {
				if len(pair[0]) != len(pair[1]) {
					t.Fatalf("%s: %d frames sent, %d arrived", name, len(pair[0]), len(pair[1]))
				}
				for i := range pair[0] {
					if pair[0][i].mt != pair[1][i].mt || !bytes.Equal(pair[0][i].data, pair[1][i].data) {
						t.Fatalf("%s frame %d: sent %.80s, got %.80s", name, i, pair[0][i], pair[1][i])
					}
				}
			}
			_, _, err = c.ReadMessage()
			var ce *websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != 4001 || ce.Text != "bye" {
				t.Fatalf("after the frames: %v, want the server's close 4001 bye", err)
			}
			msgs := 0
			for _, e := range p.Transcript().Entries() {
				if e.Kind == EntryMessage {
					msgs++
					if e.Stream != "WS#1" {
						t.Errorf("message entry on stream %q", e.Stream)
					}
				}
			}
			if msgs != 80 {
				t.Errorf("transcript has %d messages, want 80", msgs)
			}
		})
	}
}

// echoUpstream answers each frame with itself, as a JSON-RPC server would
// answer a request with the same id.
func echoUpstream(t *testing.T) *httptest.Server {
	return wsUpstream(t, func(c *websocket.Conn) {
		for {
			mt, data, err := c.ReadMessage()
			if err != nil {
				return
			}
			if c.WriteMessage(mt, data) != nil {
				return
			}
		}
	})
}

// TestWebSocketFaults: rules act on frames as on lines — a drop swallows
// one response (recorded), hold-until releases a frame after its trigger,
// inject adds a synthetic frame.
func TestWebSocketFaults(t *testing.T) {
	up := echoUpstream(t)
	p := startWSProxy(t, up.URL,
		Rule{Name: "lose-2", Match: Match{Dir: ServerToClient, ID: "2"}, Fault: Drop{}},
		Rule{Name: "late-3", Match: Match{Dir: ClientToServer, ID: "3"}, Fault: HoldUntil{Until: Match{Dir: ServerToClient, ID: "4"}, Max: 5 * time.Second}},
		Rule{Name: "extra", Match: Match{Dir: ServerToClient, ID: "4"}, Fault: Inject{Raw: []byte(`{"jsonrpc":"2.0","method":"injected"}`)}},
	)
	c := dial(t, p.URL())
	for i := 1; i <= 4; i++ {
		if err := c.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"m"}`, i)); err != nil {
			t.Fatal(err)
		}
	}
	var ids []string
	for len(ids) < 4 {
		_, data, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("after %v: %v", ids, err)
		}
		env := (&Message{Raw: data}).Envelope()
		if env.Method == "injected" {
			ids = append(ids, "inj")
			continue
		}
		ids = append(ids, string(env.ID))
	}
	if got := strings.Join(ids, ","); got != "1,4,inj,3" {
		t.Errorf("client got %s, want 1,4,inj,3 (2 dropped, 3 held until 4 passed)", got)
	}
	faults := map[string]string{}
	for _, e := range p.Transcript().Entries() {
		if e.Kind == EntryFault {
			faults[e.Rule] += e.Fault + " "
		}
	}
	if faults["lose-2"] != "drop " || !strings.Contains(faults["late-3"], "release") || faults["extra"] != "inject " {
		t.Errorf("transcript faults %v", faults)
	}
}

// TestWebSocketUpstreamDown: a refused upstream handshake is a 502 to the
// client and a transcript note, not a hang.
func TestWebSocketUpstreamDown(t *testing.T) {
	up := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(up.Close)
	p := startWSProxy(t, up.URL)
	_, resp, err := websocket.DefaultDialer.Dial(p.URL(), nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("dial through a proxy whose upstream is no WebSocket: %v %v", resp, err)
	}
	resp.Body.Close()
	if !strings.Contains(fmt.Sprint(p.Transcript().Entries()), "refused the WebSocket") {
		t.Errorf("transcript lacks the refusal")
	}
}

package clients

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

func TestNewIDFreshIntegers(t *testing.T) {
	w, _ := newPair(t, WireOptions{})
	for i, want := range []string{"1", "2", "3"} {
		if got := w.NewID(); got.String() != want {
			t.Fatalf("NewID #%d = %s, want %s", i, got, want)
		}
	}
	seen := map[jsonrpc.ID]bool{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				id := w.NewID()
				mu.Lock()
				if seen[id] {
					t.Errorf("id %s reused", id)
				}
				seen[id] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}

func TestCallRoundTripAndOrdering(t *testing.T) {
	w, p := newPair(t, WireOptions{})
	ctx := testCtx(t)
	wait := p.run(func(p *peer) error {
		r, err := p.expect("ping")
		if err != nil {
			return err
		}
		if string(r.ID) != "1" || r.HasPar {
			return errors.New("want id 1 and no params, got " + string(r.Raw))
		}
		if err := p.send(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}`); err != nil {
			return err
		}
		return p.reply(r, `{}`)
	})
	m, err := w.Call(ctx, "ping", nil)
	wait()
	if err != nil {
		t.Fatal(err)
	}
	if m.Env.Kind != jsonrpc.Response || m.Env.ID != jsonrpc.IntID(1) || m.Seq != 1 {
		t.Fatalf("response = %+v", m)
	}
	msgs := w.Messages()
	if len(msgs) != 2 || msgs[0].Env.Kind != jsonrpc.Notification || msgs[0].Seq != 0 || !msgs[1].At.After(msgs[0].At) && !msgs[1].At.Equal(msgs[0].At) {
		t.Fatalf("messages = %+v", msgs)
	}
	if got := string(msgs[1].Raw); got != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Fatalf("raw = %q", got)
	}
	if len(w.Since(1)) != 1 || len(w.Since(5)) != 0 || w.Len() != 2 {
		t.Fatalf("Since/Len wrong")
	}
}

func TestRequestBytes(t *testing.T) {
	w, p := newPair(t, WireOptions{})
	ctx := testCtx(t)
	got, wait := p.receive(2, false)
	pend, err := w.Start(ctx, jsonrpc.ID(`"a<b>"`), "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"s": "<&>"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Notify(ctx, "notifications/cancelled", map[string]any{"requestId": "a<b>"}); err != nil {
		t.Fatal(err)
	}
	wait()
	want := `{"jsonrpc":"2.0","id":"a<b>","method":"tools/call","params":{"arguments":{"s":"<&>"},"name":"echo"}}`
	if r := string((<-got).Raw); r != want {
		t.Fatalf("request = %s\nwant      %s", r, want)
	}
	if string(pend.Request()) != want+"\n" {
		t.Fatalf("Request() = %q", pend.Request())
	}
	if r := string((<-got).Raw); r != `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a<b>"}}` {
		t.Fatalf("notification = %s", r)
	}
}

func TestInvalidLinesRecorded(t *testing.T) {
	w, p := newPair(t, WireOptions{})
	ctx := testCtx(t)
	wait := p.run(func(p *peer) error {
		if _, err := p.conn.Write([]byte("garbage\n\n[1,2]\n{\"jsonrpc\":\"2.0\",\r\n{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}\n")); err != nil {
			return err
		}
		return nil
	})
	m, err := w.WaitFor(ctx, 0, func(m Message) bool { return m.Env.ID == jsonrpc.IntID(9) })
	wait()
	if err != nil {
		t.Fatal(err)
	}
	msgs := w.Messages()
	wantKinds := []jsonrpc.Kind{jsonrpc.Invalid, jsonrpc.Invalid, jsonrpc.Batch, jsonrpc.Invalid, jsonrpc.Response}
	if len(msgs) != len(wantKinds) || m.Seq != 4 {
		t.Fatalf("got %d messages, match seq %d", len(msgs), m.Seq)
	}
	for i, k := range wantKinds {
		if msgs[i].Env.Kind != k {
			t.Errorf("msg %d (%q) kind %s, want %s", i, msgs[i].Raw, msgs[i].Env.Kind, k)
		}
	}
	if string(msgs[0].Raw) != "garbage" || len(msgs[1].Raw) != 0 || string(msgs[3].Raw) != "{\"jsonrpc\":\"2.0\",\r" {
		t.Fatalf("raw lines not exact: %q %q %q", msgs[0].Raw, msgs[1].Raw, msgs[3].Raw)
	}
}

func TestPartialLineAtEOF(t *testing.T) {
	w, p := newPair(t, WireOptions{})
	if _, err := p.conn.Write([]byte(`{"jsonrpc":"2.0","method":"x"}` + "\n" + `{"jsonrpc":"2.0","id":1,"res`)); err != nil {
		t.Fatal(err)
	}
	_ = p.conn.Close()
	select {
	case <-w.Closed():
	case <-time.After(testTimeout):
		t.Fatal("reader did not end at EOF")
	}
	if err := w.Err(); err != nil {
		t.Fatalf("Err after clean EOF = %v", err)
	}
	msgs := w.Messages()
	if len(msgs) != 2 || msgs[0].Partial || !msgs[1].Partial || msgs[1].Env.Kind != jsonrpc.Invalid {
		t.Fatalf("messages = %+v", msgs)
	}
	if _, err := w.Start(testCtx(t), w.NewID(), "ping", nil); !errors.Is(err, ErrConnEnded) {
		t.Fatalf("Start after EOF: %v", err)
	}
	if _, err := w.WaitFor(testCtx(t), 0, func(Message) bool { return false }); !errors.Is(err, ErrConnEnded) {
		t.Fatalf("WaitFor after EOF: %v", err)
	}
}

func TestOversizeLineStopsReader(t *testing.T) {
	w, p := newPair(t, WireOptions{MaxLine: 64})
	ctx := testCtx(t)
	wait := p.run(func(p *peer) error {
		r, err := p.expect("ping")
		if err != nil {
			return err
		}
		// Exactly 64 bytes is fine; 65 is not.
		if err := p.send(`{"jsonrpc":"2.0","method":"m","params":{"s":"%s"}}`, strings.Repeat("x", 64-48)); err != nil {
			return err
		}
		_ = p.send(`{"jsonrpc":"2.0","id":%s,"result":{"pad":"%s"}}`, r.ID, strings.Repeat("y", 200))
		return nil
	})
	pend, err := w.Start(ctx, w.NewID(), "ping", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = pend.Wait(ctx)
	if !errors.Is(err, ErrConnEnded) || !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("Wait = %v, want ErrConnEnded wrapping ErrLineTooLong", err)
	}
	<-w.Closed()
	if !errors.Is(w.Err(), ErrLineTooLong) {
		t.Fatalf("Err = %v", w.Err())
	}
	if msgs := w.Messages(); len(msgs) != 1 || len(msgs[0].Raw) != 64 {
		t.Fatalf("messages = %d", len(msgs))
	}
	_ = w.Close()
	wait()
	if !errors.Is(w.Err(), ErrLineTooLong) {
		t.Fatalf("Err after Close = %v", w.Err())
	}
}

func TestUnsolicitedAndDuplicateResponses(t *testing.T) {
	w, p := newPair(t, WireOptions{})
	ctx := testCtx(t)
	wait := p.run(func(p *peer) error {
		r, err := p.expect("tools/list")
		if err != nil {
			return err
		}
		if err := p.send(`{"jsonrpc":"2.0","id":99,"result":{"stray":true}}`); err != nil {
			return err
		}
		if err := p.send(`{"jsonrpc":"2.0","id":"7","result":{"wrongtype":true}}`); err != nil {
			return err
		}
		if err := p.reply(r, `{"n":1}`); err != nil {
			return err
		}
		return p.replyErr(r, jsonrpc.CodeInternalError, "again", "")
	})
	pend, err := w.Start(ctx, jsonrpc.IntID(7), "tools/list", nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := pend.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if string(m.Env.Result) != `{"n":1}` || pend.ID() != jsonrpc.IntID(7) {
		t.Fatalf("Wait = %s", m.Raw)
	}
	select {
	case <-pend.Done():
	default:
		t.Fatal("Done not closed")
	}
	dup, err := w.WaitFor(ctx, m.Seq+1, func(m Message) bool { return m.Env.ID == jsonrpc.IntID(7) })
	wait()
	if err != nil || dup.Env.Kind != jsonrpc.ErrorReply {
		t.Fatalf("duplicate = %+v, %v", dup, err)
	}
	if msgs := w.Messages(); len(msgs) != 4 || msgs[0].Env.ID != jsonrpc.IntID(99) || msgs[1].Env.ID != jsonrpc.StringID("7") {
		t.Fatalf("messages = %+v", msgs)
	}
	// Wait again returns the same first response.
	if again, _ := pend.Wait(ctx); again.Seq != m.Seq {
		t.Fatal("second Wait differs")
	}
}

func TestSameIDPendingsFIFO(t *testing.T) {
	w, p := newPair(t, WireOptions{})
	ctx := testCtx(t)
	wait := p.run(func(p *peer) error {
		a, err := p.recv()
		if err != nil {
			return err
		}
		b, err := p.recv()
		if err != nil {
			return err
		}
		if err := p.reply(a, `"first"`); err != nil {
			return err
		}
		return p.reply(b, `"second"`)
	})
	id := jsonrpc.IntID(5)
	p1, err := w.Start(ctx, id, "ping", nil)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := w.Start(ctx, id, "ping", nil)
	if err != nil {
		t.Fatal(err)
	}
	m1, err1 := p1.Wait(ctx)
	m2, err2 := p2.Wait(ctx)
	wait()
	if err1 != nil || err2 != nil || string(m1.Env.Result) != `"first"` || string(m2.Env.Result) != `"second"` {
		t.Fatalf("got %s / %s (%v %v)", m1.Raw, m2.Raw, err1, err2)
	}
}

// startSlow starts a request "slow" the peer receives and never answers.
func startSlow(t *testing.T, ctx context.Context, w *Wire, p *peer) *Pending {
	t.Helper()
	wait := p.run(func(p *peer) error { _, err := p.expect("slow"); return err })
	pend, err := w.Start(ctx, w.NewID(), "slow", nil)
	if err != nil {
		t.Fatal(err)
	}
	wait()
	return pend
}

func TestCloseUnblocksEverything(t *testing.T) {
	w, p := newPair(t, WireOptions{})
	ctx := testCtx(t)
	pend := startSlow(t, ctx, w, p)
	errs := make(chan error, 3)
	go func() { _, err := pend.Wait(ctx); errs <- err }()
	go func() { _, err := w.WaitFor(ctx, 0, func(Message) bool { return false }); errs <- err }()
	// The peer no longer reads: this write blocks until Close.
	go func() { errs <- w.SendRaw(ctx, []byte(`{"jsonrpc":"2.0","method":"x"}`)) }()
	time.Sleep(20 * time.Millisecond)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		select {
		case err := <-errs:
			if !errors.Is(err, ErrClosed) {
				t.Errorf("after Close: %v, want ErrClosed", err)
			}
		case <-time.After(testTimeout):
			t.Fatal("Close did not unblock a waiter")
		}
	}
	if !errors.Is(w.Err(), ErrClosed) {
		t.Fatalf("Err = %v", w.Err())
	}
	if err := w.SendRaw(ctx, []byte("{}")); !errors.Is(err, ErrClosed) {
		t.Fatalf("SendRaw after Close = %v", err)
	}
	_ = w.Close() // idempotent
}

func TestContextCancellation(t *testing.T) {
	w, p := newPair(t, WireOptions{})
	ctx := testCtx(t)
	pend := startSlow(t, ctx, w, p)
	short, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	if _, err := pend.Wait(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait = %v", err)
	}
	if _, err := w.WaitFor(short, 0, func(Message) bool { return false }); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitFor = %v", err)
	}
	// net.Pipe supports write deadlines: the blocked write is aborted.
	start := time.Now()
	short2, cancel2 := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel2()
	if err := w.SendRaw(short2, []byte(`{"jsonrpc":"2.0","method":"x"}`)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("SendRaw = %v", err)
	}
	if time.Since(start) > time.Second {
		t.Fatal("SendRaw did not honour ctx")
	}
	done, cancel3 := context.WithCancel(ctx)
	cancel3()
	if _, err := w.Call(done, "ping", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Call with cancelled ctx = %v", err)
	}
	// The pending from the failed Start was unregistered.
	w.mu.Lock()
	n := len(w.pending)
	w.mu.Unlock()
	if n != 1 {
		t.Fatalf("pending entries = %d, want 1", n)
	}
}

// pipeConn joins the two ends of two os.Pipe pairs; it deliberately does not
// expose SetWriteDeadline, so SendRaw uses its goroutine path.
type pipeConn struct {
	r *os.File
	w *os.File
}

func (c pipeConn) Read(b []byte) (int, error)  { return c.r.Read(b) }
func (c pipeConn) Write(b []byte) (int, error) { return c.w.Write(b) }
func (c pipeConn) Close() error                { return errors.Join(c.r.Close(), c.w.Close()) }

// osPipePair returns a client conn and the server's (reader, writer) ends.
func osPipePair(t *testing.T) (client pipeConn, srvIn *os.File, srvOut *os.File) {
	t.Helper()
	toSrvR, toSrvW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	fromSrvR, fromSrvW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = toSrvR.Close(); _ = fromSrvW.Close() })
	return pipeConn{r: fromSrvR, w: toSrvW}, toSrvR, fromSrvW
}

func TestOSPipeRoundTripAndAbandonedWrite(t *testing.T) {
	conn, srvIn, srvOut := osPipePair(t)
	w := NewWire(conn, WireOptions{})
	defer w.Close()
	ctx := testCtx(t)
	go func() {
		buf := make([]byte, 4096)
		n, _ := srvIn.Read(buf)
		if strings.Contains(string(buf[:n]), `"method":"ping"`) {
			_, _ = io.WriteString(srvOut, `{"jsonrpc":"2.0","id":1,"result":{}}`+"\n")
		}
	}()
	m, err := w.Call(ctx, "ping", nil)
	if err != nil || m.Env.Kind != jsonrpc.Response {
		t.Fatalf("Call = %+v, %v", m, err)
	}
	// Nobody reads srvIn any more: fill the pipe buffer until a write blocks
	// and is abandoned on ctx; Close must still end the background write.
	big := []byte(`{"jsonrpc":"2.0","method":"x","params":{"s":"` + strings.Repeat("z", 1<<20) + `"}}`)
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := w.SendRaw(short, big); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("SendRaw = %v", err)
	}
	closed := make(chan struct{})
	go func() { _ = w.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(testTimeout):
		t.Fatal("Close hung on a blocked write")
	}
}

func TestReplies(t *testing.T) {
	w, p := newPair(t, WireOptions{})
	ctx := testCtx(t)
	got, wait := p.receive(2, false)
	if err := w.Reply(ctx, jsonrpc.StringID("s1"), map[string]any{}); err != nil {
		t.Fatal(err)
	}
	if err := w.ReplyError(ctx, "", jsonrpc.CodeInvalidRequest, "Invalid Request", nil); err != nil {
		t.Fatal(err)
	}
	wait()
	if r := string((<-got).Raw); r != `{"jsonrpc":"2.0","id":"s1","result":{}}` {
		t.Fatalf("reply = %s", r)
	}
	if r := string((<-got).Raw); r != `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}` {
		t.Fatalf("error reply = %s", r)
	}
}

// TestClosedBeforeWaitersWake: a wait that returns because the reader ended
// must find Closed already closed, or a check would describe a dead server
// as a silent one ("within 1s" instead of "before the connection ended").
// The waiter is blocked before the peer closes, so it is woken by the end.
func TestClosedBeforeWaitersWake(t *testing.T) {
	for i := 0; i < 200; i++ {
		w, p := newPair(t, WireOptions{})
		waiting := make(chan struct{})
		got := make(chan bool, 1)
		go func() {
			close(waiting)
			_, err := w.WaitFor(testCtx(t), 0, func(Message) bool { return false })
			if !errors.Is(err, ErrConnEnded) {
				t.Errorf("WaitFor: %v, want ErrConnEnded", err)
			}
			select {
			case <-w.Closed():
				got <- true
			default:
				got <- false
			}
		}()
		<-waiting
		_ = p.conn.Close()
		select {
		case ok := <-got:
			if !ok {
				t.Fatalf("round %d: WaitFor returned at the end of the connection before Closed was closed", i)
			}
		case <-time.After(testTimeout):
			t.Fatal("WaitFor did not return at EOF")
		}
	}
}

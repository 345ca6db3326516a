package clients

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testTimeout = 3 * time.Second

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// peer is the scripted far end of a net.Pipe.
type peer struct {
	t    *testing.T
	conn net.Conn
	br   *bufio.Reader
}

// req is one line the peer received.
type req struct {
	Raw    []byte
	ID     json.RawMessage
	Method string
	Params map[string]any
	HasPar bool
}

func (r req) meta() map[string]any {
	m, _ := r.Params["_meta"].(map[string]any)
	return m
}

// newPair returns a Wire on one end of a net.Pipe and a peer on the other;
// both are closed at cleanup.
func newPair(t *testing.T, opts WireOptions) (*Wire, *peer) {
	t.Helper()
	c, s := net.Pipe()
	w := NewWire(c, opts)
	p := &peer{t: t, conn: s, br: bufio.NewReader(s)}
	t.Cleanup(func() {
		_ = w.Close()
		_ = s.Close()
	})
	return w, p
}

// run executes script on its own goroutine and returns a function that waits
// (bounded) for it to finish.
func (p *peer) run(script func(p *peer) error) (wait func()) {
	done := make(chan error, 1)
	go func() { done <- script(p) }()
	return func() {
		p.t.Helper()
		select {
		case err := <-done:
			if err != nil {
				p.t.Errorf("peer: %v", err)
			}
		case <-time.After(testTimeout):
			p.t.Errorf("peer script did not finish")
		}
	}
}

// receive runs a script receiving n messages, each passed on got and, with
// answer, answered with an empty result; wait is run's.
func (p *peer) receive(n int, answer bool) (got <-chan req, wait func()) {
	ch := make(chan req, n)
	return ch, p.run(func(p *peer) error {
		for range n {
			r, err := p.recv()
			if err != nil {
				return err
			}
			ch <- r
			if !answer {
				continue
			}
			if err := p.reply(r, `{}`); err != nil {
				return err
			}
		}
		return nil
	})
}

func (p *peer) recv() (req, error) {
	_ = p.conn.SetReadDeadline(time.Now().Add(testTimeout))
	line, err := p.br.ReadBytes('\n')
	if err != nil {
		return req{}, fmt.Errorf("recv: %w", err)
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	r := req{Raw: line}
	var rawParams json.RawMessage
	r.ID, r.Method, rawParams, r.Params, err = decodeReq(line)
	r.HasPar = rawParams != nil
	if err != nil && rawParams == nil {
		return req{Raw: line}, fmt.Errorf("recv %q: %w", line, err)
	}
	if err != nil {
		return r, fmt.Errorf("params %q: %w", rawParams, err)
	}
	return r, nil
}

// decodeReq reads the id, method and params (numbers as json.Number) of a
// JSON-RPC message; on an error in the params, rawParams is set.
func decodeReq(msg []byte) (id json.RawMessage, method string, rawParams json.RawMessage, params map[string]any, err error) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	d := json.NewDecoder(bytes.NewReader(msg))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		return nil, "", nil, nil, err
	}
	if m.Params != nil {
		d := json.NewDecoder(bytes.NewReader(m.Params))
		d.UseNumber()
		err = d.Decode(&params)
	}
	return m.ID, m.Method, m.Params, params, err
}

func (p *peer) send(format string, args ...any) error {
	_ = p.conn.SetWriteDeadline(time.Now().Add(testTimeout))
	_, err := fmt.Fprintf(p.conn, format+"\n", args...)
	return err
}

// expect receives one message and checks its method.
func (p *peer) expect(method string) (req, error) {
	r, err := p.recv()
	if err != nil {
		return r, err
	}
	if r.Method != method {
		return r, fmt.Errorf("got method %q (%s), want %q", r.Method, r.Raw, method)
	}
	return r, nil
}

// reply answers r with a result (JSON text).
func (p *peer) reply(r req, result string) error {
	return p.send(`{"jsonrpc":"2.0","id":%s,"result":%s}`, r.ID, result)
}

// replyErr answers r with a JSON-RPC error.
func (p *peer) replyErr(r req, code int, msg, data string) error {
	if data == "" {
		return p.send(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q}}`, r.ID, code, msg)
	}
	return p.send(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q,"data":%s}}`, r.ID, code, msg, data)
}

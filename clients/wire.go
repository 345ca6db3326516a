package clients

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// Defaults applied by NewWire to zero WireOptions fields.
const (
	DefaultMaxLine       = 16 << 20
	DefaultClientName    = "mcp-conform"
	DefaultClientVersion = "0.0.0-dev"
	DefaultProbeTimeout  = 2 * time.Second
)

// ErrClosed is returned by waits and sends once Close was called.
var ErrClosed = errors.New("clients: wire closed")

// ErrLineTooLong is why the reader stopped when an inbound line exceeded
// WireOptions.MaxLine (see Err).
var ErrLineTooLong = errors.New("clients: inbound line exceeds the maximum length")

// ErrConnEnded is returned by waits when the reader ended (EOF or read error)
// before the awaited message arrived; it wraps the reader's error, if any.
var ErrConnEnded = errors.New("clients: connection ended")

// Message is one inbound message, exactly as received.
type Message struct {
	// Seq is the 0-based arrival order.
	Seq int
	// At is the arrival time (it carries a monotonic clock reading).
	At time.Time
	// Raw is the line without its newline. Callers must not modify it.
	Raw []byte
	// Env is the parsed envelope; Env.Kind is jsonrpc.Invalid for lines that
	// are not a JSON-RPC object (including empty lines).
	Env jsonrpc.Envelope
	// Partial is true for a final line cut off by EOF before its newline
	// (HTTP: a JSON body cut before its end or larger than the limit).
	Partial bool
	// Stream names the HTTP response stream the message arrived on (HTTPWire
	// only): the request's id text (e.g. `1`, `"a"`) for a POSTed request,
	// "GET#n" for the n-th OpenGET, "POST#n" for the body of the n-th Notify,
	// "DELETE#n", "RAW#n" for the n-th RawPOST. Empty on stdio.
	Stream string
	// EventID is the id field of the SSE event that carried the message (""
	// when the event had none, or the message came in a JSON body).
	EventID string
	// EventType is the SSE event's type field ("" when absent, which SSE
	// treats as "message").
	EventType string
}

// WireOptions configures a Wire. The zero value is usable.
type WireOptions struct {
	// MaxLine bounds one inbound line (without its newline), default
	// DefaultMaxLine. A longer line stops the reader with ErrLineTooLong.
	MaxLine int
	// ClientName and ClientVersion identify the client (clientInfo);
	// defaults DefaultClientName and DefaultClientVersion.
	ClientName    string
	ClientVersion string
	// ProbeTimeout bounds the server/discover probe of Negotiate, default
	// DefaultProbeTimeout; no answer within it means a legacy server. With
	// a modern version forced (no fallback) the default bound is 15 s; a
	// ProbeTimeout set explicitly bounds that probe too.
	ProbeTimeout time.Duration
	// MaxMessages bounds the inbound message log, default
	// DefaultMaxMessages: beyond it the oldest messages are evicted (see
	// Evicted); Seq numbers keep counting.
	MaxMessages int
}

func (o WireOptions) withDefaults() WireOptions {
	if o.MaxLine <= 0 {
		o.MaxLine = DefaultMaxLine
	}
	fillDefaults(&o.ClientName, &o.ClientVersion, &o.ProbeTimeout, &o.MaxMessages)
	return o
}

// Wire is a wire-level MCP client over one connection that carries one
// JSON-RPC message per frame: a line on stdio (NewWire), a frame on
// WebSocket (DialWebSocket). It sees everything: every inbound frame is
// recorded, in arrival order and byte for byte, whether or not it is valid
// JSON and whether or not anyone waits for it. Outbound, a check chooses
// exactly what is sent: raw bytes (SendRaw), requests with explicit ids
// (Start), or the convenience path (Call).
//
// One goroutine reads the connection; writes are serialised. All methods
// are safe for concurrent use (see Conn for the rules).
type Wire struct {
	core // the message log, the session, the ids; core.mu guards the rest

	conn io.ReadWriteCloser
	opts WireOptions

	// wsem serialises writes (a semaphore so that acquiring it honours ctx);
	// wbroken, guarded by wsem, is set after a partial write corrupted the
	// framing, and fails every later write.
	wsem    chan struct{}
	wbroken error
	writers sync.WaitGroup

	pending     map[jsonrpc.ID][]*Pending
	err         error // why the reader finished
	closeCalled bool

	readerDone chan struct{}
	closing    chan struct{}
	closeOnce  sync.Once
	closeErr   error

	// readFrame returns the next inbound message (a line on stdio, a frame
	// on WebSocket) of at most max bytes; partial marks a final fragment.
	readFrame func(max int) (frame []byte, partial bool, err error)
}

// NewWire wraps conn and starts the one reader goroutine. Close the Wire to
// release it.
func NewWire(conn io.ReadWriteCloser, opts WireOptions) *Wire {
	br := bufio.NewReaderSize(conn, 64<<10)
	return newWire(conn, opts, func(max int) ([]byte, bool, error) { return readLine(br, max) })
}

// newWire builds a Wire whose inbound messages come from readFrame and
// whose outbound messages are single Writes to conn (each a message and its
// "\n"), and starts its reader.
func newWire(conn io.ReadWriteCloser, opts WireOptions, readFrame func(max int) ([]byte, bool, error)) *Wire {
	opts = opts.withDefaults()
	w := &Wire{
		core:       newCore(opts.MaxMessages),
		readFrame:  readFrame,
		conn:       conn,
		opts:       opts,
		wsem:       make(chan struct{}, 1),
		pending:    make(map[jsonrpc.ID][]*Pending),
		readerDone: make(chan struct{}),
		closing:    make(chan struct{}),
	}
	go w.readLoop()
	return w
}

// Options returns the options in effect (defaults filled in).
func (w *Wire) Options() WireOptions { return w.opts }

func (w *Wire) readLoop() {
	var err error
	for {
		line, partial, rerr := w.readFrame(w.opts.MaxLine)
		if line != nil {
			w.record(line, partial)
		}
		if rerr != nil {
			err = rerr
			break
		}
	}
	w.finish(err)
}

// readLine returns one line without its "\n". At EOF a non-empty unterminated
// remainder is returned with partial set, together with io.EOF.
func readLine(br *bufio.Reader, max int) (line []byte, partial bool, err error) {
	var buf []byte
	for {
		frag, err := br.ReadSlice('\n')
		n := len(buf) + len(frag)
		if len(frag) > 0 && frag[len(frag)-1] == '\n' {
			n--
		}
		if n > max {
			return nil, false, fmt.Errorf("%w: more than %d bytes", ErrLineTooLong, max)
		}
		buf = append(buf, frag...)
		switch {
		case err == nil:
			return buf[:len(buf)-1], false, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case len(buf) > 0:
			return buf, true, err
		default:
			return nil, false, err
		}
	}
}

func (w *Wire) record(raw []byte, partial bool) {
	at := time.Now()
	env := jsonrpc.Parse(raw)
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.recordLocked(Message{At: at, Raw: raw, Env: env, Partial: partial})
	if env.Kind.IsReply() && !env.ID.IsZero() {
		if q := w.pending[env.ID]; len(q) > 0 {
			p := q[0]
			if len(q) == 1 {
				delete(w.pending, env.ID)
			} else {
				w.pending[env.ID] = q[1:]
			}
			p.msg = m
			close(p.done)
		}
	}
}

func (w *Wire) finish(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if errors.Is(err, io.EOF) {
		err = nil
	}
	if w.closeCalled && (err == nil || !errors.Is(err, ErrLineTooLong)) {
		err = ErrClosed
	}
	w.err = err
	// What a wait gets from now on.
	var endErr error
	switch {
	case errors.Is(err, ErrClosed):
		endErr = ErrClosed
	case err == nil:
		endErr = fmt.Errorf("%w (EOF)", ErrConnEnded)
	default:
		endErr = fmt.Errorf("%w: %w", ErrConnEnded, err)
	}
	// Closed is closed before any waiter wakes, so a wait that returned
	// because the reader ended always finds Closed closed.
	close(w.readerDone)
	for id, q := range w.pending {
		for _, p := range q {
			p.err = endErr
			close(p.done)
		}
		delete(w.pending, id)
	}
	w.endLocked(endErr)
}

// Closed is closed when the reader ended (EOF, read error, oversize line, or
// Close).
func (w *Wire) Closed() <-chan struct{} { return w.readerDone }

// Err reports why the reader ended: nil for a clean EOF (or while it still
// runs), ErrClosed after Close, an error wrapping ErrLineTooLong for an
// oversize line, or the read error.
func (w *Wire) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Close closes the connection, waits for the reader goroutine and any
// in-flight write to end, and unblocks every waiter. It is idempotent and
// returns the connection's Close error. The connection's Close must unblock
// a pending Read or Write (true of pipes, os.File pipes and net.Conn).
func (w *Wire) Close() error {
	w.closeOnce.Do(func() {
		w.mu.Lock()
		w.closeCalled = true
		w.mu.Unlock()
		close(w.closing)
		w.closeErr = w.conn.Close()
	})
	<-w.readerDone
	w.writers.Wait()
	return w.closeErr
}

type writeDeadliner interface {
	SetWriteDeadline(time.Time) error
}

// SendRaw writes line as-is, appending "\n" if it does not end with one.
// Writes are serialised. ctx bounds the write: when the connection supports
// SetWriteDeadline the write is aborted; otherwise it continues in the
// background (it may still land later) and SendRaw returns ctx's error. A
// write aborted part-way corrupts the framing, so every later write fails.
func (w *Wire) SendRaw(ctx context.Context, line []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	buf := line
	if len(buf) == 0 || buf[len(buf)-1] != '\n' {
		buf = append(bytes.Clone(line), '\n')
	}
	select {
	case w.wsem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-w.closing:
		return ErrClosed
	}
	release := func() { <-w.wsem }
	w.mu.Lock()
	closed := w.closeCalled
	if !closed {
		w.writers.Add(1)
	}
	w.mu.Unlock()
	if closed {
		release()
		return ErrClosed
	}
	if w.wbroken != nil {
		err := w.wbroken
		release()
		w.writers.Done()
		return err
	}
	if dl, ok := w.conn.(writeDeadliner); ok && dl.SetWriteDeadline(time.Time{}) == nil {
		defer w.writers.Done()
		defer release()
		return w.writeWithDeadline(ctx, dl, buf)
	}
	done := make(chan error, 1)
	go func() {
		defer w.writers.Done()
		defer release()
		done <- w.write(buf)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("clients: write abandoned (it may still complete): %w", ctx.Err())
	}
}

// write performs one write; the caller holds wsem.
func (w *Wire) write(buf []byte) error {
	n, err := w.conn.Write(buf)
	if err == nil && n < len(buf) {
		err = io.ErrShortWrite
	}
	if err != nil && n > 0 && n < len(buf) {
		w.wbroken = fmt.Errorf("clients: framing broken by a partial write (%d of %d bytes): %w", n, len(buf), err)
	}
	if err != nil {
		select {
		case <-w.closing:
			return ErrClosed
		default:
		}
	}
	return err
}

func (w *Wire) writeWithDeadline(ctx context.Context, dl writeDeadliner, buf []byte) error {
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		_ = dl.SetWriteDeadline(time.Unix(1, 0))
		close(fired)
	})
	err := w.write(buf)
	if !stop() {
		<-fired
	}
	_ = dl.SetWriteDeadline(time.Time{})
	if err != nil && ctx.Err() != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("clients: write aborted: %w", ctx.Err())
	}
	return err
}

// Notify sends a JSON-RPC notification. params is marshalled as given
// (omitted when nil); nothing is injected in either era.
func (w *Wire) Notify(ctx context.Context, method string, params any) error {
	line, err := encodeNotification(method, params)
	if err != nil {
		return err
	}
	return w.SendRaw(ctx, line)
}

// Reply sends a JSON-RPC response with the given id and result (marshalled
// as given; nil is sent as null), e.g. to answer a server-to-client ping.
func (w *Wire) Reply(ctx context.Context, id jsonrpc.ID, result any) error {
	line, err := responseLine(id, result)
	if err != nil {
		return err
	}
	return w.SendRaw(ctx, line)
}

// ReplyError sends a JSON-RPC error response with the given id (the zero ID
// is sent as null).
func (w *Wire) ReplyError(ctx context.Context, id jsonrpc.ID, code int, message string, data any) error {
	raw := id.Raw()
	if raw == nil {
		raw = json.RawMessage("null")
	}
	type errObj struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    any    `json:"data,omitempty"`
	}
	line, err := marshalLine(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   errObj          `json:"error"`
	}{jsonrpc.Version, raw, errObj{code, message, data}})
	if err != nil {
		return err
	}
	return w.SendRaw(ctx, line)
}

package faultproxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// DefaultMaxFrame is the largest frame the proxy parses (64 MiB). A longer
// line is still passed on, byte for byte, but unparsed and recorded as
// oversize.
const DefaultMaxFrame = 64 << 20

// Options configures a link.
type Options struct {
	// MaxFrame is the largest frame parsed; zero means DefaultMaxFrame.
	MaxFrame int
	// TranscriptSink, when set, receives every transcript entry as JSONL.
	TranscriptSink io.Writer
}

// Link carries line-framed messages between a client and a server in both
// directions, applying its rules and recording its transcript.
type Link struct {
	*core
	opts Options
	wg   sync.WaitGroup

	out     map[Direction]*lockedWriter
	pending map[Direction]*sync.WaitGroup
	done    map[Direction]chan struct{}
}

// lockedWriter serialises writes to one destination. Writes from the pump
// are buffered and flushed whenever the pump's source has nothing more
// buffered, so a burst of messages costs one system call while a lone
// message leaves at once; writes from faults flush immediately.
type lockedWriter struct {
	mu     sync.Mutex
	w      io.Writer
	bw     *bufio.Writer
	closed bool
}

// errClosed is returned when delivering to a side that has gone.
var errClosed = errors.New("faultproxy: destination closed")

func (lw *lockedWriter) write(b []byte, flush bool) error {
	return lw.writeFrame(b, false, flush)
}

// writeFrame writes b, then a newline when newline is set, as one unit
// (under one lock): the frame goes out whole without being copied first.
func (lw *lockedWriter) writeFrame(b []byte, newline, flush bool) error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.closed {
		return errClosed
	}
	if lw.bw == nil {
		lw.bw = bufio.NewWriterSize(lw.w, 64<<10)
	}
	if _, err := lw.bw.Write(b); err != nil {
		return err
	}
	if newline {
		if err := lw.bw.WriteByte('\n'); err != nil {
			return err
		}
	}
	if flush {
		return lw.bw.Flush()
	}
	return nil
}

func (lw *lockedWriter) flush() error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.closed || lw.bw == nil {
		return nil
	}
	return lw.bw.Flush()
}

func (lw *lockedWriter) close() {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.closed {
		return
	}
	lw.closed = true
	if lw.bw != nil {
		_ = lw.bw.Flush()
	}
	if c, ok := lw.w.(io.Closer); ok {
		_ = c.Close()
	}
}

// newLink wires a link: fromClient is read and written to toServer,
// fromServer is read and written to toClient. The writers are closed when
// their source ends (after any held message of that direction is settled).
func newLink(parent context.Context, fromClient io.Reader, toServer io.Writer, fromServer io.Reader, toClient io.Writer, tr *Transcript, rules *Rules, opts Options, signal func(Signal) error) *Link {
	if opts.MaxFrame <= 0 {
		opts.MaxFrame = DefaultMaxFrame
	}
	if rules == nil {
		rules = NewRules()
	}
	l := &Link{
		core: newCore(parent, tr, rules, signal),
		opts: opts,
		out: map[Direction]*lockedWriter{
			ClientToServer: {w: toServer},
			ServerToClient: {w: toClient},
		},
		pending: map[Direction]*sync.WaitGroup{ClientToServer: {}, ServerToClient: {}},
		done:    map[Direction]chan struct{}{ClientToServer: make(chan struct{}), ServerToClient: make(chan struct{})},
	}
	l.wg.Add(2)
	go l.pump(ClientToServer, fromClient)
	go l.pump(ServerToClient, fromServer)
	return l
}

// Done returns a channel closed when the given direction's source has ended
// and everything pending in it is settled.
func (l *Link) Done(dir Direction) <-chan struct{} { return l.done[dir] }

// pump reads frames from r and hands each to the rule engine.
func (l *Link) pump(dir Direction, r io.Reader) {
	defer l.wg.Done()
	defer close(l.done[dir])
	defer func() {
		if c, ok := r.(io.Closer); ok {
			_ = c.Close()
		}
		l.pending[dir].Wait()
		l.out[dir].close()
	}()
	br := bufio.NewReaderSize(r, 64<<10)
	s := &stdioSink{l: l, dir: dir} // one per direction: no allocation per message
	var (
		fs   frameSlab
		msgs []Message // where the Messages are carved from, as relaySSE does
		next = 1
	)
	for {
		line, complete, err := l.readFrame(dir, br, &fs)
		if len(line) > 0 || complete {
			if len(msgs) == 0 {
				msgs = make([]Message, next)
				next = min(2*next, messageSlab)
			}
			msg := &msgs[0]
			msgs = msgs[1:]
			*msg = Message{Seq: l.seq.Add(1), Dir: dir, Raw: line, At: l.tr.Since(), NoDelimiter: !complete}
			l.handle(msg, s)
		}
		if br.Buffered() == 0 {
			_ = l.out[dir].flush()
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, errClosed) && !errors.Is(err, os.ErrClosed) {
				l.tr.Add(Entry{Kind: EntryNote, Dir: dir, Text: fmt.Sprintf("%s source ended: %v", dir, err)})
			}
			return
		}
	}
}

// readFrame returns the next line without its newline. complete is false for
// a final fragment without a newline. A line longer than MaxFrame is passed
// through unparsed as it streams and recorded; readFrame then returns nil.
// A line whole in br's buffer is copied into fs.
func (l *Link) readFrame(dir Direction, br *bufio.Reader, fs *frameSlab) ([]byte, bool, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if err == nil && buf == nil {
			return fs.carve(chunk[:len(chunk)-1]), true, nil
		}
		if err == bufio.ErrBufferFull {
			buf = append(buf, chunk...)
			if len(buf) > l.opts.MaxFrame {
				return nil, false, l.passOversize(dir, br, buf)
			}
			continue
		}
		buf = append(buf, chunk...)
		if err != nil {
			return buf, false, err
		}
		return buf[:len(buf)-1], true, nil
	}
}

// passOversize streams the rest of an oversize line to its destination,
// unparsed, and records it.
func (l *Link) passOversize(dir Direction, br *bufio.Reader, head []byte) error {
	l.pending[dir].Wait()
	n := len(head)
	werr := l.out[dir].write(head, true)
	var err error
	for {
		var chunk []byte
		chunk, err = br.ReadSlice('\n')
		n += len(chunk)
		if werr == nil {
			werr = l.out[dir].write(chunk, true)
		}
		if err != bufio.ErrBufferFull {
			break
		}
	}
	l.tr.Add(Entry{Kind: EntryNote, Dir: dir, Seq: l.seq.Add(1), Text: fmt.Sprintf("oversize frame of %d bytes (limit %d) passed through unparsed", n, l.opts.MaxFrame)})
	if err == nil {
		err = werr
	}
	return err
}

// handle records msg and applies the first rule that fires, or delivers it
// to s.
func (l *Link) handle(msg *Message, s *stdioSink) {
	l.record(msg)
	l.apply(msg, s)
}

// frameSlab is where a pump carves the lines it reads from: a few
// allocations for many lines instead of one each (a line keeps its slab
// alive as long as it is kept: the transcript, the delivered history).
type frameSlab struct {
	b []byte
	n int // lines carved so far
}

// Slabs grow from 2 KiB to frameSlabMax; the first ownLines lines and a
// line longer than frameSlabMax/8 get an allocation of their own (a short
// session costs no slab), as sse.Reader.NextFrame does with events.
const (
	frameSlabMax = 32 << 10
	ownLines     = 4
)

// carve returns a copy of b, its capacity capped (an append copies); never
// nil (an empty line is a message whose Raw is empty, not absent).
func (fs *frameSlab) carve(b []byte) []byte {
	if len(b) == 0 {
		return []byte{}
	}
	fs.n++
	if len(b) > frameSlabMax/8 || fs.n <= ownLines {
		return append(make([]byte, 0, len(b)), b...)
	}
	if cap(fs.b)-len(fs.b) < len(b) {
		fs.b = make([]byte, 0, min(max(2*cap(fs.b), 2<<10), frameSlabMax))
	}
	n := len(fs.b)
	fs.b = append(fs.b, b...)
	return fs.b[n:len(fs.b):len(fs.b)]
}

// stdioSink delivers a link's messages to one direction's writer.
type stdioSink struct {
	l   *Link
	dir Direction
}

var _ sink = stdioSink{}

func (s stdioSink) deliver(msg *Message, flush bool) error { return s.l.deliver(msg, flush) }
func (s stdioSink) inject(dir Direction, raw []byte) error { return s.l.Inject(dir, raw) }
func (s stdioSink) pending() *sync.WaitGroup               { return s.l.pending[s.dir] }
func (s stdioSink) stream() StreamControl                  { return nil }

// Deliver writes msg to its destination now and marks it passed.
func (l *Link) Deliver(msg *Message) error { return l.deliver(msg, true) }

// deliver writes msg, flushing at once or leaving the flush to the pump.
func (l *Link) deliver(msg *Message, flush bool) error {
	if err := l.out[msg.Dir].writeFrame(msg.Raw, !msg.NoDelimiter, flush); err != nil {
		l.tr.Add(Entry{Kind: EntryNote, Dir: msg.Dir, Seq: msg.Seq, Text: fmt.Sprintf("could not deliver: %v", err)})
		return err
	}
	l.markPassed(msg)
	return nil
}

// Inject sends a synthetic message in dir, recorded like any message.
func (l *Link) Inject(dir Direction, raw []byte) error {
	msg := &Message{Seq: l.seq.Add(1), Dir: dir, Raw: raw, At: l.tr.Since(), Synthetic: true}
	l.tr.Add(Entry{At: msg.At, Kind: EntryMessage, Dir: dir, Seq: msg.Seq, Raw: raw, Fault: "inject", Outcome: OutcomeInjected})
	return l.Deliver(msg)
}

// close stops every held message and waits up to wait for the pumps to
// end; the caller closes the sources so that they do. It reports whether
// the pumps ended in time.
func (l *Link) close(wait time.Duration) bool {
	l.cancel()
	ended := make(chan struct{})
	go func() {
		l.wg.Wait()
		close(ended)
	}()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ended:
		return true
	case <-t.C:
		l.tr.Note("link did not drain within %s", wait)
		return false
	}
}

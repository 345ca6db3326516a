package faultproxy

import (
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// The response side of the proxy's HTTP/1.1 server (httpserve.go): the
// exchange's http.ResponseWriter and the Date header it writes.

// responseWriter is the http.ResponseWriter of one exchange. It holds the
// body back (up to pendMax) until the first flush or the end of the
// handler, so that a short answer goes out as one write with its length;
// a longer or flushed one without a Content-Length is chunked.
//
// It is used by one goroutine at a time (the exchange serializes its
// writes under its own lock).
type responseWriter struct {
	sc          *srvConn
	req         *http.Request
	header      http.Header
	status      int
	wroteHeader bool
	committed   bool
	chunked     bool
	cl          int64 // Content-Length of the response, -1 none
	written     int64
	pend        []byte
	chunk       []byte // chunked: the bytes of the next chunk
	closeAfter  bool
	err         error
	// shared: header is the upstream response's, adopted without a copy
	// (the transcript holds it too): it is not changed; hop-by-hop
	// headers (and Content-Length, with dropLength) are left out when the
	// head is written, and Header makes a copy first.
	shared     bool
	dropLength bool
}

var (
	_ http.ResponseWriter = (*responseWriter)(nil)
	_ http.Flusher        = (*responseWriter)(nil)
)

func (w *responseWriter) Header() http.Header {
	if w.shared {
		w.header, w.shared = w.header.Clone(), false
		for _, k := range hopHeaders {
			delete(w.header, k)
		}
		if w.dropLength {
			// Dropped from the copy: a length set from now on is the
			// response's own.
			delete(w.header, "Content-Length")
			w.dropLength = false
		}
	}
	if w.header == nil {
		w.header = make(http.Header)
	}
	return w.header
}

// adopt takes h, an upstream response head that is not changed afterwards,
// as the response's head, less the hop-by-hop headers and, with
// dropLength, its Content-Length (the proxy copied and deleted them
// before; this writes the same head without the copy).
func (w *responseWriter) adopt(h http.Header, dropLength bool) {
	w.header, w.shared, w.dropLength = h, true, dropLength
}

func (w *responseWriter) WriteHeader(code int) {
	if w.wroteHeader {
		return
	}
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code))
	}
	if code < 200 {
		// An informational head goes out on its own (the proxy sends
		// none of its own; kept for any handler).
		w.Header()
		_, _ = fmt.Fprintf(w.sc.bw, "HTTP/1.1 %03d %s\r\n", code, http.StatusText(code))
		_ = w.header.Write(w.sc.bw)
		_, _ = w.sc.bw.WriteString("\r\n")
		_ = w.sc.bw.Flush()
		return
	}
	w.wroteHeader = true
	w.status = code
	if w.dropLength {
		return
	}
	if v := w.header.Get("Content-Length"); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
			w.cl = n
		} else {
			w.Header()
			delete(w.header, "Content-Length")
		}
	}
}

// bodyAllowed is false for the statuses that have no body.
func bodyAllowed(code int) bool {
	return code >= 200 && code != http.StatusNoContent && code != http.StatusNotModified
}

func (w *responseWriter) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if !bodyAllowed(w.status) {
		return 0, http.ErrBodyNotAllowed
	}
	if w.err != nil {
		return 0, w.err
	}
	if w.cl >= 0 && w.written+int64(len(w.pend))+int64(len(p)) > w.cl {
		return 0, http.ErrContentLength
	}
	if !w.committed {
		if len(w.pend)+len(p) <= pendMax {
			w.pend = append(w.pend, p...)
			return len(p), nil
		}
		w.commit(false)
	}
	return len(p), w.body(p)
}

// commit writes the head; final means the handler has ended, so that a
// body held back in full gets its length.
func (w *responseWriter) commit(final bool) {
	if w.committed {
		return
	}
	w.committed = true
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.header == nil {
		w.header = make(http.Header)
	}
	h := w.header
	switch {
	case !bodyAllowed(w.status):
	case w.cl >= 0:
	case final:
		w.cl = int64(len(w.pend))
		if w.req.Method != http.MethodHead || w.cl > 0 {
			w.Header()["Content-Length"] = []string{strconv.FormatInt(w.cl, 10)}
			h = w.header
		}
	case w.req.ProtoAtLeast(1, 1):
		w.chunked = true
	default:
		w.closeAfter = true // an HTTP/1.0 body ends with the connection
	}
	if w.req.Close || !w.req.ProtoAtLeast(1, 1) {
		w.closeAfter = true
	}
	bw := w.sc.bw
	b := bw.AvailableBuffer()
	b = append(b, "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(w.status), 10)
	b = append(b, ' ')
	if t := http.StatusText(w.status); t != "" {
		b = append(b, t...)
	} else {
		b = append(b, "status code "...)
		b = strconv.AppendInt(b, int64(w.status), 10)
	}
	b = append(b, "\r\n"...)
	b = appendHeaderLines(b, h, func(k string) bool {
		return hopHeader(k) || (w.dropLength && k == "Content-Length")
	})
	if _, ok := h["Date"]; !ok {
		b = append(b, "Date: "...)
		b = append(b, httpDate()...)
		b = append(b, "\r\n"...)
	}
	if w.chunked {
		b = append(b, "Transfer-Encoding: chunked\r\n"...)
	}
	if w.closeAfter {
		b = append(b, "Connection: close\r\n"...)
	}
	b = append(b, "\r\n"...)
	_, _ = bw.Write(b)
	if len(w.pend) > 0 {
		p := w.pend
		w.pend = w.pend[:0]
		w.err = w.body(p)
	}
}

// body writes body bytes after the head. Chunked, the bytes written
// between two flushes go out as one chunk (up to chunkMax): a client
// reading a stream of small events decodes one chunk per flush, not one
// per event.
func (w *responseWriter) body(p []byte) error {
	if len(p) == 0 || w.req.Method == http.MethodHead {
		return nil
	}
	w.written += int64(len(p))
	if w.chunked {
		if len(w.chunk)+len(p) > chunkMax {
			w.emitChunk()
		}
		if len(p) <= chunkMax {
			w.chunk = append(w.chunk, p...)
			return w.err
		}
		w.writeChunk(p)
		return w.err
	}
	if _, err := w.sc.bw.Write(p); err != nil && w.err == nil {
		w.err = err
	}
	return w.err
}

// chunkMax bounds the bytes a chunked response holds before a flush.
const chunkMax = 32 << 10

// emitChunk writes the bytes held for the next chunk.
func (w *responseWriter) emitChunk() {
	if len(w.chunk) > 0 {
		w.writeChunk(w.chunk)
		w.chunk = w.chunk[:0]
	}
}

func (w *responseWriter) writeChunk(p []byte) {
	bw := w.sc.bw
	b := bw.AvailableBuffer()
	b = strconv.AppendInt(b, int64(len(p)), 16)
	b = append(b, "\r\n"...)
	_, _ = bw.Write(b)
	_, _ = bw.Write(p)
	if _, err := bw.WriteString("\r\n"); err != nil && w.err == nil {
		w.err = err
	}
}

// FlushError sends what was written: the head and the body so far.
func (w *responseWriter) FlushError() error {
	w.commit(false)
	w.emitChunk()
	if w.err != nil {
		return w.err
	}
	if err := w.sc.bw.Flush(); err != nil {
		w.err = err
		return err
	}
	return nil
}

// Flush implements http.Flusher.
func (w *responseWriter) Flush() { _ = w.FlushError() }

// finish ends the response after the handler returned.
func (w *responseWriter) finish() error {
	w.commit(true)
	if w.chunked {
		w.emitChunk()
		_, _ = w.sc.bw.WriteString("0\r\n\r\n")
	}
	if w.cl >= 0 && w.written < w.cl && w.req.Method != http.MethodHead && bodyAllowed(w.status) {
		// Fewer bytes than announced: only closing tells the client.
		w.closeAfter = true
	}
	if err := w.sc.bw.Flush(); err != nil {
		return err
	}
	return w.err
}

// httpDate is the Date header's value, formatted once a second.
func httpDate() string {
	now := time.Now()
	sec := now.Unix()
	if d := dateCache.Load(); d != nil && d.sec == sec {
		return d.s
	}
	d := &cachedDate{sec: sec, s: now.UTC().Format(http.TimeFormat)}
	dateCache.Store(d)
	return d.s
}

type cachedDate struct {
	sec int64
	s   string
}

var dateCache atomic.Pointer[cachedDate]

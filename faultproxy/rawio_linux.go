package faultproxy

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// rawIO reads and writes a connection as net.Conn does (through the
// network poller, honouring its deadlines and its Close), but makes each
// read(2) and write(2) with syscall.RawSyscall, not syscall.Syscall: the
// socket is non-blocking, so the call returns at once, and the runtime
// need not note a system call. Noting one wakes the runtime's monitor
// thread (sysmon) when it sleeps, as it does whenever the proxy is idle,
// that is between an exchange's steps: the thread then polled every 20 µs
// for a while, a sixth of the proxy's CPU per exchange (measured per
// thread under bench/cmd/proxycmp).
//
// It is used by one goroutine at a time for reading and one for writing
// (the connection's own); its fields are the calls' arguments and
// results, so that no closure is made per call.
type rawIO struct {
	c   net.Conn
	raw syscall.RawConn

	rp      []byte
	rn      int
	rerr    error
	readFn  func(uintptr) bool
	wp      []byte
	wn      int
	werr    error
	writeFn func(uintptr) bool
}

// rawConnIO is c's rawIO, or c itself when it has no raw connection.
func rawConnIO(c net.Conn) io.ReadWriter {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return c
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return c
	}
	r := &rawIO{c: c, raw: raw}
	r.readFn, r.writeFn = r.doRead, r.doWrite
	return r
}

func (r *rawIO) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.rp, r.rn, r.rerr = p, 0, nil
	err := r.raw.Read(r.readFn)
	n, rerr := r.rn, r.rerr
	r.rp, r.rerr = nil, nil
	if err != nil {
		return n, r.opError("read", err)
	}
	return n, rerr
}

func (r *rawIO) doRead(fd uintptr) bool {
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&r.rp[0])), uintptr(len(r.rp)))
		switch {
		case e == syscall.EINTR:
			continue
		case e == syscall.EAGAIN:
			return false // the poller waits for the next bytes
		case e != 0:
			r.rerr = r.opError("read", os.NewSyscallError("read", e))
		case n == 0:
			r.rerr = io.EOF
		default:
			r.rn = int(n)
		}
		return true
	}
}

func (r *rawIO) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.wp, r.wn, r.werr = p, 0, nil
	err := r.raw.Write(r.writeFn)
	n, werr := r.wn, r.werr
	r.wp, r.werr = nil, nil
	if err != nil {
		return n, r.opError("write", err)
	}
	return n, werr
}

func (r *rawIO) doWrite(fd uintptr) bool {
	for r.wn < len(r.wp) {
		rest := r.wp[r.wn:]
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&rest[0])), uintptr(len(rest)))
		switch {
		case e == syscall.EINTR:
			continue
		case e == syscall.EAGAIN:
			return false // the poller waits for room
		case e != 0:
			r.werr = r.opError("write", os.NewSyscallError("write", e))
			return true
		}
		r.wn += int(n)
	}
	return true
}

// opError is err as net.Conn's Read or Write would give it: a
// *net.OpError with op (the raw connection's own say "raw-read").
func (r *rawIO) opError(op string, err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) {
		err = oe.Err
	}
	return &net.OpError{Op: op, Net: r.c.LocalAddr().Network(), Source: r.c.LocalAddr(), Addr: r.c.RemoteAddr(), Err: err}
}

//go:build unix

package faultproxy

import (
	"net"
	"syscall"
)

// fixedRecvBuffer sets upstreamRecvBuffer on a new upstream socket.
func fixedRecvBuffer(_, _ string, c syscall.RawConn) error {
	var serr error
	if err := c.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, upstreamRecvBuffer)
	}); err != nil {
		return err
	}
	return serr
}

// connAlive checks, without blocking, that an idle upstream connection
// has not been closed by the server: nothing to read (EAGAIN) is alive;
// end of file, an error or unexpected bytes are not.
func connAlive(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return true
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	alive := false
	err = raw.Read(func(fd uintptr) bool {
		var b [1]byte
		n, _, rerr := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		_ = n
		alive = rerr == syscall.EAGAIN || rerr == syscall.EWOULDBLOCK
		return true
	})
	return err == nil && alive
}

// clientGone checks, without blocking, whether the client closed (or
// reset) a connection the proxy is not reading: end of file or an error;
// nothing to read (EAGAIN) or bytes of a next request are not.
func clientGone(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	gone := false
	err = raw.Read(func(fd uintptr) bool {
		var b [1]byte
		n, _, rerr := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		gone = (n == 0 && rerr == nil) || (rerr != nil && rerr != syscall.EAGAIN && rerr != syscall.EWOULDBLOCK && rerr != syscall.EINTR)
		return true
	})
	return err != nil || gone
}

// awaitConn is c's raw connection, for upConn.sendAwait's wait for the
// answer without a read first; nil when c has none.
func awaitConn(c net.Conn) syscall.RawConn {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return raw
}

//go:build unix

package faultproxy

import "syscall"

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

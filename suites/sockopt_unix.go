//go:build unix

package suites

import "syscall"

// setRecvBuffer sets the receive buffer of the socket fd to n bytes.
func setRecvBuffer(fd uintptr, n int) error {
	return syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, n)
}

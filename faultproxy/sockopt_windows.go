//go:build windows

package faultproxy

import (
	"net"
	"syscall"
)

// fixedRecvBuffer sets upstreamRecvBuffer on a new upstream socket.
func fixedRecvBuffer(_, _ string, c syscall.RawConn) error {
	var serr error
	if err := c.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(syscall.Handle(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, upstreamRecvBuffer)
	}); err != nil {
		return err
	}
	return serr
}

// connAlive reports an idle upstream connection as alive: Windows has no
// non-blocking peek here, so a connection the server closed is found out by
// the next write, as net/http's transport finds it out.
func connAlive(net.Conn) bool { return true }

// clientGone reports a client as present: without a non-blocking peek the
// proxy learns that a client closed its connection when a write to it
// fails, not before (a 2026-07-28 stream close then reaches the server at
// the next event the proxy relays).
func clientGone(net.Conn) bool { return false }

// awaitConn is nil: on Windows an upstream request is written, and its
// answer read, as on any net.Conn (upConn.sendAwait).
func awaitConn(net.Conn) syscall.RawConn { return nil }

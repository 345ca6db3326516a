//go:build !linux

package faultproxy

import (
	"io"
	"net"
)

// rawConnIO is c: the raw reads and writes of rawio_linux.go are Linux's.
func rawConnIO(c net.Conn) io.ReadWriter { return c }

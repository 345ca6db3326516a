//go:build !linux

package procnet

import (
	"errors"
	"fmt"
	"runtime"
)

// errNoProc is why Listening and GroupSockets cannot work here.
var errNoProc = fmt.Errorf("procnet: which addresses a server listens on is read from Linux's /proc/net/tcp and /proc/PID/fd: %w on %s", errors.ErrUnsupported, runtime.GOOS)

// Listening returns the listening sockets on port. Outside Linux there is
// no /proc/net to read: it returns an error wrapping errors.ErrUnsupported.
func Listening(port uint16) ([]Listener, error) { return nil, errNoProc }

// GroupSockets returns the inodes of the sockets that the processes of
// process group pgid hold open. Outside Linux it returns an error wrapping
// errors.ErrUnsupported.
func GroupSockets(pgid int) (map[uint64]bool, error) { return nil, errNoProc }

// Package procnet reads the Linux kernel's TCP socket tables
// (/proc/net/tcp and /proc/net/tcp6) and the file descriptors of a process
// group, to tell on which addresses a server the harness started listens.
//
// ParseTCP works everywhere; Listening and GroupSockets read the live /proc
// and work on Linux only: elsewhere they return an error wrapping
// errors.ErrUnsupported that says so.
package procnet

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
)

// stateListen is the kernel's code for a socket in the LISTEN state.
const stateListen = "0A"

// Listener is one listening TCP socket.
type Listener struct {
	// Addr is the local address and port; an unspecified address
	// (0.0.0.0 or ::) means every interface.
	Addr netip.AddrPort
	// Inode identifies the socket (the target of a /proc/PID/fd link
	// "socket:[INODE]").
	Inode uint64
}

// Loopback reports whether the listener accepts loopback connections only.
func (l Listener) Loopback() bool { return l.Addr.Addr().Unmap().IsLoopback() }

// ParseTCP reads a /proc/net/tcp or /proc/net/tcp6 table and returns its
// sockets in the LISTEN state.
func ParseTCP(r io.Reader) ([]Listener, error) {
	var out []Listener
	sc := bufio.NewScanner(r)
	first := true
	for sc.Scan() {
		if first {
			first = false // the header line
			continue
		}
		f := strings.Fields(sc.Text())
		if len(f) < 10 {
			continue
		}
		if f[3] != stateListen {
			continue
		}
		addr, err := parseAddr(f[1])
		if err != nil {
			return nil, fmt.Errorf("procnet: local address %q: %w", f[1], err)
		}
		inode, err := strconv.ParseUint(f[9], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("procnet: inode %q: %w", f[9], err)
		}
		out = append(out, Listener{Addr: addr, Inode: inode})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("procnet: read table: %w", err)
	}
	return out, nil
}

// parseAddr decodes "0100007F:1F90" (IPv4) or a 32-digit IPv6 form: the
// address is in the host's (little-endian) byte order 32 bits at a time,
// the port in big-endian hex.
func parseAddr(s string) (netip.AddrPort, error) {
	host, port, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, errors.New("no port")
	}
	p, err := strconv.ParseUint(port, 16, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("port: %w", err)
	}
	b, err := hex.DecodeString(host)
	if err != nil || (len(b) != 4 && len(b) != 16) {
		return netip.AddrPort{}, fmt.Errorf("address of %d bytes: %v", len(b), err)
	}
	for i := 0; i < len(b); i += 4 {
		b[i], b[i+1], b[i+2], b[i+3] = b[i+3], b[i+2], b[i+1], b[i]
	}
	a, _ := netip.AddrFromSlice(b)
	return netip.AddrPortFrom(a, uint16(p)), nil
}

// Root is the proc file system read by Listening and GroupSockets.
var Root = "/proc"

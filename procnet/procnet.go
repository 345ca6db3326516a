// Package procnet reads the Linux kernel's TCP socket tables
// (/proc/net/tcp and /proc/net/tcp6) and the file descriptors of a process
// group, to tell on which addresses a server the harness started listens.
package procnet

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
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

// Listening returns the listening sockets on port, IPv4 and IPv6. It fails
// when neither table can be read (not Linux).
func Listening(port uint16) ([]Listener, error) {
	var out []Listener
	read := 0
	for _, name := range []string{"net/tcp", "net/tcp6"} {
		f, err := os.Open(filepath.Join(Root, name))
		if err != nil {
			continue
		}
		ls, err := ParseTCP(f)
		f.Close()
		if err != nil {
			return nil, err
		}
		read++
		for _, l := range ls {
			if l.Addr.Port() == port {
				out = append(out, l)
			}
		}
	}
	if read == 0 {
		return nil, fmt.Errorf("procnet: no socket table under %s (not Linux?)", Root)
	}
	return out, nil
}

// GroupSockets returns the inodes of the sockets that the processes of
// process group pgid hold open. Processes whose descriptors cannot be read
// are left out.
func GroupSockets(pgid int) (map[uint64]bool, error) {
	entries, err := os.ReadDir(Root)
	if err != nil {
		return nil, fmt.Errorf("procnet: %w", err)
	}
	out := map[uint64]bool{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || processGroup(pid) != pgid {
			continue
		}
		fds, err := os.ReadDir(filepath.Join(Root, e.Name(), "fd"))
		if err != nil {
			continue
		}
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join(Root, e.Name(), "fd", fd.Name()))
			if err != nil {
				continue
			}
			if s, ok := strings.CutPrefix(link, "socket:["); ok {
				if n, err := strconv.ParseUint(strings.TrimSuffix(s, "]"), 10, 64); err == nil {
					out[n] = true
				}
			}
		}
	}
	return out, nil
}

// processGroup returns the process group of pid from /proc/PID/stat, or -1.
func processGroup(pid int) int {
	b, err := os.ReadFile(filepath.Join(Root, strconv.Itoa(pid), "stat"))
	if err != nil {
		return -1
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 3 {
		return -1
	}
	pg, err := strconv.Atoi(f[2])
	if err != nil {
		return -1
	}
	return pg
}

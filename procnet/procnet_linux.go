package procnet

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

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

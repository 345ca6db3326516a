package procnet_test

import (
	"net"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/mcp-conform/mcp-conform/procnet"
)

// TestListeningAndGroupSockets finds this test's own listeners (it is its
// own process group's member) on the live /proc.
func TestListeningAndGroupSockets(t *testing.T) {
	if _, err := os.Stat("/proc/net/tcp"); err != nil {
		t.Skip("no /proc/net/tcp (not Linux)")
	}
	for _, addr := range []string{"127.0.0.1:0", ":0"} {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		port := uint16(ln.Addr().(*net.TCPAddr).Port)
		ls, err := procnet.Listening(port)
		if err != nil {
			t.Fatal(err)
		}
		own, err := procnet.GroupSockets(syscall.Getpgrp())
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, l := range ls {
			if own[l.Inode] {
				found = true
				if want := addr == "127.0.0.1:0"; l.Loopback() != want {
					t.Errorf("%s: %s Loopback() = %v, want %v", addr, l.Addr, l.Loopback(), want)
				}
			}
		}
		if !found {
			t.Errorf("%s: no listener of this process group on port %d among %v", addr, port, ls)
		}
		ln.Close()
	}
}

// TestListeningWithoutTables fails clearly when the proc file system has
// no socket table.
func TestListeningWithoutTables(t *testing.T) {
	old := procnet.Root
	procnet.Root = t.TempDir()
	defer func() { procnet.Root = old }()
	_, err := procnet.Listening(80)
	if err == nil || !strings.Contains(err.Error(), "no socket table") {
		t.Fatalf("Listening with an empty root: %v, want a 'no socket table' error", err)
	}
}

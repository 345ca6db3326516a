//go:build unix

package faultproxy

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// The signals the proxy sends. On Unix they are the POSIX signals.
const (
	sigStop = syscall.SIGSTOP
	sigCont = syscall.SIGCONT
)

// setProcessGroup makes cmd start in a process group of its own, so that a
// signal to the group reaches every process the server starts.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends sig to the process group pgid (led by p). A group that
// is already gone is not an error.
func signalGroup(_ *os.Process, pgid int, sig Signal) error {
	if err := syscall.Kill(-pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("faultproxy: signal %v to group %d: %w", sig, pgid, err)
	}
	return nil
}

// setRecvBuffer sets the receive buffer of the socket fd to n bytes.
func setRecvBuffer(fd uintptr, n int) error {
	return syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, n)
}

//go:build unix

package faultproxy

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// The signals the proxy sends: crash kills, pause stops and continues,
// Close terminates.
const (
	sigKill = syscall.SIGKILL
	sigTerm = syscall.SIGTERM
	sigStop = syscall.SIGSTOP
	sigCont = syscall.SIGCONT
)

// ownProcessGroup makes cmd the leader of a new process group, so that a
// signal to the group reaches every process the server starts.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends sig to the process group pgid (led by p); a group that
// is gone already is no error.
func signalGroup(_ *os.Process, pgid int, sig Signal) error {
	if err := syscall.Kill(-pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("faultproxy: signal %v to group %d: %w", sig, pgid, err)
	}
	return nil
}

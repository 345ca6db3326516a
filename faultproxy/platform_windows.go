//go:build windows

package faultproxy

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// The signals the proxy sends. Windows has neither SIGSTOP nor SIGCONT;
// these values only name them in the error that refuses them (they are the
// Linux numbers).
const (
	sigKill = syscall.SIGKILL
	sigTerm = syscall.SIGTERM
	sigStop = Signal(0x13)
	sigCont = Signal(0x12)
)

// ownProcessGroup starts cmd in a new process group, so a Ctrl+C at the
// proxy's console does not reach the server. Windows cannot signal that
// group: see signalGroup.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// signalGroup is what Windows can do of a signal to the server's process
// group: SIGKILL and SIGTERM terminate the server process itself
// (TerminateProcess; there is no graceful stop to ask for), which is what
// the crash fault and Close need from a server that is one process.
// Processes it started on its own (the node a launcher such as npx runs)
// are not reached: Windows has no process group to signal. Every other
// signal is refused with an error naming it: the pause fault (SIGSTOP,
// SIGCONT) needs a Unix system.
func signalGroup(p *os.Process, pgid int, sig Signal) error {
	if sig != sigKill && sig != sigTerm {
		return fmt.Errorf("faultproxy: %s to the server (pid %d): %w on windows: Windows has no POSIX signals "+
			"(the pause fault needs SIGSTOP and SIGCONT; run it on Linux or macOS)", sigName(sig), pgid, errors.ErrUnsupported)
	}
	if p == nil {
		return fmt.Errorf("faultproxy: kill pid %d: no process", pgid)
	}
	if err := p.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("faultproxy: terminate pid %d: %w", pgid, err)
	}
	return nil
}

// sigName names sig, SIGSTOP and SIGCONT included.
func sigName(sig Signal) string {
	switch sig {
	case sigStop:
		return "SIGSTOP"
	case sigCont:
		return "SIGCONT"
	}
	return "signal " + sig.String()
}

//go:build unix

package clientgrade

import (
	"os/exec"
	"syscall"
)

// shellCommand runs line through the shell, as the driver contract says
// (/bin/sh -c), in a process group of its own.
func shellCommand(line string) *exec.Cmd {
	cmd := exec.Command("/bin/sh", "-c", line)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// signalGroup sends sig to the process group led by pid.
func signalGroup(pid int, sig syscall.Signal) error { return syscall.Kill(-pid, sig) }

//go:build windows

package clientgrade

import (
	"os"
	"os/exec"
	"syscall"
)

// shellCommand runs line through cmd.exe /C (Windows has no /bin/sh), in a
// new process group.
func shellCommand(line string) *exec.Cmd {
	cmd := exec.Command("cmd.exe", "/C", line)
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
	return cmd
}

// signalGroup terminates the process pid: Windows has no signals to send
// to a group, so SIGTERM and SIGKILL both end that process only (not the
// processes it started).
func signalGroup(pid int, _ syscall.Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

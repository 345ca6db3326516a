// Package piped starts the child processes of the benchmark commands with
// their stdin and stdout piped to the caller.
package piped

import (
	"io"
	"os/exec"
)

// Start starts argv with its stdin and stdout piped to the caller and its
// stderr into stderr (discarded when nil). The caller waits for cmd.
func Start(argv []string, stderr io.Writer) (cmd *exec.Cmd, in io.WriteCloser, out io.ReadCloser, err error) {
	cmd = exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = stderr
	if in, err = cmd.StdinPipe(); err != nil {
		return nil, nil, nil, err
	}
	if out, err = cmd.StdoutPipe(); err != nil {
		return nil, nil, nil, err
	}
	if err = cmd.Start(); err != nil {
		return nil, nil, nil, err
	}
	return cmd, in, out, nil
}

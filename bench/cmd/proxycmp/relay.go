//go:build unix

package main

import (
	"bufio"
	"errors"
	"io"
	"os"
	"sync"

	"github.com/mcp-conform/mcp-conform/bench/internal/piped"
)

// runRelay is the floor of a stdio proxy: a plain Go process that starts
// CMD and copies lines between its own stdin/stdout and CMD's, one write
// per line, without parsing or recording anything. It ends when its stdin
// closes and CMD exits.
func runRelay(args []string) error {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		return errors.New("relay: give a command after --")
	}
	cmd, in, out, err := piped.Start(args, os.Stderr)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); relayLines(in, os.Stdin); _ = in.Close() }()
	go func() { defer wg.Done(); relayLines(os.Stdout, out) }()
	wg.Wait()
	return cmd.Wait()
}

func relayLines(w io.Writer, r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			if _, werr := w.Write(line); werr != nil {
				return
			}
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

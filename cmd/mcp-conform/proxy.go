package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/mcp-conform/mcp-conform/faultproxy"
)

func newProxyCmd() *cobra.Command {
	var transcript, faults string
	var maxFrame int
	cmd := &cobra.Command{
		Use:   "proxy [flags] -- SERVER-COMMAND [ARGS...]",
		Short: "Run the fault proxy alone in front of a stdio MCP server",
		Long: `Start SERVER-COMMAND as a child process and stand between it and this process's
own stdin/stdout: point a real client (an IDE, an agent) at "mcp-conform proxy -- CMD"
instead of CMD. Every message is recorded to the transcript (JSONL) and the rules of
the fault file are applied. The server's stderr is passed through and recorded.

Fault file (YAML):
  rules:
    - name: lose-first-tools-call-response
      match: {dir: s2c, kind: response, repliesTo: tools/call}
      nth: 1
      fault: {drop: true}
Faults: drop, delay, holdUntil (+max), duplicate, inject (+injectDir, before, replace),
crash (+deliverFirst), pause, pass. Ids are JSON values: id: 3 is the number, id: "3" the string.`,
		Example: `  mcp-conform proxy --transcript /tmp/t.jsonl --faults drop.yaml -- node server.js stdio`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var rules []faultproxy.Rule
			if faults != "" {
				data, err := os.ReadFile(faults)
				if err != nil {
					return usageError{fmt.Errorf("--faults: %w", err)}
				}
				if rules, err = faultproxy.ParseRules(data); err != nil {
					return usageError{err}
				}
			}
			var sink io.Writer
			if transcript != "" {
				f, err := os.Create(transcript)
				if err != nil {
					return fmt.Errorf("transcript: %w", err)
				}
				defer f.Close()
				sink = f
			}
			return runProxy(cmd.Context(), args, rules, sink, maxFrame)
		},
	}
	cmd.Flags().StringVar(&transcript, "transcript", "", "write every message and fault to this JSONL file")
	cmd.Flags().StringVar(&faults, "faults", "", "rule file (YAML) of faults to apply")
	cmd.Flags().IntVar(&maxFrame, "max-frame", faultproxy.DefaultMaxFrame, "largest message parsed; longer ones pass through unparsed")
	return cmd
}

func runProxy(ctx context.Context, argv []string, rules []faultproxy.Rule, sink io.Writer, maxFrame int) error {
	if ctx == nil {
		ctx = context.Background()
	}
	rs := faultproxy.NewRules()
	if err := rs.Set(rules...); err != nil {
		return usageError{err}
	}
	s, err := faultproxy.StartStdio(ctx, faultproxy.StdioOptions{
		Options: faultproxy.Options{TranscriptSink: sink, MaxFrame: maxFrame},
		Command: argv, Rules: rs, ClientIn: os.Stdin, ClientOut: os.Stdout, StderrTee: os.Stderr,
	})
	if err != nil {
		return err
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	select {
	case <-s.Exited():
		// Let the server's last messages reach the client.
		<-s.Done(faultproxy.ServerToClient)
	case <-s.Done(faultproxy.ClientToServer):
	case <-sigs:
	}
	_ = s.Close()
	if err := s.ExitErr(); err != nil {
		fmt.Fprintf(os.Stderr, "mcp-conform proxy: server %v\n", err)
	}
	return nil
}

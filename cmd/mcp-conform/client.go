package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/mcp-conform/mcp-conform/internal/clientgrade"
	"github.com/mcp-conform/mcp-conform/internal/reliabledriver"
)

func newClientCmd() *cobra.Command {
	f := clientgrade.CLIOptions{ToolVersion: version}
	cmd := &cobra.Command{
		Use:     "client --command \"CMD ARGS\"",
		Short:   "Grade a real MCP client: run its driver against each scenario and judge what it sends",
		Long:    help("client.txt"),
		Example: help("client.example.txt"),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return exit(clientgrade.RunCLI(cmd.Context(), f, cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	f.Register(cmd.Flags())
	return cmd
}

// newServeScenarioCmd is the hidden server side of a stdio run: the command
// line a client under test is given in MCP_CONFORM_SERVER.
func newServeScenarioCmd() *cobra.Command {
	var o clientgrade.ServeOptions
	cmd := &cobra.Command{
		Use:    clientgrade.ServeCommand,
		Short:  "Serve one client scenario on stdio, behind the fault proxy (started by the client under test)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.In, o.Out, o.Signals = os.Stdin, os.Stdout, clientgrade.NotifySignals()
			return exit(clientgrade.ServeScenario(cmd.Context(), o), nil)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Scenario, "scenario", "", "scenario name")
	fl.StringVar(&o.Version, "version", "", "protocol version")
	fl.StringVar(&o.Report, "report", "", "the grader's transcript socket (host:port)")
	fl.StringVar(&o.Token, "token", "", "the run's token")
	fl.Float64Var(&o.Scale, "scale", 1, "time scale")
	return cmd
}

// newReliableDriverCmd is the driver of clients/reliable.
func newReliableDriverCmd() *cobra.Command {
	return &cobra.Command{
		Use:                "reliable-driver [--mutant NAME] [--list] [URL]",
		Short:              "The client-mode driver of mcp-conform's own reliable client (docs/CLIENT-DRIVERS.md)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return exit(reliabledriver.Main(cmd.Context(), args, os.Getenv, cmd.OutOrStdout(), cmd.ErrOrStderr()), nil)
		},
	}
}
